package cluster

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/cluster/metrics"
)

// A render worker that asks for 1Gi and uses 3Gi, on a node Karpenter launches.
const metricsWorkload = `
apiVersion: v1
kind: Namespace
metadata: {name: ziba-render}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: render, namespace: ziba-render}
spec:
  replicas: 1
  selector: {matchLabels: {app: render}}
  template:
    metadata:
      labels: {app: render}
      annotations: {kwok.x-k8s.io/usage-memory: 3Gi, kwok.x-k8s.io/usage-cpu: 700m}
    spec:
      containers:
      - name: render
        image: example.invalid/render:1
        resources: {requests: {cpu: 500m, memory: 1Gi}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: render}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: render}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: render}
spec:
  role: KarpenterNodeRole-ziba-production
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: ziba-production}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: ziba-production}}]
`

// TestIntegrationMetricsDaemon: the daemon serves metrics.k8s.io, so `karplab kubectl top`
// shows a pod's usage on a node Karpenter launched; Usage gives the graders its peak against
// its request; a reset forgets the records and keeps kwok's default profile.
func TestIntegrationMetricsDaemon(t *testing.T) {
	h := needLab(t)
	ctx := t.Context()
	var progress strings.Builder
	if err := Reset(ctx, h, &progress); err != nil {
		t.Fatalf("reset: %v\n%s", err, progress.String())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", h.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	applyYAML(t, dynamic.NewForConfigOrDie(cfg), metricsWorkload)
	began := time.Now()
	karplab := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, testLab.exe, args...)
		cmd.Env = append(os.Environ(), "KARPLAB_HOME="+string(h))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	var out string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err = karplab("kubectl", "top", "pods", "-n", "ziba-render")
		if err == nil && strings.Contains(out, "700m         3072Mi") {
			break
		}
		if time.Now().After(deadline) {
			pods, _ := kube.CoreV1().Pods("ziba-render").List(ctx, metav1.ListOptions{})
			t.Fatalf("karplab kubectl top pods -n ziba-render: %v\n%s\npods: %d", err, out, len(pods.Items))
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("from apply to kubectl top (a launch, a boot, a sample) in %s:\n%s", time.Since(began).Round(time.Millisecond), out)
	if out, err := karplab("kubectl", "top", "nodes"); err != nil || !strings.Contains(out, "3372Mi") {
		t.Errorf("karplab kubectl top nodes: %v\n%s", err, out) // 3072Mi + 300Mi system overhead
	}
	if out, err := karplab("kubectl", "get", "apiservice", "v1beta1.metrics.k8s.io"); err != nil || !strings.Contains(out, "kube-system/metrics-server   True") {
		t.Errorf("karplab kubectl get apiservice: %v\n%s", err, out)
	}

	pods, err := kube.CoreV1().Pods("ziba-render").List(ctx, metav1.ListOptions{LabelSelector: "app=render"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("render pods: %v, %v", pods, err)
	}
	u, ok, err := PodUsage(ctx, h, "ziba-render", pods.Items[0].Name)
	if err != nil || !ok {
		t.Fatalf("PodUsage: %v, %t", err, ok)
	}
	if u.Peak.Memory.Cmp(resource.MustParse("3Gi")) != 0 || u.Request.Memory.Cmp(resource.MustParse("1Gi")) != 0 ||
		u.Node != pods.Items[0].Spec.NodeName || u.Source != "ClusterResourceUsage "+metrics.DefaultClusterResourceUsage {
		t.Errorf("PodUsage = %+v, want peak 3Gi, request 1Gi on %s from kwok's default profile", u, pods.Items[0].Spec.NodeName)
	}
	st, err := LiveStatus(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range st.Components {
		found = found || (c.Name == "metrics-server" && c.Healthy && strings.HasPrefix(c.Address, "https://127.0.0.1:"))
	}
	if !found {
		t.Errorf("status lacks a healthy metrics-server on loopback: %+v", st.Components)
	}

	if err := Reset(ctx, h, &progress); err != nil {
		t.Fatalf("reset: %v\n%s", err, progress.String())
	}
	rep, err := Usage(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Pods {
		if p.Namespace == "ziba-render" {
			t.Errorf("a record survived the reset: %+v", p)
		}
	}
	if out, err := karplab("kubectl", "get", "clusterresourceusages"); err != nil || !strings.Contains(out, metrics.DefaultClusterResourceUsage) {
		t.Errorf("kwok's default profile after the reset: %v\n%s", err, out)
	}
}
