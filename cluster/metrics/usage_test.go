package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	kwokusage "sigs.k8s.io/kwok/kustomize/metrics/usage"
	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
)

func mustCRU(t *testing.T, y string) *v1alpha1.ClusterResourceUsage {
	t.Helper()
	var c v1alpha1.ClusterResourceUsage
	if err := yaml.UnmarshalStrict([]byte(y), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestProfiles(t *testing.T) {
	env, err := newEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	def := mustCRU(t, kwokusage.DefaultUsageFromAnnotation)
	ramp := mustCRU(t, `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: aaa-ramp}
spec:
  selector: {matchNamespaces: [ziba]}
  usages:
  - containers: [render]
    usage:
      cpu: {value: 900m}
      memory:
        expression: 'pod.SinceSecond() < 60.0 ? Quantity("1Gi") : Quantity("4Gi")'
  - usage:
      memory: {value: 64Mi}
`)
	broken := mustCRU(t, `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: broken}
spec:
  selector: {matchNamespaces: [broken]}
  usages:
  - usage:
      memory: {expression: 'Quantity("4Gi") +'}
`)
	own := &v1alpha1.ResourceUsage{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ziba", Name: "special"},
		Spec: v1alpha1.ResourceUsageSpec{Usages: []v1alpha1.ResourceUsageContainer{{
			Containers: []string{"render"},
			Usage:      map[string]v1alpha1.ResourceUsageValue{"memory": {Value: new(resource.MustParse("2Gi"))}},
		}}},
	}
	p := newProfiles(env, []*v1alpha1.ResourceUsage{own}, []*v1alpha1.ClusterResourceUsage{def, ramp, broken})
	pod := func(ns, name string, age time.Duration, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Annotations: annotations, CreationTimestamp: metav1.NewTime(time.Now().Add(-age)),
		}}
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		container string
		want      demand
		wantErr   bool
	}{
		{name: "young pod on the ramp", pod: pod("ziba", "render-0", time.Second, nil), container: "render",
			want: demand{cpu: 0.9, memory: 1 << 30, source: "ClusterResourceUsage aaa-ramp"}},
		{name: "old pod at the peak", pod: pod("ziba", "render-0", 2*time.Minute, nil), container: "render",
			want: demand{cpu: 0.9, memory: 4 << 30, source: "ClusterResourceUsage aaa-ramp"}},
		{name: "other container takes the entry naming none", pod: pod("ziba", "render-0", 0, nil), container: "sidecar",
			want: demand{memory: 64 << 20, source: "ClusterResourceUsage aaa-ramp"}},
		{name: "own ResourceUsage wins", pod: pod("ziba", "special", 0, nil), container: "render",
			want: demand{memory: 2 << 30, source: "ResourceUsage ziba/special"}},
		{name: "own ResourceUsage without the container: nothing, as in kwok", pod: pod("ziba", "special", 0, nil), container: "sidecar"},
		{name: "kwok's annotations", pod: pod("default", "web", 0, map[string]string{"kwok.x-k8s.io/usage-memory": "300Mi", "kwok.x-k8s.io/usage-cpu": "250m"}),
			container: "web", want: demand{cpu: 0.25, memory: 300 << 20, source: "ClusterResourceUsage usage-from-annotation"}},
		{name: "kwok's default", pod: pod("default", "web", 0, nil), container: "web",
			want: demand{cpu: 0.001, memory: 1 << 20, source: "ClusterResourceUsage usage-from-annotation"}},
		{name: "CEL error", pod: pod("broken", "x", 0, nil), container: "x", wantErr: true,
			want: demand{source: "ClusterResourceUsage broken"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.containerDemand(context.Background(), &corev1.Node{}, tt.pod, &corev1.Container{Name: tt.container})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %t", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(demand{})); diff != "" {
				t.Errorf("demand (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordPeaksAndLimits(t *testing.T) {
	env, err := newEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{podsByUID: map[types.UID]*podRecord{}, nodesBy: map[string]*nodeRecord{}, opts: Options{Resolution: time.Second}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")},
	}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ziba", Name: "render-0", UID: "u1"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "render", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("3Gi")},
		}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	usage := func(mem string) *profiles {
		return newProfiles(env, []*v1alpha1.ResourceUsage{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ziba", Name: "render-0"},
			Spec: v1alpha1.ResourceUsageSpec{Usages: []v1alpha1.ResourceUsageContainer{{Usage: map[string]v1alpha1.ResourceUsageValue{
				"memory": {Value: new(resource.MustParse(mem))}, "cpu": {Value: new(resource.MustParse("500m"))},
			}}}},
		}}, nil)
	}
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	overhead := amount{cpu: 40e6, memory: 300 << 20}
	ctx := context.Background()
	for i, mem := range []string{"1Gi", "2500Mi", "4Gi", "1500Mi"} {
		ooms := s.record(ctx, sampleInput{now: t0.Add(time.Duration(i) * time.Second), pods: []*corev1.Pod{pod}, nodes: []*corev1.Node{node}, profiles: usage(mem), overhead: overhead})
		if wantOOM := mem == "4Gi"; (len(ooms) == 1) != wantOOM {
			t.Errorf("sample %d (%s): OOM events %v, want one: %t", i, mem, ooms, wantOOM)
		}
	}
	got, ok := s.Pod("ziba", "render-0")
	if !ok {
		t.Fatal("no record")
	}
	want := PodUsage{
		Namespace: "ziba", Name: "render-0", UID: "u1", Node: "n1", Running: true,
		FirstSampled: t0, LastSampled: t0.Add(3 * time.Second),
		Current: amount{cpu: 5e8, memory: 1500 << 20}.usage(), Peak: amount{cpu: 5e8, memory: 3 << 30}.usage(),
		PeakCPUAt: t0, PeakMemoryAt: t0.Add(2 * time.Second),
		Request: amount{memory: 1 << 30}.usage(), Limit: amount{memory: 3 << 30}.usage(),
		Containers: []ContainerUsage{{Name: "render", Current: amount{cpu: 5e8, memory: 1500 << 20}.usage(), Peak: amount{cpu: 5e8, memory: 3 << 30}.usage(),
			Request: amount{memory: 1 << 30}.usage(), Limit: amount{memory: 3 << 30}.usage(), OOMKills: 1}},
		Source: "ResourceUsage ziba/render-0",
	}
	if diff := cmp.Diff(want, got, quantityEqual); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	nodes := s.Report().Nodes
	if len(nodes) != 1 || nodes[0].Current.Memory.Cmp(resource.MustParse("1800Mi")) != 0 || nodes[0].Peak.Memory.Cmp(resource.MustParse("3372Mi")) != 0 {
		t.Errorf("node usage %+v, want current memory 1800Mi (1500Mi + 300Mi overhead), peak 3372Mi", nodes)
	}

	// The pod is gone: its record stays, no longer running, and the API no longer lists it.
	s.record(ctx, sampleInput{now: t0.Add(4 * time.Second), nodes: []*corev1.Node{node}, profiles: usage("1Gi")})
	if got, _ := s.Pod("ziba", "render-0"); got.Running || got.Peak.Memory.Cmp(resource.MustParse("3Gi")) != 0 {
		t.Errorf("after the pod went: running %t, peak %s; want false, 3Gi", got.Running, got.Peak.Memory.String())
	}
	if items := s.podMetrics(func(*podRecord) bool { return true }); len(items) != 0 {
		t.Errorf("PodMetrics of a gone pod: %v", items)
	}
}

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
