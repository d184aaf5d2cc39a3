package existing

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// kubeconfig writes a kubeconfig with one context per server (named ctx0, ctx1, ...).
func kubeconfig(t *testing.T, servers ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\ncurrent-context: ctx0\nclusters:\n")
	for i, s := range servers {
		fmt.Fprintf(&b, "- name: c%d\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n", i, s)
	}
	b.WriteString("users:\n- name: u\n  user: {token: t}\ncontexts:\n")
	for i := range servers {
		fmt.Fprintf(&b, "- name: ctx%d\n  context: {cluster: c%d, user: u}\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// versionServer answers /version as a Kubernetes API server of that version would.
func versionServer(t *testing.T, major, minor, git string) string {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"major":%q,"minor":%q,"gitVersion":%q}`, major, minor, git)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "https://" + addr
}

// TestStartRefusesBadInput: each bad input is one line that names the fix, and Start
// writes no kubeconfig.
func TestStartRefusesBadInput(t *testing.T) {
	old := versionServer(t, "1", "25", "v1.25.16")
	future := versionServer(t, "1", "38+", "v1.38.0-eks-1")
	two := kubeconfig(t, old, future)
	tests := []struct {
		name, kubeconfig, context, want string
	}{
		{name: "missing kubeconfig", kubeconfig: filepath.Join(t.TempDir(), "nope"), want: "no such file or directory; name the kubeconfig"},
		{name: "unknown context", kubeconfig: two, context: "prod", want: `--context "prod" is not in kubeconfig ` + two + ` (it has: ctx0, ctx1)`},
		{name: "unreachable", kubeconfig: kubeconfig(t, closedPort(t)), want: "cannot reach the cluster at https://127.0.0.1:"},
		{name: "too old", kubeconfig: two, want: "the cluster runs Kubernetes v1.25.16; karpenter-provider-aws v1.15.0 supports 1.26 to 1.37"},
		{name: "too new", kubeconfig: two, context: "ctx1", want: "the cluster runs Kubernetes v1.38.0-eks-1; karpenter-provider-aws v1.15.0 supports 1.26 to 1.37"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "lab-kubeconfig")
			b := New(Options{Kubeconfig: tt.kubeconfig, Context: tt.context})
			err := b.Start(context.Background(), out, &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Start error = %v; want one line containing %q", err, tt.want)
			}
			if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
				t.Errorf("the lab's kubeconfig was written despite the error")
			}
			if b.RESTConfig() != nil {
				t.Errorf("RESTConfig set despite the error")
			}
		})
	}
}

// TestStartTrustsItsCallersCheck: with Checked, Start asks the cluster its version only (a
// server that answers nothing else will do), names it and writes the lab's kubeconfig;
// without, it checks the cluster itself.
func TestStartTrustsItsCallersCheck(t *testing.T) {
	theirs := kubeconfig(t, versionServer(t, "1", "33", "v1.33.1"))
	out := filepath.Join(t.TempDir(), "lab-kubeconfig")
	var status strings.Builder
	b := New(Options{Kubeconfig: theirs, Checked: true})
	if err := b.Start(t.Context(), out, &status); err != nil {
		t.Fatalf("Start after the caller's Check: %v", err)
	}
	if !strings.Contains(status.String(), "Kubernetes v1.33.1") {
		t.Errorf("status %q does not name the version", status.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the lab's kubeconfig: %v", err)
	}
	// The daemon's clients come from RESTConfig: not held to client-go's 5 calls a second.
	if client, err := kubernetes.NewForConfig(b.RESTConfig()); err != nil {
		t.Fatal(err)
	} else if qps := client.CoreV1().RESTClient().GetRateLimiter().QPS(); qps < 50 {
		t.Errorf("the daemon's clients make at most %g calls a second, want at least 50", qps)
	}
	err := New(Options{Kubeconfig: theirs}).Start(t.Context(), filepath.Join(t.TempDir(), "lab-kubeconfig"), &status)
	if err == nil || !strings.Contains(err.Error(), "asking the cluster what the kubeconfig's user may do") {
		t.Errorf("Start without Checked: %v, want its own Check's access review", err)
	}
}
