package lint_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/karplab/karplab/labs/lint"
)

// finding is what a test pins down of a lint.Finding; messages are checked in the verb's test.
type finding struct {
	Rule      lint.Rule
	Severity  lint.Severity
	NodePools []string
	Keys      []string
	Admits    []string
	Taints    []string
	Fix       string
}

func project(r *lint.Report) []finding {
	out := []finding{}
	for _, f := range r.Findings {
		out = append(out, finding{f.Rule, f.Severity, f.NodePools, f.Keys, f.Admits, f.Taints, f.Fix})
	}
	return out
}

func files(names ...string) []string {
	for i, n := range names {
		names[i] = filepath.Join("testdata", n)
	}
	return names
}

// The overlap of the course's pool widened to category g with gpu-team.
var gpuOverlap = []string{
	"kubernetes.io/arch=amd64",
	"kubernetes.io/os=linux",
	"karpenter.sh/capacity-type=on-demand",
	"karpenter.k8s.aws/instance-category=g",
	"karpenter.k8s.aws/instance-generation>=6",
	"topology.kubernetes.io/zone in (eu-west-2a, eu-west-2b)",
}

func TestLintFiles(t *testing.T) {
	tests := []struct {
		name      string
		files     []string
		wantPools []string
		want      []finding
		wantNotes []string
		failed    bool
	}{
		{
			name:      "the course's NodePool is bounded and clean",
			files:     files("course.yaml"),
			wantPools: []string{"ziba-general"},
			want:      []finding{},
			wantNotes: []string{`testdata/course.yaml:44: karpenter.k8s.aws/v1 EC2NodeClass "ziba-general" is not a NodePool; ignored`},
		},
		{
			name:      "without limits it is unbounded",
			files:     files("nolimits.yaml"),
			wantPools: []string{"ziba-general"},
			want: []finding{{
				Rule: lint.RuleUnbounded, Severity: lint.SeverityError, NodePools: []string{"ziba-general"},
				Fix: `add spec.limits.cpu and spec.limits.memory (the course's: cpu "200", memory 800Gi)`,
			}},
			wantNotes: []string{`testdata/nolimits.yaml:41: karpenter.k8s.aws/v1 EC2NodeClass "ziba-general" is not a NodePool; ignored`},
			failed:    true,
		},
		{
			name:      "limits without memory, and keys left open by NotIn or not set",
			files:     files("wide-open.yaml"),
			wantPools: []string{"team-a"},
			want: []finding{
				{
					Rule: lint.RuleUnbounded, Severity: lint.SeverityError, NodePools: []string{"team-a"},
					Fix: `add spec.limits.memory (the course's: cpu "200", memory 800Gi)`,
				},
				{
					Rule: lint.RuleWideOpen, Severity: lint.SeverityError, NodePools: []string{"team-a"},
					Keys: []string{"karpenter.sh/capacity-type", "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-generation", "topology.kubernetes.io/zone"},
					Fix: "add to spec.template.spec.requirements: karpenter.sh/capacity-type In [spot on-demand]; karpenter.k8s.aws/instance-category In [c m r]; " +
						"karpenter.k8s.aws/instance-generation Gt 5; topology.kubernetes.io/zone In [eu-west-2a eu-west-2b eu-west-2c] (the course's values)",
				},
			},
			wantNotes: []string{`testdata/wide-open.yaml:2: v1 ConfigMap "not-a-nodepool" is not a NodePool; ignored`},
			failed:    true,
		},
		{
			name:      "equal weights overlapping are ambiguous, the name tie decides",
			files:     files("overlap-equal.yaml"),
			wantPools: []string{"ziba-general", "gpu-team"},
			want: []finding{{
				Rule: lint.RuleAmbiguous, Severity: lint.SeverityError, NodePools: []string{"ziba-general", "gpu-team"},
				Admits: gpuOverlap,
				Fix:    "pods that select nothing go to ziba-general today; if they belong on gpu-team, taint ziba-general (its own workloads tolerate it) or give gpu-team a higher weight; if on ziba-general, give it the higher weight, or make the requirements disjoint for the pods that select",
			}},
			failed: true,
		},
		{
			name:      "different weights: the lower pool is shadowed, a warning",
			files:     files("overlap-weighted.yaml"),
			wantPools: []string{"gpu-team", "ziba-general"},
			want: []finding{{
				Rule: lint.RuleShadowed, Severity: lint.SeverityWarning, NodePools: []string{"gpu-team", "ziba-general"},
				Admits: gpuOverlap,
				Fix:    "nothing, if ziba-general is meant as the fallback; otherwise make the requirements disjoint",
			}},
		},
		{
			name:      "a tainted GPU pool still overlaps for pods that tolerate its taint",
			files:     files("overlap-tainted.yaml"),
			wantPools: []string{"ziba-general", "gpu-team"},
			want: []finding{{
				Rule: lint.RuleAmbiguous, Severity: lint.SeverityError, NodePools: []string{"ziba-general", "gpu-team"},
				Admits: gpuOverlap, Taints: []string{"nvidia.com/gpu=true:NoSchedule"},
				Fix: "give gpu-team a higher weight so pods that tolerate its taints prefer it, or make the requirements disjoint",
			}},
			failed: true,
		},
		{
			name:      "a tainted GPU pool beside the course's pool is disjoint by category",
			files:     files("gpu-tainted.yaml"),
			wantPools: []string{"ziba-general", "gpu-team"},
			want:      []finding{},
		},
		{
			// Core admits a pod that leaves company.com/team unset into either pool: the split
			// only steers the pods that select a team.
			name:      "pools split by a custom key both name still share the pods that select no team",
			files:     files("disjoint-teams.yaml"),
			wantPools: []string{"team-b", "team-a"},
			want: []finding{{
				Rule: lint.RuleAmbiguous, Severity: lint.SeverityError, NodePools: []string{"team-b", "team-a"},
				Admits: []string{
					"kubernetes.io/arch=amd64", "karpenter.sh/capacity-type=on-demand",
					"node.kubernetes.io/instance-type in (m6i.large, m6i.xlarge)", "topology.kubernetes.io/zone=eu-west-2a",
				},
				Fix: "pods that select nothing go to team-b today; if they belong on team-a, taint team-b (its own workloads tolerate it) or give team-a a higher weight; if on team-b, give it the higher weight",
			}},
			failed: true,
		},
		{
			name:      "the same pools in two files overlap across files",
			files:     files("course.yaml", "gpu-tainted.yaml"),
			wantPools: nil, // duplicate ziba-general: a read error, checked below
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools, notes, err := lint.ReadFiles(tt.files)
			if tt.wantPools == nil {
				if err == nil || !strings.Contains(err.Error(), `NodePool "ziba-general" is also defined at testdata/course.yaml:1`) {
					t.Fatalf("ReadFiles: %v, want the duplicate named", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := lint.Lint(pools)
			if diff := cmp.Diff(tt.wantPools, r.NodePools); diff != "" {
				t.Errorf("pools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, project(r)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if got := r.Failed(); got != tt.failed {
				t.Errorf("Failed() = %v, want %v", got, tt.failed)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string // each a line of the error
	}{
		{
			name:  "malformed YAML names the file and line",
			files: files("malformed.yaml"),
			want:  []string{"testdata/malformed.yaml:11: malformed YAML: did not find expected '-' indicator (in the block that starts at line 8)"},
		},
		{
			name:  "unknown fields and bad requirements name the field, its line and the fix",
			files: files("bad-fields.yaml"),
			want: []string{
				`testdata/bad-fields.yaml:12: NodePool "typo": unknown field spec.template.spec.requirments: fix its spelling or remove it (kubectl explain nodepool.spec lists the fields)`,
				`testdata/bad-fields.yaml:18: NodePool "typo": spec.template.spec.requirements[0].operator: "in" is not an operator; use one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte`,
				`testdata/bad-fields.yaml:22: NodePool "typo": spec.template.spec.requirements[1].values[0]: "five" is not an integer; Gt compares numbers`,
			},
		},
		{
			name:  "an unreadable file",
			files: files("missing.yaml"),
			want:  []string{"reading NodePools: open testdata/missing.yaml: no such file or directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := lint.ReadFiles(tt.files)
			if err == nil {
				t.Fatal("ReadFiles succeeded, want an error")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const head = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: x\n"
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{
			name: "an unclosed flow list",
			yaml: head + "spec:\n  template:\n    spec:\n      requirements:\n        - key: a\n          values: [\"amd64\"\n        - key: b\n",
			want: `f.yaml:10: malformed YAML: did not find expected ',' or ']' (in the block that starts at line 9)`,
		},
		{
			name: "a tab for indentation",
			yaml: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n\tname: x\n",
			want: "f.yaml:4: malformed YAML: found character that cannot start any token",
		},
		{
			name: "a duplicate key",
			yaml: "a: b\n---\n" + head + "  name: y\n",
			want: `f.yaml:7: malformed YAML: mapping key "name" already defined at line 6`,
		},
		{
			name: "a document that is a list",
			yaml: "- 1\n- 2\n",
			want: "f.yaml:1: document is not a Kubernetes object (a mapping with apiVersion and kind)",
		},
		{
			name: "a value of the wrong type",
			yaml: head + "spec:\n  weight: heavy\n",
			want: `f.yaml:6: NodePool "x": spec.weight: a string where int32 is wanted; fix the value (quote numbers that are strings, unquote counts)`,
		},
		{
			name: "an old API version",
			yaml: "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: old\n",
			want: `f.yaml:1: NodePool "old": apiVersion karpenter.sh/v1beta1 is not served by Karpenter v1.15; convert it to karpenter.sh/v1`,
		},
		{
			name: "an empty name",
			yaml: "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  labels: {}\n",
			want: `f.yaml:3: NodePool "": metadata.name: is empty; give the NodePool a name`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := lint.Parse("f.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestList reads NodePools through client-go's dynamic client from an HTTP server that
// answers the NodePool list as an API server does (a running lab is too heavy for a unit
// test), and checks the lint sees what it sees in the files.
func TestList(t *testing.T) {
	pools, _, err := lint.ReadFiles(files("overlap-tainted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	items := []any{}
	for _, p := range pools {
		items = append(items, p.NodePool)
	}
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.URL.Path != "/apis/karpenter.sh/v1/nodepools" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodePoolList", "metadata": map[string]any{}, "items": items,
		})
	}))
	defer srv.Close()
	client, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := lint.List(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/apis/karpenter.sh/v1/nodepools"}, paths); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(project(lint.Lint(pools)), project(lint.Lint(listed))); diff != "" {
		t.Errorf("findings from the API differ from the files' (-files +api):\n%s", diff)
	}
	for _, p := range listed {
		if p.Source != "cluster" {
			t.Errorf("%s: source %q, want cluster", p.NodePool.Name, p.Source)
		}
	}

	srv404 := httptest.NewServer(http.NotFoundHandler())
	defer srv404.Close()
	client, _ = dynamic.NewForConfig(&rest.Config{Host: srv404.URL})
	if _, err := lint.List(context.Background(), client); err == nil || !strings.Contains(err.Error(), "is Karpenter's NodePool CRD installed?") {
		t.Errorf("List without the CRD: %v", err)
	}
}

// TestSplitPoolsAdmitAnUnselectingPod grounds the custom-key finding in core's own
// admission: a pod that selects no team is compatible with both teams' pools.
func TestSplitPoolsAdmitAnUnselectingPod(t *testing.T) {
	pools, _, err := lint.ReadFiles(files("disjoint-teams.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelArchStable: "amd64"}}}
	for _, p := range pools {
		reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(p.NodePool.Spec.Template.Spec.Requirements...)
		if err := reqs.Compatible(scheduling.NewPodRequirements(pod), scheduling.AllowUndefinedWellKnownLabels); err != nil {
			t.Errorf("NodePool %s refuses a pod that selects no team: %v", p.NodePool.Name, err)
		}
	}
	teamB := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{"company.com/team": "b"}}}
	for _, p := range pools {
		reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(p.NodePool.Spec.Template.Spec.Requirements...)
		err := reqs.Compatible(scheduling.NewPodRequirements(teamB), scheduling.AllowUndefinedWellKnownLabels)
		if (err == nil) != (p.NodePool.Name == "team-b") {
			t.Errorf("NodePool %s and a team-b pod: compatible error %v", p.NodePool.Name, err)
		}
	}
}
