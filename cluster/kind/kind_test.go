package kind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/kind/kindtest"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// refused starts a kind backend in a new lab home, wants err (in one line, naming each of
// want) and checks nothing was left: no kubeconfig, no record of a cluster.
func refused(t *testing.T, home string, wantErr error, want ...string) {
	t.Helper()
	b := New(Options{Home: home})
	kubeconfig := filepath.Join(home, "kubeconfig")
	err := b.Start(context.Background(), kubeconfig, &strings.Builder{})
	if !errors.Is(err, wantErr) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Start error = %q, want %v in one line", err, wantErr)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Start error = %q, want it to say %q", err, w)
		}
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("kubeconfig written despite the refusal: %v", err)
	}
	if rec, _ := readRecord(home); rec.Node != "" {
		t.Errorf("a cluster recorded despite the refusal: %+v", rec)
	}
	if b.RESTConfig() != nil {
		t.Error("RESTConfig set despite the refusal")
	}
	if err := b.Stop(context.Background()); err != nil {
		t.Errorf("Stop after a refused Start: %v", err)
	}
}

func TestStartWithoutEngine(t *testing.T) {
	kindtest.FakeEngines(t, nil)
	refused(t, t.TempDir(), engine.ErrNoEngine, "Docker, podman or nerdctl", "--backend embedded")
}

func TestStartWhereNoEngineRunsPrivileged(t *testing.T) {
	kindtest.FakeEngines(t, map[string]kindtest.Engine{
		"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunCapsRefused},
		"podman": {Version: "podman version 4.3.1", Run: kindtest.RunCapsRefused},
	})
	refused(t, t.TempDir(), engine.ErrPrivilegedRefused, "Docker cannot run", "podman cannot run", "unable to apply caps", "--backend embedded")
}

// realEngine is the engine the lab would use here, with the kind tests' lock held; the test
// fails (under KARPLAB_REQUIRE_CLIENTS) or skips when there is none.
func realEngine(t *testing.T, home string) *engine.Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no container engine is used")
	}
	kindtest.Lock(t)
	e, err := engine.Choose(context.Background(), engine.Options{ContainersConf: filepath.Join(home, "containers.conf")})
	if err != nil {
		karplabtest.RequireClient(t, fmt.Sprintf("a container engine that runs kind's node (%v)", err))
	}
	t.Setenv(engine.ProviderEnv, e.Name) // as Check exports it
	for _, kv := range e.Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return e
}

// A cluster named karplab that this lab did not make (here: a container bearing kind's
// cluster label, as `kind create cluster --name karplab` would leave) is refused, and left
// as it was.
func TestIntegrationStartRefusesAnotherKarplabCluster(t *testing.T) {
	home := t.TempDir()
	e := realEngine(t, home)
	ctx := context.Background()
	if _, err := e.Run(ctx, strings.NewReader(string(make([]byte, 1024))), "import", "-", "localhost/karplab/leftover-test:empty"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Run(context.Background(), nil, "rmi", "-f", "localhost/karplab/leftover-test:empty") })
	if _, err := e.Run(ctx, nil, "create", "--name", nodeName, "--label", "io.x-k8s.kind.cluster="+ClusterName, "localhost/karplab/leftover-test:empty", "/none"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Run(context.Background(), nil, "rm", "-f", nodeName) })
	refused(t, home, ErrLeftoverCluster, "refuses to take it over", "kind delete cluster --name karplab")
	if out, err := e.Run(ctx, nil, "inspect", "--format", "{{.Name}}", nodeName); err != nil {
		t.Errorf("the other cluster's node is gone after the refusal: %v %s", err, out)
	}
}

// The API port the lab used before, now taken by another process, is refused before
// anything is created.
func TestIntegrationStartRefusesAPIPortInUse(t *testing.T) {
	home := t.TempDir()
	realEngine(t, home)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if err := writeRecord(home, record{APIPort: port}); err != nil {
		t.Fatal(err)
	}
	refused(t, home, ErrAPIPortInUse, fmt.Sprintf("127.0.0.1:%d", port), "kind.json")
}

// TestIntegrationKindCluster creates the lab's kind cluster on the engine kind would use here
// (podman where Docker refuses privileged containers), from kind's node image or the lab's
// own, built offline when missing. The node must come up whole: every kube-system pod
// Running and Ready (CoreDNS needs the CNI and kube-proxy's Service routing), the API server
// on 127.0.0.1 only. A second start on the same lab home reuses the cluster; with its node
// stopped (a reboot), a start makes it anew; stop deletes it.
func TestIntegrationKindCluster(t *testing.T) {
	home := t.TempDir()
	e := realEngine(t, home)
	ctx := context.Background()
	b := New(Options{Home: home})
	kubeconfig := filepath.Join(home, "kubeconfig")
	var status strings.Builder
	begin := time.Now()
	if err := b.Start(ctx, kubeconfig, &status); err != nil {
		t.Fatalf("Start: %v\n%s", err, status.String())
	}
	t.Logf("Start took %s:\n%s", time.Since(begin).Round(time.Second), status.String())
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			b.Stop(context.Background())
		}
	})
	for _, c := range b.Components(ctx) {
		if !c.Healthy {
			t.Errorf("component %s unhealthy: %s", c.Name, c.Detail)
		}
	}
	if u, err := url.Parse(b.RESTConfig().Host); err != nil || u.Hostname() != "127.0.0.1" {
		t.Errorf("API server at %q, want 127.0.0.1", b.RESTConfig().Host)
	}
	if out, err := e.Run(ctx, nil, "port", nodeName); err != nil || !regexp.MustCompile(`^6443/tcp -> 127\.0\.0\.1:\d+$`).MatchString(strings.TrimSpace(out)) {
		t.Errorf("the node publishes %q (%v), want only 6443/tcp on 127.0.0.1", out, err)
	}
	waitSystemPodsReady(t, b.RESTConfig())

	again := New(Options{Home: home})
	status.Reset()
	if err := again.Start(ctx, kubeconfig, &status); err != nil || !strings.Contains(status.String(), "Reusing the kind cluster") {
		t.Fatalf("a second Start on the same lab home = %v, printing:\n%s\nwant the cluster reused", err, status.String())
	}

	// After a reboot the node container is stopped, and kind cannot start a cluster again:
	// the lab's own goes, and a new one comes.
	if _, err := e.Run(ctx, nil, "stop", "--time", "2", nodeName); err != nil {
		t.Fatal(err)
	}
	anew := New(Options{Home: home})
	status.Reset()
	if err := anew.Start(ctx, kubeconfig, &status); err != nil || !strings.Contains(status.String(), "is not running") || !strings.Contains(status.String(), "Creating kind cluster") {
		t.Fatalf("Start with the lab's node stopped = %v, printing:\n%s\nwant the cluster deleted and created anew", err, status.String())
	}
	waitSystemPodsReady(t, anew.RESTConfig())
	if err := anew.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	deleted = true
	out, err := e.Run(ctx, nil, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+ClusterName, "--format", "{{.Names}}")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("after Stop, kind's containers: %q (%v), want none", out, err)
	}
	if out, _ := e.Run(ctx, nil, "volume", "ls", "--format", "{{.Name}}"); strings.Contains(out, nodeName) {
		t.Errorf("after Stop, the node's volume is left: %s", out)
	}
}

// waitSystemPodsReady waits up to three minutes for every kube-system pod to be Running and
// Ready, and for CoreDNS to be among them.
func waitSystemPodsReady(t *testing.T, cfg *rest.Config) {
	t.Helper()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var notReady []string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		pods, err := kube.CoreV1().Pods("kube-system").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		notReady = nil
		coredns := false
		for _, p := range pods.Items {
			coredns = coredns || strings.HasPrefix(p.Name, "coredns-")
			if p.Status.Phase != corev1.PodRunning || !podReady(p) {
				notReady = append(notReady, p.Name+" "+string(p.Status.Phase))
			}
		}
		if coredns && len(notReady) == 0 {
			t.Logf("%d kube-system pods Running and Ready", len(pods.Items))
			return
		}
	}
	t.Errorf("kube-system pods not Running and Ready after 3 minutes: %v", notReady)
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
