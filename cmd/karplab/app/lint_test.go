package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// lintdata is the lint package's testdata: the course's NodePool and its variants.
func lintdata(name string) string {
	return filepath.Join("..", "..", "..", "labs", "lint", "testdata", name)
}

func TestLintNodePools(t *testing.T) {
	t.Setenv("KARPLAB_HOME", t.TempDir()) // no lab here: the live mode must say so
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string // exact stdout, unless empty
		wantErr  string // a substring of stderr
	}{
		{
			name:     "the course's NodePool is clean",
			args:     []string{"-f", lintdata("course.yaml")},
			wantCode: ExitPass,
			wantOut:  "1 NodePool: clean\n",
			wantErr:  `note: ../../../labs/lint/testdata/course.yaml:44: karpenter.k8s.aws/v1 EC2NodeClass "ziba-general" is not a NodePool; ignored`,
		},
		{
			name:     "without limits: one finding, exit 1",
			args:     []string{"-f", lintdata("nolimits.yaml")},
			wantCode: ExitFailed,
			wantOut: `ziba-general: unbounded: no spec.limits: one malformed pod can buy unbounded capacity; fix: add spec.limits.cpu and spec.limits.memory (the course's: cpu "200", memory 800Gi)` + "\n" +
				"1 NodePool: 1 error, 0 warnings\n",
		},
		{
			name:     "an equal-weight overlap is ambiguous",
			args:     []string{"-f", lintdata("overlap-equal.yaml")},
			wantCode: ExitFailed,
			wantOut: "ziba-general and gpu-team: ambiguous: both admit kubernetes.io/arch=amd64, kubernetes.io/os=linux, karpenter.sh/capacity-type=on-demand, " +
				"karpenter.k8s.aws/instance-category=g, karpenter.k8s.aws/instance-generation>=6, topology.kubernetes.io/zone in (eu-west-2a, eu-west-2b); " +
				"with equal weight 0 Karpenter tries ziba-general first only because its name sorts later (core orders equal weights by name, descending); " +
				"fix: pods that select nothing go to ziba-general today; if they belong on gpu-team, taint ziba-general (its own workloads tolerate it) or give gpu-team a higher weight; if on ziba-general, give it the higher weight, or make the requirements disjoint for the pods that select\n" +
				"2 NodePools: 1 error, 0 warnings\n",
		},
		{
			name:     "a weighted overlap is a warning and passes",
			args:     []string{"lint", "nodepools", "-f", lintdata("overlap-weighted.yaml")},
			wantCode: ExitPass,
		},
		{
			name:     "files are repeatable; the same pool twice is a read error",
			args:     []string{"-f", lintdata("course.yaml"), "-f", lintdata("gpu-tainted.yaml")},
			wantCode: ExitError,
			wantErr:  `NodePool "ziba-general" is also defined at ../../../labs/lint/testdata/course.yaml:1`,
		},
		{
			name:     "malformed YAML names the file and line, exit 2",
			args:     []string{"-f", lintdata("malformed.yaml")},
			wantCode: ExitError,
			wantErr:  "error: ../../../labs/lint/testdata/malformed.yaml:11: malformed YAML: did not find expected '-' indicator",
		},
		{
			name:     "an unreadable file, exit 2",
			args:     []string{"-f", lintdata("missing.yaml")},
			wantCode: ExitError,
			wantErr:  "reading NodePools: open ../../../labs/lint/testdata/missing.yaml: no such file or directory",
		},
		{
			name:     "a stray argument is a usage error",
			args:     []string{lintdata("course.yaml")},
			wantCode: ExitError,
			wantErr:  "name files with -f FILE",
		},
		{
			name:     "an empty stdin has nothing to lint",
			args:     []string{"-f", "-"},
			wantCode: ExitPass,
			wantOut:  "0 NodePools: clean\n",
			wantErr:  "note: no NodePools to lint",
		},
		{
			name:     "no lab and no files",
			args:     nil,
			wantCode: ExitError,
			wantErr:  "start the lab (karplab start), or lint files with -f FILE",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if len(args) == 0 || args[0] != "lint" {
				args = append([]string{"lint", "nodepools"}, args...)
			}
			code, out, errOut := run(t, args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			if tt.wantOut != "" {
				if diff := cmp.Diff(tt.wantOut, out); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr does not contain %q:\n%s", tt.wantErr, errOut)
			}
		})
	}
}

func TestLintNodePoolsJSON(t *testing.T) {
	code, out, errOut := run(t, "lint", "nodepools", "--json", "-f", lintdata("overlap-tainted.yaml"))
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d: %s", code, ExitFailed, errOut)
	}
	var got struct {
		NodePools []string
		Findings  []struct {
			Rule, Severity    string
			NodePools, Taints []string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := got
	want.NodePools = []string{"ziba-general", "gpu-team"}
	want.Findings = []struct {
		Rule, Severity    string
		NodePools, Taints []string
	}{{"ambiguous", "error", []string{"ziba-general", "gpu-team"}, []string{"nvidia.com/gpu=true:NoSchedule"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

// TestLintNodePoolsLive lints what a cluster serves, through --kubeconfig and the real
// client. The server answers the NodePool list as kube-apiserver does: this package's
// tests have no running lab, and starting one means building the whole binary.
func TestLintNodePoolsLive(t *testing.T) {
	data, err := os.ReadFile(lintdata("overlap-equal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		items = append(items, obj)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/karpenter.sh/v1/nodepools" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePoolList", "metadata": map[string]any{}, "items": items})
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: lab, cluster: {server: "`+srv.URL+`"}}]
contexts: [{name: lab, context: {cluster: lab, user: lab}}]
users: [{name: lab, user: {}}]
current-context: lab
`), 0o600)

	code, out, errOut := run(t, "lint", "nodepools", "--kubeconfig", kubeconfig)
	if code != ExitFailed || !strings.HasPrefix(out, "ziba-general and gpu-team: ambiguous: both admit kubernetes.io/arch=amd64") {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFailed, out, errOut)
	}
	_, fromFiles, _ := run(t, "lint", "nodepools", "-f", lintdata("overlap-equal.yaml"))
	if diff := cmp.Diff(fromFiles, out); diff != "" {
		t.Errorf("cluster report differs from the files' (-files +cluster):\n%s", diff)
	}
}
