package karpenter_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// BenchmarkPerfSuiteShape runs the shape of Karpenter's own performance suite on both
// providers in one run: one Deployment of 500 pods requesting 950m / 3900Mi and one of 500
// requesting 3800m / 31Gi, on a NodePool over categories c, m and r (the real provider's;
// the kwok provider's catalog has no categories), on-demand. It prints for each the time
// to 1,000 Running, the NodeClaims, the CPU and memory the pods request over what the
// nodes offer, and which types were bought, and the ratio of the real provider's time to
// kwok's (goal <= 1.2).
//
//	go test -run '^$' -bench PerfSuiteShape -benchtime 1x -v ./cluster/karpenter/
func BenchmarkPerfSuiteShape(b *testing.B) {
	e := lab(b)
	var real, floor time.Duration
	b.Run("provider=aws", func(b *testing.B) {
		e.applySeed(b)
		e.applyNodePool(b, `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"perf"},"spec":{"template":{"spec":{
			"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"ziba-general"},
			"requirements":[{"key":"karpenter.k8s.aws/instance-category","operator":"In","values":["c","m","r"]},
			{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]}]}}}}`)
		b.ResetTimer()
		real = e.runPerfShape(b, "perf-aws", "perf")
	})
	b.Run("provider=kwok", func(b *testing.B) {
		e.startKWOKProvider(b)
		b.ResetTimer()
		floor = e.runPerfShape(b, "perf-kwok", "kwok")
	})
	if real > 0 && floor > 0 {
		fmt.Printf("perf-suite shape, 1,000 pods to Running: real provider %s, stock kwok provider %s, ratio %.2f (goal <= 1.2)\n",
			real.Round(time.Millisecond), floor.Round(time.Millisecond), real.Seconds()/floor.Seconds())
	}
}

// runPerfShape creates the two Deployments on pool, waits for 1,000 Running, prints what
// was bought, and clears the namespace.
func (e *testEnv) runPerfShape(b *testing.B, ns, pool string) time.Duration {
	b.Helper()
	var took time.Duration
	for i := 0; i < b.N; i++ {
		sel := map[string]string{karpv1.NodePoolLabelKey: pool}
		start := time.Now()
		e.createDeployment(b, deployment(ns, "small", 500, "950m", "3900Mi", sel))
		e.createDeployment(b, deployment(ns, "large", 500, "3800m", "31Gi", sel))
		e.waitRunning(b, ns, "small", 500, 15*time.Minute)
		e.waitRunning(b, ns, "large", 500, 15*time.Minute)
		took = time.Since(start)
		b.StopTimer()
		claims, cpu, mem, bought := e.poolUsage(b, pool)
		fmt.Printf("perf-suite shape on %s: 1,000 Running in %s, %d NodeClaims, CPU %.0f%% and memory %.0f%% requested of allocatable, bought %s\n",
			pool, took.Round(time.Millisecond), claims, 100*cpu, 100*mem, bought)
		b.ReportMetric(took.Seconds(), "s-to-running")
		b.ReportMetric(float64(claims), "nodeclaims")
		b.ReportMetric(100*cpu, "cpu-%")
		b.ReportMetric(100*mem, "memory-%")
		b.ReportMetric(0, "ns/op")
		e.resetCluster(b, ns)
		b.StartTimer()
	}
	return took
}

// poolUsage counts pool's NodeClaims and the share of its nodes' allocatable CPU and
// memory that their pods request, and names the types bought ("r6i.16xlarge x3, ...").
func (e *testEnv) poolUsage(b *testing.B, pool string) (claims int, cpu, mem float64, bought string) {
	b.Helper()
	ctx := context.Background()
	for _, nc := range e.nodeClaims(b) {
		if nc.Labels[karpv1.NodePoolLabelKey] == pool {
			claims++
		}
	}
	nodes, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: karpv1.NodePoolLabelKey + "=" + pool})
	if err != nil {
		b.Fatal(err)
	}
	var allocCPU, allocMem, reqCPU, reqMem resource.Quantity
	types := map[string]int{}
	names := map[string]bool{}
	for _, n := range nodes.Items {
		allocCPU.Add(n.Status.Allocatable[corev1.ResourceCPU])
		allocMem.Add(n.Status.Allocatable[corev1.ResourceMemory])
		types[n.Labels[corev1.LabelInstanceTypeStable]]++
		names[n.Name] = true
	}
	pods, err := e.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range pods.Items {
		if !names[p.Spec.NodeName] || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Spec.Containers {
			reqCPU.Add(c.Resources.Requests[corev1.ResourceCPU])
			reqMem.Add(c.Resources.Requests[corev1.ResourceMemory])
		}
	}
	var parts []string
	for t, n := range types {
		parts = append(parts, fmt.Sprintf("%s x%d", t, n))
	}
	sort.Strings(parts)
	return claims, ratio(reqCPU, allocCPU), ratio(reqMem, allocMem), strings.Join(parts, ", ")
}

func ratio(a, b resource.Quantity) float64 {
	if b.IsZero() {
		return 0
	}
	return a.AsApproximateFloat64() / b.AsApproximateFloat64()
}

// applyNodePool server-side-applies a NodePool and deletes it at cleanup.
func (e *testEnv) applyNodePool(b *testing.B, obj string) {
	b.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(obj)); err != nil {
		b.Fatal(err)
	}
	if _, err := e.dyn.Resource(nodePoolGVR).Patch(ctx, u.GetName(), types.ApplyPatchType, []byte(obj), metav1.PatchOptions{FieldManager: "test", Force: new(true)}); err != nil {
		b.Fatalf("applying NodePool %s: %v", u.GetName(), err)
	}
	b.Cleanup(func() { _ = e.dyn.Resource(nodePoolGVR).Delete(ctx, u.GetName(), metav1.DeleteOptions{}) })
}
