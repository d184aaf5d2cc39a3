package labs

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karplab/karplab/labs/evidence"
)

func TestIntegrationHappyPathSolutionPasses(t *testing.T) {
	happyPathSolutionPasses(t, freshLab(t))
}

func happyPathSolutionPasses(t *testing.T, e *Env) {
	l, _ := Get("happy-path")
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// Graded at once, as a learner does: lab run returns only once the record has settled.
	r, err := l.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Passed {
		t.Fatalf("the solution does not pass right after lab run:\n%s", reportText(r))
	}
	// The course's describe command names a pod that exists, and its chain is traced.
	snap, err := e.TakeSnapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var row *evidence.PodRow
	for _, p := range evidence.Correlate(snap).Pods {
		if p.Namespace == zibaNamespace && p.Name == courseExample {
			row = &p
		}
	}
	if row == nil || row.Phase != "Running" || row.NodeClaim == "" || row.InstanceID == "" {
		t.Errorf("the course's example pod's evidence row: %+v", row)
	}
}

// The learner's loop, with the many first moves a learner makes, in sequence on one staged
// lab: limits far too narrow; the exercise's nodepool.yaml as it is ("it applies, and
// Karpenter will even launch machines for it"), which check fails on its governance; the
// cost tags on the wrong object; limits ten times the course's. Then the README's fix,
// applied twice: drift replaces the ungoverned machines, and with them the course's bare
// example pod goes for good; check says so and how to make it again, and doing exactly that,
// check passes on what runs now, listing the replaced machines as fixed.
func TestIntegrationHappyPathExerciseFailsThenFixPasses(t *testing.T) {
	e := freshLab(t)
	l := happyPathStaged(t, e)
	const np = "happy-path/nodepool.yaml"
	courseLimits := "  limits:\n    cpu: \"200\"\n    memory: 800Gi\n"
	tags := "  tags:\n    application: ziba\n    environment: production\n    owner: platform\n"
	makeMoves(t, e, l, []move{{name: "limits far too narrow", apply: applyingEdited(solutionsFS, np, [2]string{courseLimits, "  limits:\n    cpu: \"1\"\n    memory: 4Gi\n"}),
		check: "workload-running", problem: "limits.cpu 1 cannot hold the 10 replicas", within: time.Minute}})
	before := happyPathExerciseApplied(t, e, l) // the TODOs left
	makeMoves(t, e, l, []move{
		{name: "the cost tags on the wrong object (the NodePool's labels)", apply: applyingEdited(solutionsFS, np,
			[2]string{tags, ""}, [2]string{"        workload.ziba.dev/tier: general\n", "        workload.ziba.dev/tier: general\n        application: ziba\n        environment: production\n        owner: platform\n"}),
			check: "cost-tags", problem: "lacks application, environment, owner", passed: []string{"machines-governed"}, within: 3 * time.Minute},
		{name: "limits ten times the course's", apply: applyingEdited(solutionsFS, np, [2]string{courseLimits, "  limits:\n    cpu: \"2000\"\n    memory: 8000Gi\n"}),
			check: "nodepool-bounded", problem: "limits.cpu 2k is 10 times the course's 200", within: time.Minute},
	})
	start := time.Now()
	applyingSolution("happy-path")(t, e)
	applyingSolution("happy-path")(t, e)
	r := checkShows(t, e, l, "workload-running", courseExample+" is gone", 6*time.Minute, "nodepool-bounded", "cost-tags")
	keepSnapshot(t, e, "happy-learner")
	doAsHinted(t, r, "workload-running", learnerDir(t, "happy-path"), "kubectl apply -f happy-path/workload.yaml")
	if r = checkUntil(t, e, l, true, 3*time.Minute); !r.Passed {
		t.Fatalf("after the example pod was made again, check fails:\n%s\nbefore the fix:\n%s", reportText(r), reportText(before))
	}
	t.Logf("learner's loop: happy-path passed %s after the fix began", time.Since(start).Round(time.Second))
	// Run again without a reset, the lab says it is staged and undoes nothing.
	var again strings.Builder
	if err := l.Run(t.Context(), e, &again, StageOptions{Wait: time.Minute}); err != nil || !strings.Contains(again.String(), "staged already") {
		t.Errorf("a second lab run: %v\n%s", err, again.String())
	}
	if err := (&Lab{Name: "other"}).Run(t.Context(), e, &again, StageOptions{}); err == nil || !strings.Contains(err.Error(), "karplab reset first") {
		t.Errorf("another lab over this one's staging: %v", err)
	}
	for _, c := range r.Checks {
		if c.ID == "machines-governed" && !strings.Contains(strings.Join(c.Evidence, "\n"), "fixed: ") {
			t.Errorf("machines-governed does not list the replaced machine as fixed:\n%s", reportText(r))
		}
	}
}

// happyPathExerciseFails stages the lab on e, fresh from a reset, and applies the untouched
// exercise: its pods run, ungoverned, and check fails on its governance.
func happyPathExerciseFails(t *testing.T, e *Env) (*Lab, *Report) {
	l := happyPathStaged(t, e)
	return l, happyPathExerciseApplied(t, e, l)
}

// happyPathStaged stages the lab on e, fresh from a reset.
func happyPathStaged(t *testing.T, e *Env) *Lab {
	// A reset removes the example pod an earlier staging made with the lab's namespace.
	if _, err := e.Kube.CoreV1().Pods(zibaNamespace).Get(t.Context(), courseExample, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after a reset, pod %s/%s: %v (want NotFound)", zibaNamespace, courseExample, err)
	}
	l, _ := Get("happy-path")
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	return l
}

// happyPathExerciseApplied applies the untouched exercise: its pods run, ungoverned, and
// check fails on its governance.
func happyPathExerciseApplied(t *testing.T, e *Env, l *Lab) *Report {
	out := testOut(t)
	// The untouched exercise applies and even runs the pods, ungoverned.
	if err := e.ApplyExercise(t.Context(), "happy-path", "nodepool.yaml", out); err != nil {
		t.Fatal(err)
	}
	if err := e.waitPods(t.Context(), out, 2*time.Minute, zibaNamespace, renderSelector, renderReplicas, "Running"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Kube.CoreV1().Pods(zibaNamespace).Get(t.Context(), courseExample, metav1.GetOptions{}); err != nil {
		t.Errorf("kubectl describe pod -n %s %s would fail: %v", zibaNamespace, courseExample, err)
	}
	r := checkUntil(t, e, l, true, 10*time.Second) // it must not come to pass
	if r.Passed {
		t.Fatalf("the untouched exercise passes:\n%s", reportText(r))
	}
	want := []string{"nodepool-bounded", "limits-respected", "machines-governed", "cost-tags"}
	if diff := cmp.Diff(want, r.Failed()); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s\n%s", diff, reportText(r))
	}
	return r
}

// The course's example pod shares the replicas' name prefix but no ReplicaSet: the happy
// path's workload-running check requires it to run without counting it as a replica.
func TestCheckRunningCourseExample(t *testing.T) {
	replicas := func(n int, phase string) []evidence.PodRow {
		var out []evidence.PodRow
		for i := range n {
			out = append(out, evidence.PodRow{Namespace: zibaNamespace, Name: renderWorker + "-6c6b9cc854-" + string(rune('a'+i)),
				Owner: "ReplicaSet/" + renderWorker + "-6c6b9cc854", Phase: phase})
		}
		return out
	}
	example := func(phase string) evidence.PodRow {
		return evidence.PodRow{Namespace: zibaNamespace, Name: courseExample, Phase: phase}
	}
	tests := []struct {
		name       string
		pods       []evidence.PodRow
		wantPass   bool
		wantReason string
	}{
		{name: "replicas and example running", pods: append(replicas(10, "Running"), example("Running")),
			wantPass: true, wantReason: "10 of 10 ziba/ziba-render-worker pods Running"},
		{name: "no example (older runs)", pods: replicas(10, "Running"),
			wantPass: true, wantReason: "10 of 10 ziba/ziba-render-worker pods Running"},
		{name: "example pending", pods: append(replicas(10, "Running"), example("Pending")),
			wantReason: "10 of 10 ziba/ziba-render-worker pods Running, 1 Pending"},
		{name: "example is not a replica", pods: append(replicas(9, "Running"), example("Running")),
			wantReason: "9 of 10 ziba/ziba-render-worker pods Running, 0 Pending"},
		// A drift replacement evicted the bare example pod: nothing makes it again.
		{name: "example gone", pods: append(replicas(10, "Running"), example("Deleted")),
			wantReason: "10 of 10 ziba/ziba-render-worker pods Running, and the course's example pod does not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &evidence.Evidence{Pods: tt.pods}
			c := exampleRuns(ev, checkRunning(ev, zibaNamespace, renderWorker, renderReplicas, courseExample))
			if c.Passed != tt.wantPass || c.Reason != tt.wantReason {
				t.Errorf("passed %t reason %q, want %t %q", c.Passed, c.Reason, tt.wantPass, tt.wantReason)
			}
			if x := c.contradictions(); len(x) > 0 {
				t.Errorf("contradictions: %v", x)
			}
		})
	}
}
