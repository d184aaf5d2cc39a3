package metrics

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/karplab/karplab/cluster/controlplane"
	"github.com/karplab/karplab/cluster/kubelet"
)

// One world for the package: the embedded control plane, the lab's kubelet (kwok) running the
// Nodes labelled as Karpenter's kwok provider labels them, and the metrics server, started
// on first use and stopped by TestMain.
var world struct {
	mu         sync.Mutex
	started    bool
	err        error
	dir        string
	cp         *controlplane.ControlPlane
	kube       kubernetes.Interface
	srv        *Server
	kubeconfig string
	stop       func()
}

// testResolution is the sample interval of the tests' metrics server.
const testResolution = 250 * time.Millisecond

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	world.mu.Lock()
	if world.stop != nil {
		world.stop()
	}
	if world.cp != nil {
		if err := world.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
			code = 1
		}
	}
	if world.dir != "" {
		if code == 0 && os.Getenv("KARPLAB_KEEP_TEST_DIR") == "" {
			os.RemoveAll(world.dir)
		} else {
			fmt.Fprintln(os.Stderr, "kept the test's data dir (controlplane.log, metrics.log):", world.dir)
		}
	}
	world.mu.Unlock()
	os.Exit(code)
}

// noEC2 is an account without instances: the fleet then only runs the kwok provider's Nodes.
type noEC2 struct{}

func (noEC2) DescribeInstances(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	return &ec2.DescribeInstancesOutput{}, nil
}
func (noEC2) DescribeInstanceAttribute(context.Context, *ec2.DescribeInstanceAttributeInput, ...func(*ec2.Options)) (*ec2.DescribeInstanceAttributeOutput, error) {
	return &ec2.DescribeInstanceAttributeOutput{}, nil
}
func (noEC2) DescribeInstanceTypes(context.Context, *ec2.DescribeInstanceTypesInput, ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	return &ec2.DescribeInstanceTypesOutput{}, nil
}
func (noEC2) DescribeVolumes(context.Context, *ec2.DescribeVolumesInput, ...func(*ec2.Options)) (*ec2.DescribeVolumesOutput, error) {
	return &ec2.DescribeVolumesOutput{}, nil
}

func startWorld(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: starts a control plane")
	}
	world.mu.Lock()
	defer world.mu.Unlock()
	if !world.started {
		world.started = true
		world.err = bootWorld(tb)
	}
	if world.err != nil {
		tb.Fatalf("starting the test world: %v", world.err)
	}
}

func bootWorld(tb testing.TB) error {
	began := time.Now()
	dir, err := os.MkdirTemp("", "metrics-test-")
	if err != nil {
		return err
	}
	world.dir = dir
	logFile := func(name string) *slog.Logger {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return slog.New(slog.DiscardHandler)
		}
		return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx := context.Background()
	if world.cp, err = controlplane.Start(ctx, controlplane.Config{DataDir: dir, Logger: logFile("controlplane.log")}); err != nil {
		return err
	}
	cpUp := time.Since(began)
	world.kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := world.cp.WriteKubeconfig(world.kubeconfig); err != nil {
		return err
	}
	if world.kube, err = kubernetes.NewForConfig(world.cp.RESTConfig()); err != nil {
		return err
	}
	kl, err := kubelet.New(kubelet.Options{RESTConfig: world.cp.RESTConfig(), EC2: noEC2{}, ManageKWOKProviderNodes: true,
		Logger: logFile("kubelet.log")})
	if err != nil {
		return err
	}
	if world.srv, err = New(Options{RESTConfig: world.cp.RESTConfig(), Resolution: testResolution, Enforce: true,
		PressureTransitionPeriod: 3 * time.Second, Logger: logFile("metrics.log")}); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { kl.Run(runCtx) })
	ready := make(chan struct{})
	done := make(chan error, 1)
	wg.Go(func() { done <- world.srv.Run(runCtx, ready) })
	world.stop = func() { cancel(); wg.Wait() }
	select {
	case <-ready:
	case err := <-done:
		return fmt.Errorf("metrics server ended during start-up: %v", err)
	case <-time.After(90 * time.Second):
		return fmt.Errorf("metrics server not ready after 90s")
	}
	tb.Logf("control plane up in %s, metrics API available %s later", cpUp.Round(time.Millisecond), (time.Since(began) - cpUp).Round(time.Millisecond))
	return nil
}

// kubectl runs the kubectl compiled into karplab against the test cluster and returns its
// output; a kubectl failure (it would exit the process) fails the test instead.
func kubectl(t *testing.T, args ...string) (out string, err error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"--kubeconfig", world.kubeconfig, "--cache-dir", t.TempDir()}, args...)
	cmd := kubectlcmd.NewKubectlCommand(kubectlcmd.KubectlOptions{
		Arguments:   append([]string{"kubectl"}, args...),
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr},
	})
	cmd.SetArgs(args)
	type fatal struct{ msg string }
	kubectlutil.BehaviorOnFatal(func(msg string, code int) { panic(fatal{msg}) })
	defer kubectlutil.DefaultBehaviorOnFatal()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			out, err = stdout.String(), fmt.Errorf("kubectl %s: %s%s", strings.Join(args[4:], " "), f.msg, stderr.String())
		}
	}()
	if err := cmd.Execute(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args[4:], " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// eventually polls cond until it holds; on timeout the test fails with what and the last state.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error), last ...func() string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, cond)
	if err != nil {
		var detail string
		for _, l := range last {
			detail += "\n" + l()
		}
		t.Fatalf("waiting for %s: %v%s", what, err, detail)
	}
}

// kwokNode registers a Node that the lab's kwok keeps Ready, with the given allocatable.
func kwokNode(t *testing.T, name, cpu, memory string) {
	t.Helper()
	ctx := context.Background()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods: resource.MustParse("110")}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kwok.x-k8s.io/node": "fake"}},
		Spec:       corev1.NodeSpec{ProviderID: "kwok://" + name},
		Status:     corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
	if _, err := world.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { world.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	eventually(t, 30*time.Second, "node "+name+" Ready", func(ctx context.Context) (bool, error) {
		n, err := world.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && nodeReady(n), nil
	})
}

func namespace(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := world.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { world.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	eventually(t, 30*time.Second, "the default service account of "+name, func(ctx context.Context) (bool, error) {
		_, err := world.kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// worker is a render worker: one container "render" with the given memory request and limit.
func worker(ns, name, node, request, limit string, labels map[string]string) *corev1.Pod {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse(request)}}
	if limit != "" {
		res.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "render", Image: "ziba/render:1.4", Resources: res}}},
	}
}

func createRunning(t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := world.kube.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pods {
		eventually(t, 30*time.Second, "pod "+p.Name+" Running", func(ctx context.Context) (bool, error) {
			got, err := world.kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			return err == nil && got.Status.Phase == corev1.PodRunning, nil
		})
	}
}

func applyProfile(t *testing.T, yaml string) {
	t.Helper()
	cru := mustCRU(t, yaml)
	crus := world.srv.kwok.KwokV1alpha1().ClusterResourceUsages()
	if _, err := crus.Create(context.Background(), cru, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { crus.Delete(context.Background(), cru.Name, metav1.DeleteOptions{}) })
}

func TestIntegrationMetricsTop(t *testing.T) {
	startWorld(t)
	ctx := context.Background()
	apiSvc, err := world.srv.aggregator.ApiregistrationV1().APIServices().Get(ctx, APIServiceName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !available(apiSvc) {
		t.Errorf("APIService %s conditions %+v, want Available=True", APIServiceName, apiSvc.Status.Conditions)
	}

	kwokNode(t, "kwok-top-1", "4", "8Gi")
	namespace(t, "ziba")
	applyProfile(t, `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: ziba-render}
spec:
  selector: {matchNamespaces: [ziba]}
  usages:
  - containers: [render]
    usage:
      cpu: {value: 900m}
      memory:
        expression: 'pod.SinceSecond() < 2.0 ? Quantity("1Gi") : Quantity("4Gi")'
`)
	web := worker("ziba", "web-0", "kwok-top-1", "256Mi", "", map[string]string{"app": "web"})
	web.Annotations = map[string]string{"kwok.x-k8s.io/usage-memory": "300Mi", "kwok.x-k8s.io/usage-cpu": "20m"}
	web.Spec.Containers[0].Name = "web"
	createRunning(t, worker("ziba", "render-0", "kwok-top-1", "1Gi", "", map[string]string{"app": "render"}), web)

	var out string
	eventually(t, 30*time.Second, "kubectl top pods to show render-0 at its 4Gi peak", func(context.Context) (bool, error) {
		out, err = kubectl(t, "top", "pods", "-n", "ziba")
		return err == nil && strings.Contains(out, "4096Mi"), nil
	}, func() string { return fmt.Sprintf("%v\n%s", err, out) })
	t.Logf("kubectl top pods -n ziba:\n%s", out)
	wantTable := "NAME       CPU(cores)   MEMORY(bytes)   \nrender-0   900m         4096Mi          \nweb-0      20m          300Mi           \n"
	if out != wantTable {
		t.Errorf("kubectl top pods -n ziba:\n%s\nwant:\n%s", out, wantTable)
	}
	if out, err = kubectl(t, "top", "pods", "-n", "ziba", "-l", "app=render", "--containers"); err != nil || !strings.Contains(out, "render-0   render   900m") || strings.Contains(out, "web-0") {
		t.Errorf("kubectl top pods -l app=render --containers: %v\n%s", err, out)
	}
	if out, err = kubectl(t, "top", "pods", "-A", "--use-protocol-buffers=false"); err != nil || !strings.Contains(out, "ziba        render-0") {
		t.Errorf("kubectl top pods -A (JSON): %v\n%s", err, out)
	}
	if out, err = kubectl(t, "top", "node", "kwok-top-1"); err != nil || !strings.Contains(out, "kwok-top-1   960m         24%      4696Mi          57%") {
		// 900m + 20m + 40m overhead of 4 cores; 4096Mi + 300Mi + 300Mi overhead of 8Gi.
		t.Errorf("kubectl top node: %v\n%s", err, out)
	}
	t.Logf("kubectl top node kwok-top-1:\n%s", out)
	if out, err = kubectl(t, "get", "podmetrics", "-n", "ziba"); err != nil || !strings.Contains(out, "render-0") || !strings.Contains(out, "4Gi") {
		t.Errorf("kubectl get podmetrics: %v\n%s", err, out)
	}
	t.Logf("kubectl get podmetrics -n ziba:\n%s", out)
	if _, err = kubectl(t, "top", "pod", "-n", "ziba", "nobody"); err == nil || !strings.Contains(err.Error(), `pods "nobody" not found`) {
		t.Errorf("kubectl top pod nobody: %v, want pods \"nobody\" not found", err)
	}

	// RBAC as with metrics-server: the view role gets metrics through
	// system:aggregated-metrics-reader; without a binding the learner is refused.
	if _, err = kubectl(t, "top", "pods", "-n", "ziba", "--as", "learner"); err == nil ||
		!strings.Contains(err.Error(), `User "learner" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "ziba"`) {
		t.Errorf("kubectl top pods as an unbound user: %v, want forbidden", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ziba", Name: "learner-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "learner"}},
	}
	if _, err := world.kube.RbacV1().RoleBindings("ziba").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "kubectl top pods as a viewer", func(context.Context) (bool, error) {
		out, err = kubectl(t, "top", "pods", "-n", "ziba", "--as", "learner")
		return err == nil && strings.Contains(out, "render-0"), nil
	}, func() string { return fmt.Sprintf("%v\n%s", err, out) })

	// The typed clientset graders can use, in protobuf as kubectl top asks.
	cfg := rest.CopyConfig(world.cp.RESTConfig())
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	mc, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := mc.MetricsV1beta1().PodMetricses("ziba").List(ctx, metav1.ListOptions{LabelSelector: "app=render"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "render-0" || list.Items[0].Containers[0].Usage.Memory().Cmp(resource.MustParse("4Gi")) != 0 {
		t.Errorf("PodMetrics list: %+v", list.Items)
	}
	if _, err := mc.MetricsV1beta1().NodeMetricses().Get(ctx, "nowhere", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("NodeMetrics of a node that does not exist: %v, want NotFound", err)
	}

	u, ok := world.srv.Pod("ziba", "render-0")
	if !ok || u.Peak.Memory.Cmp(resource.MustParse("4Gi")) != 0 || u.Request.Memory.Cmp(resource.MustParse("1Gi")) != 0 ||
		u.Source != "ClusterResourceUsage ziba-render" || !u.Running {
		t.Errorf("record of render-0: %+v, want peak 4Gi, request 1Gi from ClusterResourceUsage ziba-render", u)
	}
}

func TestIntegrationMetricsMemoryPressure(t *testing.T) {
	startWorld(t)
	kwokNode(t, "kwok-pressure-1", "4", "3Gi")
	kwokNode(t, "kwok-oom-1", "4", "16Gi")
	namespace(t, "pressure")
	applyProfile(t, `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: pressure}
spec:
  selector: {matchNamespaces: [pressure]}
  usages:
  - containers: [render]
    usage:
      memory:
        expression: 'pod.metadata.name.startsWith("render") ? Quantity("2Gi") : Quantity("200Mi")'
`)
	// Two 2Gi workers that asked for 1Gi on a node with 3Gi allocatable; a small one that
	// uses less than it asked; and, elsewhere, one whose limit is below its usage.
	createRunning(t,
		worker("pressure", "render-0", "kwok-pressure-1", "1Gi", "", nil),
		worker("pressure", "render-1", "kwok-pressure-1", "1Gi", "", nil),
		worker("pressure", "small-0", "kwok-pressure-1", "512Mi", "", nil),
		worker("pressure", "render-oom", "kwok-oom-1", "1Gi", "1Gi", nil),
	)
	var evicted *corev1.Pod
	eventually(t, 30*time.Second, "one render worker evicted", func(ctx context.Context) (bool, error) {
		pods, err := world.kube.CoreV1().Pods("pressure").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for i, p := range pods.Items {
			if p.Status.Reason == "Evicted" {
				evicted = &pods.Items[i]
			}
		}
		return evicted != nil, nil
	})
	if evicted.Status.Phase != corev1.PodFailed || !strings.HasPrefix(evicted.Name, "render-") ||
		!strings.HasPrefix(evicted.Status.Message, "The node was low on resource: memory. Threshold quantity: 100Mi, available: ") ||
		!strings.HasSuffix(evicted.Status.Message, "Container render was using 2Gi, request is 1Gi, has larger consumption of memory. ") {
		t.Errorf("evicted pod %s: phase %s, message %q", evicted.Name, evicted.Status.Phase, evicted.Status.Message)
	}
	eventually(t, 10*time.Second, "node MemoryPressure=True, its taint, and the Evicted event", func(ctx context.Context) (bool, error) {
		n, err := world.kube.CoreV1().Nodes().Get(ctx, "kwok-pressure-1", metav1.GetOptions{})
		if err != nil || !nodeCondition(n, corev1.NodeMemoryPressure) {
			return false, nil
		}
		// The controller manager's node lifecycle controller taints by condition.
		if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeMemoryPressure }) {
			return false, nil
		}
		evs, err := world.kube.CoreV1().Events("pressure").List(ctx, metav1.ListOptions{FieldSelector: "reason=Evicted,involvedObject.name=" + evicted.Name})
		return err == nil && len(evs.Items) == 1 && evs.Items[0].Source.Component == "kubelet", nil
	})
	// 2Gi + 200Mi left on 3Gi: the pressure is over; the condition clears after the transition period.
	eventually(t, 15*time.Second, "MemoryPressure back to False", func(ctx context.Context) (bool, error) {
		n, err := world.kube.CoreV1().Nodes().Get(ctx, "kwok-pressure-1", metav1.GetOptions{})
		return err == nil && !nodeCondition(n, corev1.NodeMemoryPressure), nil
	})
	if u, _ := world.srv.Pod("pressure", evicted.Name); u.Running || u.Evicted != evicted.Status.Message || u.Peak.Memory.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("record of the evicted pod: %+v", u)
	}

	// Killed at its limit, restarted at once, killed again: then it waits in CrashLoopBackOff.
	var cs corev1.ContainerStatus
	eventually(t, 15*time.Second, "render-oom OOM-killed and in CrashLoopBackOff", func(ctx context.Context) (bool, error) {
		p, err := world.kube.CoreV1().Pods("pressure").Get(ctx, "render-oom", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, nil
		}
		cs = p.Status.ContainerStatuses[0]
		return cs.State.Waiting != nil, nil
	}, func() string { return fmt.Sprintf("%+v", cs) })
	prefix := "back-off 10s restarting failed container=render pod=render-oom_pressure("
	if cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.Reason != "OOMKilled" ||
		cs.LastTerminationState.Terminated.ExitCode != 137 || cs.State.Waiting.Reason != "CrashLoopBackOff" ||
		!strings.HasPrefix(cs.State.Waiting.Message, prefix) || cs.Ready {
		t.Errorf("render-oom's container status %+v, want restartCount 1, lastState OOMKilled (137), waiting CrashLoopBackOff %q...", cs, prefix)
	}
	if out, err := kubectl(t, "get", "pod", "-n", "pressure", "render-oom"); err != nil || !strings.Contains(out, "0/1     CrashLoopBackOff   1 (") {
		t.Errorf("kubectl get pod render-oom: %v\n%s", err, out)
	}
	if u, _ := world.srv.Pod("pressure", "render-oom"); u.Peak.Memory.Cmp(resource.MustParse("1Gi")) != 0 || u.Containers[0].OOMKills != 2 {
		t.Errorf("record of render-oom: %+v, want a 1Gi peak (its limit) and 2 OOM kills", u)
	}
}

func available(a *apiregistrationv1.APIService) bool {
	for _, c := range a.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}
