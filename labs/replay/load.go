package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/recorder"
)

// loadStep is one kind a load creates, in the order it creates them: what an object refers
// to (its owner, its NodePool, its namespace) exists before it.
type loadStep struct {
	kind       string
	gvr        schema.GroupVersionResource
	namespaced bool
	// status is written through /status after the create (which drops it).
	status bool
}

var loadSteps = []loadStep{
	{"Namespace", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false, false},
	{"PriorityClass", schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}, false, false},
	{"EC2NodeClass", schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}, false, true},
	{"NodePool", schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}, false, true},
	{"NodeClaim", schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}, false, true},
	{"Node", schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, false, true},
	{"CSINode", schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"}, false, false},
	{"PodDisruptionBudget", schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true, true},
	{"DaemonSet", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, true, true},
	{"Deployment", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true, true},
	{"StatefulSet", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, true, true},
	{"CronJob", schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, true, true},
	{"ControllerRevision", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}, true, false},
	{"ReplicaSet", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, true, true},
	{"Job", schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, true, true},
	{"ServiceAccount", schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true, false},
	{"Pod", schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true, true},
}

// Annotations a load writes or takes away, as karpenter-provider-aws v1.15.0 reads them.
const (
	nodePoolHashVersion  = "karpenter.sh/nodepool-hash-version"
	nodeClassHashVersion = "karpenter.k8s.aws/ec2nodeclass-hash-version"
	// replayHashVersion is no version Karpenter writes: its hash controllers then recompute
	// the NodeClaims' hashes against the lab (whose CA differs from production's), keeping
	// a NodeClaim that was drifted in production drifted.
	replayHashVersion = "replay"
)

// Loaded is what a load created and what it left out.
type Loaded struct {
	Created map[string]int
	// LeftOut says what was not created, and why (one line each, or a count).
	LeftOut []string
	// Pending are the pods the bundle holds unscheduled, as namespace/name.
	Pending []string
	// UIDs maps each created object's captured UID to its UID in the lab.
	UIDs map[types.UID]types.UID
	Took time.Duration
}

// Load creates the bundle's objects in the lab's cluster with its controllers stopped: in
// dependency order, owner references re-linked to the new UIDs, status written back through
// /status (NodeClaims stay Launched, Registered and Initialized; bound pods stay bound and
// running; pending pods stay pending). It never creates Karpenter's own workload or mirror
// pods; CronJobs are suspended. It stops at the first object the API server refuses, naming
// it: a failed load is the caller's to throw away.
func Load(ctx context.Context, cfg *rest.Config, b *Bundle, status io.Writer) (*Loaded, error) {
	begin := time.Now()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	l := &loader{dyn: dyn, b: b, out: &Loaded{Created: map[string]int{}, UIDs: map[types.UID]types.UID{}}, left: map[string]int{},
		captured: map[*unstructured.Unstructured]types.UID{}}
	plan := l.plan()
	for _, step := range loadSteps {
		objs := plan[step.kind]
		if len(objs) == 0 {
			continue
		}
		if err := l.createAll(ctx, step, objs); err != nil {
			return l.out, err
		}
		fmt.Fprintf(status, "   %d %s\n", len(objs), plural(step.kind, len(objs)))
	}
	for why, n := range l.left {
		l.out.LeftOut = append(l.out.LeftOut, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(l.out.LeftOut)
	sort.Strings(l.out.Pending)
	l.out.Took = time.Since(begin)
	return l.out, nil
}

func plural(kind string, n int) string {
	if n == 1 {
		return kind
	}
	if strings.HasSuffix(kind, "s") {
		return kind + "es"
	}
	return kind + "s"
}

type loader struct {
	dyn  dynamic.Interface
	b    *Bundle
	out  *Loaded
	mu   sync.Mutex
	left map[string]int
	// captured is each prepared object's UID in the bundle (prepare takes it off).
	captured map[*unstructured.Unstructured]types.UID
}

func (l *loader) leave(why string) {
	l.mu.Lock()
	l.left[why]++
	l.mu.Unlock()
}

// plan sorts the bundle's objects by kind, prepared for a create, leaving out what the lab
// must not create, and adds the ServiceAccounts the pods name (the controller that would
// make each namespace's default one is not running yet).
func (l *loader) plan() map[string][]*unstructured.Unstructured {
	plan := map[string][]*unstructured.Unstructured{}
	ec2Nodes := map[string]bool{}
	for _, n := range l.b.ofKind("", "Node") {
		if pid, _, _ := unstructured.NestedString(n.Object, "spec", "providerID"); instanceIDOf(pid) != "" {
			ec2Nodes[n.GetName()] = true
		}
	}
	accounts := map[[2]string]bool{}
	elsewhere := workloadsElsewhere(l.b, ec2Nodes)
	for _, o := range l.b.Objects {
		if elsewhere[o.GetUID()] && o.GetUID() != "" {
			l.leave(o.GetKind() + "s whose pods all ran on nodes the lab does not run (else they would make them again, pending)")
			continue
		}
		if why := l.leftOut(o, ec2Nodes); why != "" {
			l.leave(why)
			continue
		}
		p := prepare(o, l.b.CapturedAt)
		l.captured[p] = o.GetUID()
		plan[o.GetKind()] = append(plan[o.GetKind()], p)
		if o.GetKind() == "Pod" {
			sa, _, _ := unstructured.NestedString(o.Object, "spec", "serviceAccountName")
			accounts[[2]string{o.GetNamespace(), orDefault(sa, "default")}] = true
			accounts[[2]string{o.GetNamespace(), "default"}] = true
		}
	}
	for k := range accounts {
		sa := &unstructured.Unstructured{}
		sa.SetAPIVersion("v1")
		sa.SetKind("ServiceAccount")
		sa.SetNamespace(k[0])
		sa.SetName(k[1])
		plan["ServiceAccount"] = append(plan["ServiceAccount"], sa)
	}
	return plan
}

// workloadsElsewhere are the ReplicaSets, Deployments, StatefulSets and Jobs whose pods all
// ran on nodes the lab does not replay, by UID.
func workloadsElsewhere(b *Bundle, ec2Nodes map[string]bool) map[types.UID]bool {
	away, here := map[types.UID]bool{}, map[types.UID]bool{}
	owners := map[types.UID][]types.UID{}
	for _, o := range b.Objects {
		for _, r := range o.GetOwnerReferences() {
			owners[o.GetUID()] = append(owners[o.GetUID()], r.UID)
		}
	}
	var mark func(uid types.UID, into map[types.UID]bool)
	mark = func(uid types.UID, into map[types.UID]bool) {
		for _, up := range owners[uid] {
			if !into[up] {
				into[up] = true
				mark(up, into)
			}
		}
	}
	for _, p := range b.ofKind("", "Pod") {
		node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		if node != "" && !ec2Nodes[node] {
			mark(p.GetUID(), away)
		} else {
			mark(p.GetUID(), here)
		}
	}
	out := map[types.UID]bool{}
	for uid := range away {
		if !here[uid] {
			out[uid] = true
		}
	}
	for _, o := range b.Objects {
		if out[o.GetUID()] && o.GetKind() == "DaemonSet" {
			delete(out, o.GetUID()) // a DaemonSet's pods follow the nodes the lab has
		}
	}
	return out
}

// leftOut says why o is not created ("" when it is).
func (l *loader) leftOut(o *unstructured.Unstructured, ec2Nodes map[string]bool) string {
	switch o.GetKind() {
	case "Node":
		if !ec2Nodes[o.GetName()] {
			return "Nodes that are not EC2 instances (no aws:/// provider ID): the lab does not run them"
		}
	case "Pod":
		if _, mirror := o.GetAnnotations()["kubernetes.io/config.mirror"]; mirror {
			return "static pods: their kubelet makes them"
		}
		if node, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName"); node != "" && !ec2Nodes[node] {
			return "pods that ran on a node the lab does not run"
		}
		if phase, _, _ := unstructured.NestedString(o.Object, "status", "phase"); phase == "Succeeded" || phase == "Failed" {
			return "finished pods (Succeeded or Failed)"
		}
	case "CSINode":
		if !ec2Nodes[o.GetName()] {
			return "CSINodes of nodes not replayed"
		}
	}
	if isKarpenterWorkload(o) {
		return "objects of Karpenter's own workload: the lab runs Karpenter v1.15.0 itself"
	}
	if o.GetNamespace() == "" && o.GetKind() == "PriorityClass" && strings.HasPrefix(o.GetName(), "system-") {
		return "built-in PriorityClasses, kept as the lab has them"
	}
	if o.GetKind() == "Namespace" && isBuiltinNamespace(o.GetName()) {
		return "built-in namespaces, kept as the lab has them"
	}
	return ""
}

func isBuiltinNamespace(n string) bool {
	return n == "default" || n == "kube-system" || n == "kube-public" || n == "kube-node-lease"
}

// isKarpenterWorkload reports whether o is Karpenter's controller (its Deployment, its
// ReplicaSets and pods), by the labels its Helm chart sets.
func isKarpenterWorkload(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case "Deployment", "ReplicaSet", "Pod", "PodDisruptionBudget":
	default:
		return false
	}
	l := o.GetLabels()
	if o.GetKind() == "Deployment" {
		return isKarpenter(o)
	}
	return l["app.kubernetes.io/name"] == "karpenter" && l["app.kubernetes.io/instance"] != ""
}

// prepare is o as a create sends it: what the API server sets is taken off, and what
// Karpenter would otherwise redo against the lab is marked done.
func prepare(o *unstructured.Unstructured, capturedAt time.Time) *unstructured.Unstructured {
	p := o.DeepCopy()
	created := o.GetCreationTimestamp()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(p.Object, "metadata", f)
	}
	ann := p.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[recorder.ReplayedAnnotation] = capturedAt.UTC().Format(time.RFC3339)
	if !created.IsZero() {
		ann[recorder.CapturedCreatedAnnotation] = created.UTC().Format(time.RFC3339)
	}
	switch p.GetKind() {
	case "EC2NodeClass":
		delete(ann, nodeClassHashVersion)
	case "NodePool":
		delete(ann, nodePoolHashVersion)
	case "NodeClaim":
		ann[nodeClassHashVersion], ann[nodePoolHashVersion] = replayHashVersion, replayHashVersion
		// What the provider's tagging controller writes once it has tagged the instance
		// (the import carries the tags).
		ann["karpenter.k8s.aws/tagged"] = "true"
		ann["compatibility.karpenter.k8s.aws/cluster-name-tagged"] = "true"
	case "CronJob":
		unstructured.SetNestedField(p.Object, true, "spec", "suspend")
	case "Pod":
		if node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName"); node == "" {
			// Pending in production: the lab's scheduler and Karpenter decide anew.
			unstructured.RemoveNestedField(p.Object, "status")
			unstructured.RemoveNestedField(p.Object, "spec", "nominatedNodeName")
		}
	}
	p.SetAnnotations(ann)
	return p
}

// createAll creates one kind's objects, a few at a time.
func (l *loader) createAll(ctx context.Context, step loadStep, objs []*unstructured.Unstructured) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *unstructured.Unstructured)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for o := range work {
				if err := l.create(ctx, step, o); err != nil {
					select {
					case errs <- err:
					default:
					}
					cancel()
				}
			}
		})
	}
	for _, o := range objs {
		select {
		case work <- o:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// create creates one object, then writes its captured status.
func (l *loader) create(ctx context.Context, step loadStep, o *unstructured.Unstructured) error {
	oldUID := l.captured[o]
	l.relink(o)
	var ri dynamic.ResourceInterface = l.dyn.Resource(step.gvr)
	if step.namespaced {
		ri = l.dyn.Resource(step.gvr).Namespace(o.GetNamespace())
	}
	status, hasStatus := o.Object["status"]
	made, err := ri.Create(ctx, o, metav1.CreateOptions{FieldManager: "karplab-replay"})
	if apierrors.IsAlreadyExists(err) && (step.kind == "ServiceAccount" || step.kind == "Namespace" || step.kind == "PriorityClass") {
		return nil // the lab's own
	}
	if err != nil {
		return fmt.Errorf("creating %s %s: %w", step.kind, name(o), err)
	}
	if hasStatus && step.status {
		made.Object["status"] = status
		if made, err = ri.UpdateStatus(ctx, made, metav1.UpdateOptions{FieldManager: "karplab-replay"}); err != nil {
			return fmt.Errorf("writing the status of %s %s: %w", step.kind, name(o), err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out.Created[step.kind]++
	if oldUID != "" {
		l.out.UIDs[oldUID] = made.GetUID()
	}
	if step.kind == "Pod" && !hasStatus {
		l.out.Pending = append(l.out.Pending, o.GetNamespace()+"/"+o.GetName())
	}
	return nil
}

// relink points o's owner references at its owners' UIDs in the lab; a reference to an
// owner the replay did not create is dropped (the garbage collector would delete o).
func (l *loader) relink(o *unstructured.Unstructured) {
	refs := o.GetOwnerReferences()
	if len(refs) == 0 {
		return
	}
	l.mu.Lock()
	var kept []metav1.OwnerReference
	for _, r := range refs {
		if uid, ok := l.out.UIDs[r.UID]; ok {
			r.UID = uid
			kept = append(kept, r)
		}
	}
	l.mu.Unlock()
	if len(kept) < len(refs) {
		l.leave("owner references to owners not replayed (dropped)")
	}
	o.SetOwnerReferences(kept)
}

// KarpenterEnv is the settings the bundle's Karpenter Deployment ran with that change its
// decisions (the env of its controller container), by name.
func KarpenterEnv(b *Bundle) map[string]string {
	out := map[string]string{}
	if b.Karpenter == nil {
		return out
	}
	containers, _, _ := unstructured.NestedSlice(b.Karpenter.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		env, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
		for _, e := range env {
			m, _ := e.(map[string]any)
			if n := str(m["name"]); karpenterSettings[n] {
				out[n] = str(m["value"])
			}
		}
	}
	return out
}

// ClusterName is the EKS cluster the bundle was captured from: Karpenter's CLUSTER_NAME,
// else the instances' eks:eks-cluster-name tag, else the nodes' kubernetes.io/cluster/ tag.
func ClusterName(b *Bundle) (string, error) {
	if n := KarpenterEnv(b)["CLUSTER_NAME"]; n != "" {
		return n, nil
	}
	for _, in := range b.AWS.Instances {
		for _, t := range in.Tags {
			if t.Key != nil && *t.Key == "eks:eks-cluster-name" && t.Value != nil {
				return *t.Value, nil
			}
		}
	}
	for _, in := range b.AWS.Instances {
		for _, t := range in.Tags {
			if t.Key != nil && strings.HasPrefix(*t.Key, "kubernetes.io/cluster/") {
				return strings.TrimPrefix(*t.Key, "kubernetes.io/cluster/"), nil
			}
		}
	}
	return "", errors.New("the bundle does not name its EKS cluster (no karpenter.yaml with CLUSTER_NAME, no aws/instances.json with an eks:eks-cluster-name tag): name it with --cluster-name")
}
