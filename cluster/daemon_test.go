package cluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/fakeec2/trail"
)

// testLab is the one daemon this package's integration tests share, run in-process.
var testLab struct {
	home Home
	exe  string // the karplab binary the daemon runs
	err  error
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		testLab.err = errors.New("-short")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "karplab-cluster-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	exe, err := karplabtest.Binary(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	home := Home(filepath.Join(dir, "home"))
	log, _ := os.Create(filepath.Join(dir, "daemon.log"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunDaemon(ctx, DaemonConfig{Home: home, EC2Addr: addr, Executable: exe, MetricsResolution: time.Second,
			Logger: slog.New(slog.NewTextHandler(log, nil))})
	}()
	for {
		st, err := home.ReadState()
		if err == nil && st.Phase == PhaseReady {
			break
		}
		if err == nil && st.Phase == PhaseFailed {
			testLab.err = errors.New(st.Error)
			break
		}
		select {
		case err := <-done:
			testLab.err = fmt.Errorf("daemon ended: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if testLab.err != nil {
			break
		}
	}
	testLab.home, testLab.exe = home, exe
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "daemon:", err)
		code = 1
	}
	// Stopping removes the runtime files.
	if _, err := os.Stat(home.PIDFile()); !os.IsNotExist(err) {
		fmt.Fprintln(os.Stderr, "pid file left after the daemon stopped")
		code = 1
	}
	log.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func needLab(t *testing.T) Home {
	t.Helper()
	if testLab.err != nil {
		t.Skipf("no lab: %v", testLab.err)
	}
	return testLab.home
}

func TestIntegrationStatusAndSecondDaemon(t *testing.T) {
	h := needLab(t)
	st, err := LiveStatus(t.Context(), h)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range st.Components {
		names[c.Name] = true
		if !c.Healthy {
			t.Errorf("%s unhealthy: %s", c.Name, c.Detail)
		}
	}
	for _, want := range []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "ec2-emulator", "simulated-kubelet", "karpenter"} {
		if !names[want] {
			t.Errorf("status lacks %s (has %v)", want, names)
		}
	}
	// A second daemon on the same home refuses and changes nothing.
	err = RunDaemon(t.Context(), DaemonConfig{Home: h, EC2Addr: "127.0.0.1:1"})
	var running *AlreadyRunningError
	if !errors.As(err, &running) || running.PID != os.Getpid() {
		t.Fatalf("second daemon: %v, want AlreadyRunningError naming pid %d", err, os.Getpid())
	}
	if after, err := h.ReadState(); err != nil || after.Phase != PhaseReady {
		t.Errorf("state after the refused second daemon: %+v, %v", after, err)
	}
}

const resetWorkload = `
apiVersion: v1
kind: Namespace
metadata: {name: ziba}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, namespace: ziba}
spec:
  replicas: 2
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers:
      - name: w
        image: example.invalid/worker:1
        resources: {requests: {cpu: "1", memory: 2Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: w
        image: example.invalid/web:1
        resources: {requests: {cpu: "1", memory: 1Gi}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: general}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: general}
spec:
  role: KarpenterNodeRole-ziba-production
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: ziba-production}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: ziba-production}}]
`

// TestIntegrationReset: after a reset, no workload, NodePool, NodeClaim, node, NodeClass or
// instance is left, the EC2 account and the evidence history start afresh, and the lab
// provisions again.
func TestIntegrationReset(t *testing.T) {
	h := needLab(t)
	ctx := t.Context()
	cfg, err := clientcmd.BuildConfigFromFlags("", h.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	st, _ := h.ReadState()
	api := NewEC2Client(st.EC2Endpoint, accesskeys.Learner)
	admin := fakeec2.NewAdminClient(st.EC2Endpoint)

	apply := func() { t.Helper(); applyYAML(t, dyn, resetWorkload) }
	running := func() int {
		out, err := api.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: strPtr("instance-state-name"), Values: []string{"pending", "running"}}}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range out.Reservations {
			n += len(r.Instances)
		}
		return n
	}
	runningPods := func() int {
		pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range pods.Items {
			if p.Namespace == "ziba" || p.Namespace == "default" {
				n++
			}
		}
		return n
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	apply()
	waitUntil("3 pods running on Karpenter nodes", func() bool { return runningPods() == 3 })
	if running() == 0 {
		t.Fatal("no instance running before the reset")
	}

	var progress strings.Builder
	if err := Reset(ctx, h, &progress); err != nil {
		t.Fatalf("reset: %v\n%s", err, progress.String())
	}
	if _, err := kube.CoreV1().Namespaces().Get(ctx, "ziba", metav1.GetOptions{}); err == nil {
		t.Error("namespace ziba survived the reset")
	}
	if deps, _ := kube.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{}); len(deps.Items) != 0 {
		t.Errorf("%d deployments left in default", len(deps.Items))
	}
	if n, _ := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); len(n.Items) != 0 {
		t.Errorf("%d nodes left", len(n.Items))
	}
	for _, gvr := range []schema.GroupVersionResource{nodePoolsGVR, nodeClaimsGVR, ec2NodeClassesGVR} {
		items, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(items.Items) != 0 {
			t.Errorf("%d %s left", len(items.Items), gvr.Resource)
		}
	}
	if n := running(); n != 0 {
		t.Errorf("%d instances running after reset", n)
	}
	if audit, err := admin.Audit(ctx, trail.AuditQuery{Action: "CreateFleet"}); err != nil || len(audit) != 0 {
		t.Errorf("audit trail after reset: %d CreateFleet calls, %v", len(audit), err)
	}
	if recs, err := recorder.Read(h.History()); err != nil {
		t.Fatal(err)
	} else {
		for _, r := range recs {
			if r.Kind == "Pod" && r.Object.GetNamespace() == "ziba" && r.Type != recorder.Deleted {
				t.Errorf("history still holds pod %s from before the reset", r.Object.GetName())
				break
			}
		}
	}
	for _, want := range []string{"NodePools", "workload namespaces", "NodeClaims", "EC2 account", "Karpenter"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("reset progress lacks %q:\n%s", want, progress.String())
		}
	}

	// And the lab works again.
	apply()
	waitUntil("3 pods running again after the reset", func() bool { return runningPods() == 3 })
}

func strPtr(s string) *string { return &s }

// applyYAML server-side applies the multi-document manifest (namespaces, deployments,
// NodePools, EC2NodeClasses).
func applyYAML(t *testing.T, dyn dynamic.Interface, manifest string) {
	t.Helper()
	for _, doc := range strings.Split(manifest, "\n---\n") {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		resource := map[string]string{"Namespace": "namespaces", "Deployment": "deployments", "NodePool": "nodepools", "EC2NodeClass": "ec2nodeclasses"}[u.GetKind()]
		ri := dyn.Resource(u.GroupVersionKind().GroupVersion().WithResource(resource))
		body, _ := u.MarshalJSON()
		force := true
		opts := metav1.PatchOptions{FieldManager: "test", Force: &force}
		var err error
		if ns := u.GetNamespace(); ns != "" {
			_, err = ri.Namespace(ns).Patch(t.Context(), u.GetName(), types.ApplyPatchType, body, opts)
		} else {
			_, err = ri.Patch(t.Context(), u.GetName(), types.ApplyPatchType, body, opts)
		}
		if err != nil {
			t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// TestIntegrationBreakBootstrap: with the bootstrap of a NodePool broken through the daemon,
// its instance runs but no Node registers, and the kubelet view says why; repaired, new
// instances register again.
func TestIntegrationBreakBootstrap(t *testing.T) {
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
	if err := BreakBootstrap(ctx, h, kubelet.BootstrapFault{}); err == nil {
		t.Error("a bootstrap fault that selects nothing was accepted")
	}
	if err := BreakBootstrap(ctx, h, kubelet.BootstrapFault{Tags: map[string]string{"karpenter.sh/nodepool": "general"}, Reason: "nodeadm: cannot reach the API server"}); err != nil {
		t.Fatal(err)
	}
	applyYAML(t, dynamic.NewForConfigOrDie(cfg), resetWorkload)

	var failed kubelet.NodeStatus
	deadline := time.Now().Add(2 * time.Minute)
	for failed.InstanceID == "" {
		v, err := Kubelet(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range v.Nodes {
			if n.Phase == kubelet.PhaseBootstrapFailed {
				failed = n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no instance failed its bootstrap: %+v", v.Nodes)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !strings.Contains(failed.Reason, "cannot reach the API server") {
		t.Errorf("failure reason %q does not carry the fault's", failed.Reason)
	}
	time.Sleep(3 * time.Second) // a registering kubelet would have been seen by now
	if nodes, _ := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); len(nodes.Items) != 0 {
		t.Errorf("%d nodes registered despite the broken bootstrap", len(nodes.Items))
	}
	if err := RepairBootstrap(ctx, h); err != nil {
		t.Fatal(err)
	}
	if v, err := Kubelet(ctx, h); err != nil || len(v.Faults) != 0 {
		t.Errorf("faults after repair: %+v, %v", v, err)
	}
	if err := Reset(ctx, h, &progress); err != nil {
		t.Fatalf("reset: %v", err)
	}
}
