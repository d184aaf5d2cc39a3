package app

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// runAsKarplab makes the test binary karplab itself: start launches the daemon as its own
// executable, which in a test is this binary.
const runAsKarplab = "KARPLAB_APP_TEST_RUN_AS_KARPLAB"

func TestMain(m *testing.M) {
	if os.Getenv(runAsKarplab) != "" {
		os.Exit(Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// checkedCluster serves a cluster that passes the existing backend's Check (Kubernetes
// 1.33, every right, no Karpenter) and answers nothing else, and counts the Checks: each
// looks for Karpenter's pods once. It returns a kubeconfig for it.
func checkedCluster(t *testing.T) (string, *atomic.Int32) {
	checks := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			fmt.Fprint(w, `{"major":"1","minor":"33","gitVersion":"v1.33.0"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
			fmt.Fprint(w, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","status":{"allowed":true}}`)
		case r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("labelSelector") == "app.kubernetes.io/name=karpenter":
			checks.Add(1)
			fmt.Fprint(w, `{"apiVersion":"v1","kind":"PodList","items":[]}`)
		case r.URL.Path == "/apis/coordination.k8s.io/v1/leases":
			fmt.Fprint(w, `{"apiVersion":"coordination.k8s.io/v1","kind":"LeaseList","items":[]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"this test's cluster answers the checks only"}`)
		}
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
current-context: theirs
clusters: [{name: theirs, cluster: {server: "`+srv.URL+`"}}]
users: [{name: admin, user: {token: t}}]
contexts: [{name: theirs, context: {cluster: theirs, user: admin}}]
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, checks
}

// TestStartChecksTheClusterOnce: `start --backend existing` checks the cluster once, in
// the CLI before it launches the daemon, which trusts that check; a daemon in the
// foreground checks it once itself. The cluster answers only the checks, so the daemon
// fails at its first step after them (reading namespace kube-system): proof it ran.
func TestStartChecksTheClusterOnce(t *testing.T) {
	t.Setenv(runAsKarplab, "1") // for the daemon start launches
	for _, mode := range []string{"background", "foreground"} {
		t.Run(mode, func(t *testing.T) {
			kubeconfig, checks := checkedCluster(t)
			t.Setenv("KARPLAB_HOME", t.TempDir())
			args := []string{"karplab", "start", "--backend", "existing", "--kubeconfig", kubeconfig,
				"--ec2-addr", freeAddr(t), "--timeout", "1m"}
			if mode == "foreground" {
				args = append(args, "--foreground")
			}
			var stderr strings.Builder
			code := Run(args, strings.NewReader(""), &stderr, &stderr)
			if code != ExitError || !strings.Contains(stderr.String(), "reading namespace kube-system") {
				t.Fatalf("exit %d, want %d and the daemon's error on reading namespace kube-system:\n%s", code, ExitError, stderr.String())
			}
			if n := checks.Load(); n != 1 {
				t.Errorf("the cluster was checked %d times, want once; output:\n%s", n, stderr.String())
			}
		})
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestStartRefusesAnAccountTheLabCannotHave: an unknown region, a zone the region lacks or
// a cluster name Kubernetes refuses is one line naming the value and what is accepted,
// exit 2, and nothing started: no daemon, nothing in the home.
func TestStartRefusesAnAccountTheLabCannotHave(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{name: "unknown region", args: []string{"--region", "mars-east-1"}, want: []string{`"mars-east-1"`, "eu-west-2", "us-east-1"}},
		{name: "zone the region lacks", args: []string{"--region", "eu-west-2", "--zones", "a,d"}, want: []string{`"d"`, "eu-west-2a, eu-west-2b, eu-west-2c"}},
		{name: "cluster name Kubernetes refuses", args: []string{"--cluster-name", "Prod_USE1"}, want: []string{`"Prod_USE1"`, "lower-case letters, digits and '-'"}},
		{name: "a setting Karpenter does not read", args: []string{"--set", "FEATURE_GATE=SpotToSpotConsolidation=true"},
			want: []string{"setting FEATURE_GATE: Karpenter v1.15.0 reads no such setting", "FEATURE_GATES", "nothing started"}},
		{name: "a setting the lab owns", args: []string{"--set", "CLUSTER_NAME=prod"}, want: []string{"the lab sets it", "--cluster-name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			t.Setenv("KARPLAB_HOME", home)
			var stdout, stderr strings.Builder
			code := Run(append([]string{"karplab", "start"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
			if code != ExitError {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitError, stderr.String())
			}
			msg := strings.TrimSpace(stderr.String())
			if strings.Count(msg, "\n") != 0 {
				t.Errorf("want one line, got:\n%s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if _, err := os.Stat(home); !os.IsNotExist(err) {
				t.Errorf("the home exists after a refused start: %v", err)
			}
		})
	}
}
