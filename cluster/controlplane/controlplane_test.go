package controlplane

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// The package's tests share one control plane, started by the first test that needs it
// and stopped by TestMain. (Only one control plane can run per process; see
// ErrAlreadyRunning.) Its component logs go to $TMPDIR/.../controlplane.log, or to
// stderr with -controlplane.log=-.
var (
	logFlag = flag.String("controlplane.log", "", `component log: "" = a file in the test's data dir, "-" = stderr`)

	sharedMu  sync.Mutex
	sharedCP  *ControlPlane
	sharedDir string
	sharedErr error
)

func TestMain(m *testing.M) {
	if mode, dir := os.Getenv("CONTROLPLANE_TEST_CHILD"), os.Getenv("CONTROLPLANE_TEST_DIR"); mode != "" {
		os.Exit(child(mode, dir))
	}
	flag.Parse()
	code := m.Run()
	sharedMu.Lock()
	if sharedCP != nil {
		if err := sharedCP.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping shared control plane:", err)
			code = 1
		}
	}
	if sharedDir != "" && code == 0 {
		os.RemoveAll(sharedDir)
	} else if sharedDir != "" {
		fmt.Fprintln(os.Stderr, "kept control plane data dir for inspection:", sharedDir)
	}
	sharedMu.Unlock()
	os.Exit(code)
}

// child runs in a separate process started by a test and returns its exit code:
// 3 when Start fails with ErrDataDirInUse, 1 on any other failure, 0 on success.
//
//	start: Start and Stop on dir.
//	crash: Start on dir, check ConfigMap default/survivor exists, write default/from-child,
//	       then exit without Stop, as a killed daemon would.
//	hold:  Start with HoldControllers on dir (holdChild).
func child(mode, dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp, err := Start(ctx, Config{DataDir: dir, HoldControllers: mode == "hold"})
	if err != nil {
		fmt.Println(err)
		if errors.Is(err, ErrDataDirInUse) {
			return 3
		}
		return 1
	}
	if mode == "hold" {
		return holdChild(ctx, cp)
	}
	if mode == "crash" {
		c, err := kubernetes.NewForConfig(cp.RESTConfig())
		if err != nil {
			fmt.Println(err)
			return 1
		}
		if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{}); err != nil {
			fmt.Println("reading survivor:", err)
			return 1
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "from-child"}, Data: map[string]string{"pid": fmt.Sprint(os.Getpid())}}
		if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			fmt.Println("writing from-child:", err)
			return 1
		}
		fmt.Println("ok, crashing")
		return 0
	}
	if err := cp.Stop(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// runChild runs this test binary in child mode on dir.
func runChild(ctx context.Context, mode, dir string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CONTROLPLANE_TEST_CHILD="+mode, "CONTROLPLANE_TEST_DIR="+dir)
	return cmd.CombinedOutput()
}

// testLogger writes component logs at Debug to dir/controlplane.log (or stderr).
func testLogger(dir string) (*slog.Logger, error) {
	if *logFlag == "-" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})), nil
	}
	f, err := os.OpenFile(filepath.Join(dir, "controlplane.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), nil
}

// shared returns the package's control plane, starting it on first use.
func shared(t testing.TB) *ControlPlane {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedCP == nil && sharedErr == nil {
		sharedDir, sharedErr = os.MkdirTemp("", "controlplane-test-")
		if sharedErr == nil {
			var logger *slog.Logger
			if logger, sharedErr = testLogger(sharedDir); sharedErr == nil {
				began := time.Now()
				sharedCP, sharedErr = Start(context.Background(), Config{DataDir: sharedDir, Logger: logger})
				t.Logf("control plane started in %s (data dir %s)", time.Since(began).Round(time.Millisecond), sharedDir)
			}
		}
	}
	if sharedErr != nil {
		t.Fatalf("starting the shared control plane: %v", sharedErr)
	}
	return sharedCP
}

func clientFor(t testing.TB, cp *ControlPlane) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestIntegrationReadyz(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	body, err := clientFor(t, cp).CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	if diff := cmp.Diff("ok", string(body)); diff != "" {
		t.Errorf("/readyz body (-want +got):\n%s", diff)
	}
}

func TestIntegrationComponents(t *testing.T) {
	cp := shared(t)
	got := cp.Components(t.Context())
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
		if !c.Healthy {
			t.Errorf("%s unhealthy: %s", c.Name, c.Detail)
		}
		if !strings.HasPrefix(c.Address, "https://127.0.0.1:") {
			t.Errorf("%s address %q, want https://127.0.0.1:PORT", c.Name, c.Address)
		}
		t.Logf("%s %s healthy=%v %s", c.Name, c.Address, c.Healthy, c.Detail)
	}
	if v, err := clientFor(t, cp).Discovery().ServerVersion(); err == nil {
		t.Logf("server version %s (major %s minor %s)", v.GitVersion, v.Major, v.Minor)
	}
	want := []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("component names (-want +got):\n%s", diff)
	}
}

func TestIntegrationKubeconfig(t *testing.T) {
	cp := shared(t)
	path := filepath.Join(t.TempDir(), "sub", "kubeconfig")
	if err := cp.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600", fi.Mode().Perm())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("using the written kubeconfig: %v", err)
	}
}

func TestIntegrationRBACEnforced(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	tests := []struct {
		name    string
		user    string
		groups  []string
		allowed bool
	}{
		{name: "admin group", user: "someone", groups: []string{"system:masters"}, allowed: true},
		{name: "unprivileged user", user: "someone", groups: []string{"system:authenticated"}, allowed: false},
		{name: "scheduler binds pods", user: "system:kube-scheduler", groups: []string{"system:authenticated"}, allowed: true},
	}
	c := clientFor(t, cp)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sar := &authzv1SAR{user: tt.user, groups: tt.groups, verb: "create", resource: "pods", sub: "binding"}
			got, err := sar.check(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.allowed {
				t.Errorf("allowed = %v, want %v", got, tt.allowed)
			}
		})
	}
}

func TestIntegrationCRDEstablished(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	ext, err := apiextensionsclient.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.lab.karplab.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "lab.karplab.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
					},
				}},
			}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CRD: %v", err)
	}
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	var conds []apiextensionsv1.CustomResourceDefinitionCondition
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds = got.Status.Conditions
		for _, c := range conds {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD not Established: %v (conditions %+v)", err, conds)
	}
	// Served: the new resource can be listed through discovery-driven paths (discovery
	// follows Established a moment later: the API server updates it asynchronously).
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := clientFor(t, cp).Discovery().ServerResourcesForGroupVersion("lab.karplab.io/v1")
		return err == nil, nil
	})
	if err != nil {
		_, err = clientFor(t, cp).Discovery().ServerResourcesForGroupVersion("lab.karplab.io/v1")
		t.Errorf("discovery of lab.karplab.io/v1 10s after Established: %v", err)
	}
}

func TestIntegrationDeploymentPendingUnschedulable(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	c := clientFor(t, cp)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "workload-"}}
	ns, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })

	labels := map[string]string{"app": "inflate"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "inflate"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "inflate", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	dep, err = c.AppsV1().Deployments(ns.Name).Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		rss, err := c.AppsV1().ReplicaSets(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(rss.Items) != 1 || !ownedBy(rss.Items[0].OwnerReferences, dep.UID) {
			last = fmt.Sprintf("%d replicasets owned by the deployment", len(rss.Items))
			return false, nil
		}
		pods, err := c.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(pods.Items) != 2 {
			last = fmt.Sprintf("%d pods", len(pods.Items))
			return false, nil
		}
		for _, p := range pods.Items {
			if !ownedBy(p.OwnerReferences, rss.Items[0].UID) {
				last = fmt.Sprintf("pod %s not owned by the replicaset", p.Name)
				return false, nil
			}
			if p.Status.Phase != corev1.PodPending || !unschedulable(p) {
				last = fmt.Sprintf("pod %s phase %s conditions %+v", p.Name, p.Status.Phase, p.Status.Conditions)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("deployment never reached 2 Pending Unschedulable pods: %v (last: %s)", err, last)
	}
	// kubectl describe pod shows the scheduler's FailedScheduling event.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := c.CoreV1().Events(ns.Name).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedScheduling,involvedObject.kind=Pod"})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.ReportingController == corev1.DefaultSchedulerName || e.Source.Component == corev1.DefaultSchedulerName {
				return true, nil
			}
		}
		last = fmt.Sprintf("%d FailedScheduling events", len(evs.Items))
		return false, nil
	})
	if err != nil {
		t.Errorf("no FailedScheduling event from the scheduler: %v (last: %s)", err, last)
	}
	// The ServiceAccount admission plugin mounted a token, which needs the token
	// controller's root CA config map in the namespace.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ConfigMaps(ns.Name).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("kube-root-ca.crt not published in %s: %v", ns.Name, err)
	}
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}

func unschedulable(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

func TestIntegrationNamespaceDeletionAndGC(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	c := clientFor(t, cp)
	ns, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := c.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
	}}}}
	if _, err := c.CoreV1().ConfigMaps(ns.Name).Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().ConfigMaps(ns.Name).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ConfigMaps(ns.Name).Get(ctx, dependent.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("garbage collector did not delete the dependent: %v", err)
	}
	if err := c.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("namespace controller did not finish deleting %s: %v", ns.Name, err)
	}
}

func TestIntegrationServiceAccountTokenController(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	c := clientFor(t, cp)
	sa, err := c.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{GenerateName: "robot-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: sa.Name + "-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: sa.Name}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	if _, err := c.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().ServiceAccounts("default").Delete(context.Background(), sa.Name, metav1.DeleteOptions{})
	})
	var token []byte
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := c.CoreV1().Secrets("default").Get(ctx, secret.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = got.Data[corev1.ServiceAccountTokenKey]
		return len(token) > 0, nil
	})
	if err != nil {
		t.Fatalf("token controller did not fill %s: %v", secret.Name, err)
	}
	// The API server accepts the token it did not issue itself (signed with sa.key).
	cfg := cp.RESTConfig()
	cfg.CertData, cfg.KeyData, cfg.BearerToken = nil, nil, string(token)
	robot, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := robot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("authenticating with the token: %v", err)
	}
	if diff := cmp.Diff("system:serviceaccount:default:"+sa.Name, review.Status.UserInfo.Username); diff != "" {
		t.Errorf("token user (-want +got):\n%s", diff)
	}
}

func TestIntegrationNodeLifecycleTaintsNotReadyNode(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	c := clientFor(t, cp)
	// A zone whose nodes are all NotReady is in "full disruption" and is deliberately not
	// tainted for eviction, so a healthy node (heartbeat just now, 50s grace) keeps the
	// zone normal.
	now := metav1.Now()
	newNode := func(name string, ready corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: ready, Reason: "Lab",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}}},
		}
	}
	node := newNode("lab-node-not-ready", corev1.ConditionFalse)
	for _, n := range []*corev1.Node{newNode("lab-node-ready", corev1.ConditionTrue), node} {
		if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
	}
	want := []corev1.Taint{
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
	}
	var got []corev1.Taint
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := c.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = nil
		for _, tt := range n.Spec.Taints {
			got = append(got, corev1.Taint{Key: tt.Key, Effect: tt.Effect})
		}
		return len(got) == len(want), nil
	})
	if err != nil {
		t.Fatalf("node lifecycle controller did not taint the NotReady node: %v (taints %v)", err, got)
	}
	sortTaints := cmpopts.SortSlices(func(a, b corev1.Taint) bool { return a.Effect < b.Effect })
	if diff := cmp.Diff(want, got, sortTaints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
}

func TestIntegrationLeaderLeases(t *testing.T) {
	cp := shared(t)
	c := clientFor(t, cp)
	for _, name := range []string{"kube-scheduler", "kube-controller-manager"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			first, err := c.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("lease kube-system/%s: %v", name, err)
			}
			if first.Spec.HolderIdentity == nil || *first.Spec.HolderIdentity == "" || first.Spec.RenewTime == nil {
				t.Fatalf("lease %s not held: %+v", name, first.Spec)
			}
			// Both renew every RetryPeriod (2s).
			var renewed *metav1.MicroTime
			err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 15*time.Second, false, func(ctx context.Context) (bool, error) {
				l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				if *l.Spec.HolderIdentity != *first.Spec.HolderIdentity {
					return false, fmt.Errorf("holder changed from %s to %s", *first.Spec.HolderIdentity, *l.Spec.HolderIdentity)
				}
				renewed = l.Spec.RenewTime
				return renewed.After(first.Spec.RenewTime.Time), nil
			})
			if err != nil {
				t.Errorf("lease %s not renewed (first %v, last %v): %v", name, first.Spec.RenewTime, renewed, err)
			}
		})
	}
}

func TestIntegrationSecondStartFails(t *testing.T) {
	cp := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	second, err := Start(ctx, Config{DataDir: cp.cfg.DataDir})
	if err == nil {
		second.Stop()
		t.Fatal("second Start on a data dir in use succeeded")
	}
	if !errors.Is(err, ErrDataDirInUse) {
		t.Errorf("second Start: got %v, want ErrDataDirInUse", err)
	}
	_, err = Start(ctx, Config{DataDir: t.TempDir()})
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("Start on another dir in the same process: got %v, want ErrAlreadyRunning", err)
	}
	// The failed attempts left the running control plane alone.
	if _, err := clientFor(t, cp).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("control plane after failed second starts: %v", err)
	}
}

func TestIntegrationDataDirLockedAcrossProcesses(t *testing.T) {
	cp := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := runChild(ctx, "start", cp.cfg.DataDir)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("child Start on the same data dir: err %v, output %q; want exit 3 (ErrDataDirInUse)", err, out)
	}
	if want := fmt.Sprintf("(pid %d)", os.Getpid()); !strings.Contains(string(out), want) {
		t.Errorf("child error %q does not name the holder %s", strings.TrimSpace(string(out)), want)
	}
}

// TestIntegrationRestartKeepsData stops the shared control plane, starts it on the same data
// dir in another process (which reads the data, writes more and exits without Stop, like a
// crash), then again in this process: the data, CA and port survive, the crashed run's
// leases do not delay the restart, and the control plane is ready again (it then serves
// the remaining tests).
func TestIntegrationRestartKeepsData(t *testing.T) {
	cp := shared(t)
	ctx := t.Context()
	c := clientFor(t, cp)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survivor", Namespace: "default"}, Data: map[string]string{"written": time.Now().Format(time.RFC3339Nano)}}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := cp.RESTConfig()

	sharedMu.Lock()
	defer sharedMu.Unlock()
	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if !errors.Is(cp.Err(), ErrStopped) {
		t.Errorf("Err after Stop = %v, want ErrStopped", cp.Err())
	}
	select {
	case <-cp.Done():
	default:
		t.Error("Done not closed after Stop")
	}
	for _, addr := range []string{cp.apiURL, cp.etcdURL, cp.schedURL, cp.kcmURL} {
		if err := portFree(strings.TrimPrefix(addr, "https://")); err != nil {
			t.Errorf("after Stop: %v", err)
		}
	}

	out, err := runChild(ctx, "crash", sharedDir)
	if err != nil {
		t.Fatalf("start in another process: %v: %s", err, out)
	}

	logger, err := testLogger(sharedDir)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	sharedCP, sharedErr = Start(ctx, Config{DataDir: sharedDir, Logger: logger})
	if sharedErr != nil {
		t.Fatalf("restart: %v", sharedErr)
	}
	t.Logf("restarted after a crash in %s", time.Since(began).Round(time.Millisecond))
	// The crashed run's leases were dropped, not waited out (15s): both are new objects.
	for _, name := range []string{schedulerLease, controllerManagerLease} {
		l, err := clientFor(t, sharedCP).CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.CreationTimestamp.Time.Before(began.Truncate(time.Second)) {
			t.Errorf("lease %s created %s, before the restart at %s: the stale lease was kept", name, l.CreationTimestamp, began)
		}
	}
	after := sharedCP.RESTConfig()
	if diff := cmp.Diff(before.Host, after.Host); diff != "" {
		t.Errorf("API server URL changed across restart (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(string(before.CAData), string(after.CAData)); diff != "" {
		t.Errorf("CA changed across restart")
	}
	got, err := clientFor(t, sharedCP).CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap after restart: %v", err)
	}
	if diff := cmp.Diff(cm.Data, got.Data); diff != "" {
		t.Errorf("ConfigMap data after restart (-want +got):\n%s", diff)
	}
	if _, err := clientFor(t, sharedCP).CoreV1().ConfigMaps("default").Get(ctx, "from-child", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap written by the other process: %v", err)
	}
}

// holdChild proves HoldControllers in a process of its own (one control plane per process):
// with the controllers held, a ReplicaSet gets no pod and no scheduler leads; once released,
// its pods are made and scheduled (left Pending: there is no node), as Start would have.
func holdChild(ctx context.Context, cp *ControlPlane) int {
	defer cp.Stop()
	fail := func(format string, args ...any) int { fmt.Printf(format+"\n", args...); return 1 }
	c, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return fail("%v", err)
	}
	for _, comp := range cp.Components(ctx) {
		if (comp.Name == "kube-scheduler" || comp.Name == "kube-controller-manager") && !strings.Contains(comp.Detail, "held") {
			return fail("%s while held: %+v", comp.Name, comp)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "replayed"}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fail("namespace: %v", err)
	}
	labels := map[string]string{"app": "held"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "replayed"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := c.AppsV1().ReplicaSets("replayed").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		return fail("replicaset: %v", err)
	}
	time.Sleep(3 * time.Second)
	if pods, err := c.CoreV1().Pods("replayed").List(ctx, metav1.ListOptions{}); err != nil || len(pods.Items) != 0 {
		return fail("while held: %v, %d pods (want none: no controller manager)", err, len(pods.Items))
	}
	if err := cp.ReleaseControllers(ctx); err != nil {
		return fail("%v", err)
	}
	if err := cp.ReleaseControllers(ctx); !errors.Is(err, ErrNotHeld) {
		return fail("a second release: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		pods, err := c.CoreV1().Pods("replayed").List(ctx, metav1.ListOptions{})
		scheduled := 0
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
					scheduled++
				}
			}
		}
		if err == nil && len(pods.Items) == 2 && scheduled == 2 {
			break
		}
		if time.Now().After(deadline) {
			return fail("after release: %v, %d pods, %d seen by the scheduler", err, len(pods.Items), scheduled)
		}
	}
	fmt.Println("ok")
	return 0
}

// TestIntegrationHoldControllers: a replay's control plane holds its scheduler and
// controller manager until it has loaded a captured cluster.
func TestIntegrationHoldControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	out, err := runChild(t.Context(), "hold", t.TempDir())
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("the held control plane: %v\n%s", err, out)
	}
}
