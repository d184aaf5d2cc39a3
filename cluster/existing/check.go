package existing

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The Kubernetes minors karpenter-provider-aws v1.15.0 supports (its compatibility matrix).
const (
	MinMinor = 26
	MaxMinor = 37
)

// KarpenterCRDs are the definitions whose presence, unless the lab made them, means the
// cluster has a Karpenter of its own.
var KarpenterCRDs = []string{"nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"}

// access is one right the lab needs, as `kubectl auth can-i VERB RESOURCE` asks it.
type access struct {
	verb, group, resource, subresource, namespace, why string
}

func (a access) String() string {
	r := a.resource
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.group != "" {
		r += "." + a.group
	}
	if a.namespace != "" {
		return a.verb + " " + r + " in " + a.namespace
	}
	return a.verb + " " + r
}

// needed is what the lab does on the cluster: install definitions and its namespace, run
// Karpenter (NodeClaims, Nodes, evictions, events), simulate kubelets (Nodes, Leases, pod
// status), serve the metrics API, and remove it all again.
var needed = []access{
	{verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", why: "Karpenter's CRDs"},
	{verb: "delete", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", why: "stop --uninstall"},
	{verb: "create", resource: "namespaces", why: "the lab's namespace"},
	{verb: "delete", resource: "namespaces", why: "reset"},
	{verb: "create", resource: "services", namespace: "kube-system", why: "kube-dns"},
	{verb: "create", resource: "nodes", why: "the simulated kubelet"},
	{verb: "delete", resource: "nodes", why: "Karpenter's termination"},
	{verb: "patch", resource: "nodes", subresource: "status", why: "the simulated kubelet"},
	{verb: "patch", resource: "pods", subresource: "status", why: "the simulated kubelet"},
	{verb: "create", resource: "pods", subresource: "eviction", why: "Karpenter's drain"},
	{verb: "watch", resource: "pods", why: "Karpenter and the recorder"},
	{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "kube-node-lease", why: "node heartbeats"},
	{verb: "create", group: "karpenter.sh", resource: "nodeclaims", why: "Karpenter"},
	{verb: "create", resource: "events", namespace: "default", why: "Karpenter's events"},
}

// Check tells whether the lab can run on the cluster cfg reaches, returning its version. Each
// failure is one line that says what is wrong and what to do.
func Check(ctx context.Context, cfg *rest.Config, recorded func(resource, name, uid string) bool) (string, error) {
	quick, kube, v, err := connect(cfg)
	if err != nil {
		return "", err
	}
	minor, err := strconv.Atoi(strings.TrimRight(v.Minor, "+"))
	if v.Major != "1" || err != nil || minor < MinMinor || minor > MaxMinor {
		return "", fmt.Errorf("the cluster runs Kubernetes %s; karpenter-provider-aws v1.15.0 supports 1.%d to 1.%d: use a cluster within that range", v.GitVersion, MinMinor, MaxMinor)
	}
	if err := checkAccess(ctx, kube); err != nil {
		return "", err
	}
	dyn, err := dynamic.NewForConfig(quick)
	if err != nil {
		return "", err
	}
	return v.GitVersion, checkNoKarpenter(ctx, kube, dyn, recorded)
}

// connect makes a client of cfg's cluster that gives up after the checks' short timeout
// (its config too) and asks the cluster its version; a failure says what to do.
func connect(cfg *rest.Config) (*rest.Config, kubernetes.Interface, *version.Info, error) {
	quick := rest.CopyConfig(cfg)
	quick.Timeout = 10 * time.Second
	kube, err := kubernetes.NewForConfig(quick)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the kubeconfig for %s: %s", cfg.Host, oneLine(err))
	}
	v, err := kube.Discovery().ServerVersion()
	switch {
	case apierrors.IsUnauthorized(err):
		return nil, nil, nil, fmt.Errorf("the cluster at %s refused the kubeconfig's credentials (Unauthorized): use a kubeconfig whose user can sign in", cfg.Host)
	case err != nil:
		return nil, nil, nil, fmt.Errorf("cannot reach the cluster at %s: %s; check --kubeconfig and --context, and that the cluster runs", cfg.Host, oneLine(err))
	}
	return quick, kube, v, nil
}

func checkAccess(ctx context.Context, kube kubernetes.Interface) error {
	var missing []string
	for _, a := range needed {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: a.verb, Group: a.group, Resource: a.resource,
				Subresource: a.subresource, Namespace: a.namespace},
		}}
		got, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("asking the cluster what the kubeconfig's user may do: %s", oneLine(err))
		}
		if !got.Status.Allowed {
			missing = append(missing, a.String()+" ("+a.why+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the kubeconfig's user may not %s: the lab installs Karpenter and simulates nodes, so use a kubeconfig with cluster-admin rights (kubectl auth can-i '*' '*' says yes)", strings.Join(missing, ", "))
	}
	return nil
}

var (
	crdsGVR   = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// checkNoKarpenter fails when a Karpenter runs on the cluster (its pods or a fresh leader
// lease) or its CRDs are there and are not the lab's: the lab's Karpenter would take over
// the same NodePools and definitions.
func checkNoKarpenter(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, recorded func(resource, name, uid string) bool) error {
	const fix = "two Karpenters would act on the same NodePools: use a cluster without Karpenter, or uninstall it first"
	pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=karpenter"})
	if err != nil {
		return fmt.Errorf("looking for Karpenter pods: %s", oneLine(err))
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != "Succeeded" && p.Status.Phase != "Failed" {
			return fmt.Errorf("karpenter already runs on the cluster (pod %s/%s): %s", p.Namespace, p.Name, fix)
		}
	}
	leases, err := dyn.Resource(leasesGVR).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=karpenter-leader-election"})
	if err != nil {
		return fmt.Errorf("looking for Karpenter's leader lease: %s", oneLine(err))
	}
	for _, l := range leases.Items {
		renewed, _, _ := unstructured.NestedString(l.Object, "spec", "renewTime")
		if t, err := time.Parse(time.RFC3339Nano, renewed); err == nil && time.Since(t) < 2*time.Minute {
			holder, _, _ := unstructured.NestedString(l.Object, "spec", "holderIdentity")
			return fmt.Errorf("karpenter already runs on the cluster (lease %s/%s held by %s): %s", l.GetNamespace(), l.GetName(), holder, fix)
		}
	}
	for _, name := range KarpenterCRDs {
		crd, err := dyn.Resource(crdsGVR).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("looking for Karpenter's CRDs: %s", oneLine(err))
		}
		if recorded == nil || !recorded("customresourcedefinitions", name, string(crd.GetUID())) {
			return fmt.Errorf("the cluster already has Karpenter's CRD %s, not installed by this lab: %s", name, fix)
		}
	}
	return nil
}
