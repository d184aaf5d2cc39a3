package karpenter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/karplab/karplab/fakeec2/trail"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awsutils "github.com/aws/karpenter-provider-aws/pkg/utils"
)

var (
	nodePoolGVR  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClaimGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	nodeClassGVR = schema.GroupVersionResource{Group: awsapis.Group, Version: "v1", Resource: "ec2nodeclasses"}
)

// waitFor polls cond every interval until it holds or timeout passes; the last
// explanation cond gave is the failure message.
func waitFor(t testing.TB, timeout, interval time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	var why string
	for {
		ok, w := cond()
		if ok {
			return time.Since(start)
		}
		why = w
		if time.Since(start) > timeout {
			t.Fatalf("%s: not after %s: %s", what, timeout, why)
		}
		time.Sleep(interval)
	}
}

// applySeed applies the course's NodePool and EC2NodeClass exactly as written (server-side
// apply, as `kubectl apply --server-side` would), and waits until both are Ready (the
// provider resolves subnets, security groups, AMIs, the instance profile and its DryRun
// validation first).
func (e *testEnv) applySeed(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile("testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding the seed: %v", err)
		}
		gvr := nodePoolGVR
		if obj.GetKind() == "EC2NodeClass" {
			gvr = nodeClassGVR
		}
		body, _ := json.Marshal(obj.Object)
		if _, err := e.dyn.Resource(gvr).Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "kubectl", Force: new(true)}); err != nil {
			t.Fatalf("applying the seed %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	waitFor(t, 2*time.Minute, 250*time.Millisecond, "seed NodePool and EC2NodeClass Ready", func() (bool, string) {
		nc := &awsv1.EC2NodeClass{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: "ziba-general"}, nc); err != nil {
			return false, err.Error()
		}
		if !nc.StatusConditions().Root().IsTrue() {
			return false, fmt.Sprintf("EC2NodeClass conditions %+v", nc.Status.Conditions)
		}
		np := &karpv1.NodePool{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: "ziba-general"}, np); err != nil {
			return false, err.Error()
		}
		if !np.StatusConditions().Root().IsTrue() {
			return false, fmt.Sprintf("NodePool conditions %+v", np.Status.Conditions)
		}
		return true, ""
	})
}

// setConsolidateAfter patches the seed NodePool's disruption.consolidateAfter.
func (e *testEnv) setConsolidateAfter(t testing.TB, d string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"disruption":{"consolidateAfter":%q}}}`, d)
	if _, err := e.dyn.Resource(nodePoolGVR).Patch(context.Background(), "ziba-general", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching consolidateAfter: %v", err)
	}
}

func (e *testEnv) namespace(t testing.TB, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// deployment is a workload of replicas pods with these requests.
func deployment(ns, name string, replicas int32, cpu, memory string, nodeSelector map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector:                  nodeSelector,
					TerminationGracePeriodSeconds: new(int64(0)),
					Containers: []corev1.Container{{
						Name:  "worker",
						Image: "registry.ziba.dev/render-worker:1.0",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse(cpu),
							corev1.ResourceMemory: resource.MustParse(memory),
						}},
					}},
				},
			},
		},
	}
}

func (e *testEnv) createDeployment(t testing.TB, d *appsv1.Deployment) {
	t.Helper()
	e.namespace(t, d.Namespace)
	if _, err := e.kube.AppsV1().Deployments(d.Namespace).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment %s/%s: %v", d.Namespace, d.Name, err)
	}
}

func (e *testEnv) scale(t testing.TB, ns, name string, replicas int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := e.kube.AppsV1().Deployments(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("scaling %s/%s: %v", ns, name, err)
	}
}

// pods counts the app's pods by phase.
func (e *testEnv) pods(t testing.TB, ns, app string) map[corev1.PodPhase]int {
	t.Helper()
	list, err := e.kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	out := map[corev1.PodPhase]int{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.Status.Phase]++
		}
	}
	return out
}

// waitRunning waits until n pods of the app run and returns how long that took.
func (e *testEnv) waitRunning(t testing.TB, ns, app string, n int, timeout time.Duration) time.Duration {
	t.Helper()
	return waitFor(t, timeout, 200*time.Millisecond, fmt.Sprintf("%d %s pods Running", n, app), func() (bool, string) {
		p := e.pods(t, ns, app)
		return p[corev1.PodRunning] == n, fmt.Sprintf("pods by phase %v", p)
	})
}

func (e *testEnv) nodeClaims(t testing.TB) []karpv1.NodeClaim {
	t.Helper()
	list := &karpv1.NodeClaimList{}
	if err := e.client.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// resetCluster removes the namespaces' workloads (pods force-deleted: a draining node
// cannot evict from a terminating namespace), then every NodeClaim, and waits until their
// instances are terminated, so the next test starts from an empty NodePool.
func (e *testEnv) resetCluster(t testing.TB, namespaces ...string) {
	t.Helper()
	ctx := context.Background()
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}
	for _, ns := range namespaces {
		if err := e.kube.AppsV1().Deployments(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if err := e.kube.CoreV1().Pods(ns).DeleteCollection(ctx, now, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	waitFor(t, time.Minute, 250*time.Millisecond, "pods gone", func() (bool, string) {
		for _, ns := range namespaces {
			list, err := e.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			if len(list.Items) > 0 {
				_ = e.kube.CoreV1().Pods(ns).DeleteCollection(ctx, now, metav1.ListOptions{})
				return false, fmt.Sprintf("%d pods left in %s", len(list.Items), ns)
			}
		}
		return true, ""
	})
	for _, nc := range e.nodeClaims(t) {
		if err := e.client.Delete(ctx, &nc); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, ns := range namespaces {
		if err := e.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	waitFor(t, 2*time.Minute, 500*time.Millisecond, "NodeClaims and instances gone", func() (bool, string) {
		if n := len(e.nodeClaims(t)); n > 0 {
			return false, fmt.Sprintf("%d NodeClaims left", n)
		}
		if ids := e.liveInstances(t); len(ids) > 0 {
			return false, fmt.Sprintf("instances still alive: %v", joinKeys(ids))
		}
		for _, ns := range namespaces {
			if _, err := e.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, "namespace " + ns + " still terminating"
			}
		}
		return true, ""
	})
}

// liveInstances are the ziba-general instances not terminated, as the seed's
// `aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general` finds them.
func (e *testEnv) liveInstances(t testing.TB) map[string]ec2types.Instance {
	t.Helper()
	out := map[string]ec2types.Instance{}
	pages := ec2.NewDescribeInstancesPaginator(e.ec2, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{"ziba-general"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "shutting-down", "stopping", "stopped"}},
	}})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				out[aws.ToString(i.InstanceId)] = i
			}
		}
	}
	return out
}

// karpenterCalls counts the EC2 calls Karpenter made since since (by its access key).
func (e *testEnv) karpenterCalls(t testing.TB, action string, since time.Time) []trail.AuditEvent {
	t.Helper()
	events, err := e.admin.Audit(context.Background(), trail.AuditQuery{Caller: karpenterKey, Action: action, Since: since})
	if err != nil {
		t.Fatalf("reading the audit trail: %v", err)
	}
	return events
}

// limitsSampler records the largest total capacity the NodePool's NodeClaims ever had.
type limitsSampler struct {
	mu             sync.Mutex
	maxCPU, maxMem resource.Quantity
	maxClaims      int
	stop           chan struct{}
	done           chan struct{}
}

func (e *testEnv) sampleLimits(t testing.TB) *limitsSampler {
	s := &limitsSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			list := &karpv1.NodeClaimList{}
			if err := e.client.List(context.Background(), list, client.MatchingLabels{karpv1.NodePoolLabelKey: "ziba-general"}); err == nil {
				var cpu, mem resource.Quantity
				for _, nc := range list.Items {
					cpu.Add(nc.Status.Capacity[corev1.ResourceCPU])
					mem.Add(nc.Status.Capacity[corev1.ResourceMemory])
				}
				s.mu.Lock()
				if cpu.Cmp(s.maxCPU) > 0 {
					s.maxCPU = cpu
				}
				if mem.Cmp(s.maxMem) > 0 {
					s.maxMem = mem
				}
				s.maxClaims = max(s.maxClaims, len(list.Items))
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return s
}

// check stops the sampler and fails the test if the seed's limits (cpu 200, memory 800Gi)
// were ever exceeded.
func (s *limitsSampler) check(t testing.TB) {
	t.Helper()
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("NodePool peak: %d NodeClaims, cpu %s, memory %s (limits cpu 200, memory 800Gi)", s.maxClaims, s.maxCPU.String(), s.maxMem.String())
	if s.maxCPU.Cmp(resource.MustParse("200")) > 0 || s.maxMem.Cmp(resource.MustParse("800Gi")) > 0 {
		t.Errorf("NodePool limits exceeded: cpu %s, memory %s", s.maxCPU.String(), s.maxMem.String())
	}
}

// karpenterEvents are the events Karpenter recorded for a pod.
func (e *testEnv) karpenterEvents(t testing.TB, ns, pod string) []corev1.Event {
	t.Helper()
	list, err := e.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.Source.Component == "karpenter" || ev.ReportingController == "karpenter" {
			out = append(out, ev)
		}
	}
	return out
}

func instanceID(t testing.TB, providerID string) string {
	t.Helper()
	id, err := awsutils.ParseInstanceID(providerID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func tags(ts []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range ts {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func joinKeys[V any](m map[string]V) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return strings.Join(ks, ",")
}
