package labs

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/exercises"
	"github.com/karplab/karplab/solutions"
)

// A learner's first moves are many, not the one each lab's loop test makes: a TODO left, a
// value far too broad, one too narrow, the fix on the wrong object, the README's fix applied
// twice. Each lab's moves test makes them in sequence on one staged lab, and after each
// grades until the check shows the ✗ line that names what is wrong; then the README's fix,
// without a reset, must pass (or a line must say a reset is needed and why).

// move is one first move of a learner: what they apply, and the ✗ line the check must show.
type move struct {
	name string
	// apply makes the move.
	apply func(t *testing.T, e *Env)
	// check and problem: the check that must fail, with a ✗ line containing problem.
	check, problem string
	// not, when set, must be in no ✗ line of that check (a line that is not true now).
	not string
	// passed are checks that must pass at the same time (the move's own fix took).
	passed []string
	// within bounds the grading that must show it.
	within time.Duration
}

// makeMoves makes each move in order on e and grades until each shows its ✗ line; it
// returns the last report.
func makeMoves(t *testing.T, e *Env, l *Lab, moves []move) *Report {
	t.Helper()
	var r *Report
	for _, m := range moves {
		start := time.Now()
		m.apply(t, e)
		r = checkShows(t, e, l, m.check, m.problem, m.within, m.passed...)
		c := checkOf(r, m.check)
		if m.not != "" && c != nil && strings.Contains(strings.Join(c.Problems, "\n"), m.not) {
			t.Errorf("move %q: check %s still says %q:\n%s", m.name, m.check, m.not, reportText(r))
		}
		t.Logf("move %q: %s showed %q after %s", m.name, m.check, m.problem, time.Since(start).Round(time.Second))
	}
	return r
}

// checkShows grades until check id fails with a ✗ line containing problem while the checks
// passed pass (or timeout, which fails the test).
func checkShows(t *testing.T, e *Env, l *Lab, id, problem string, timeout time.Duration, passed ...string) *Report {
	t.Helper()
	var r *Report
	for deadline := time.Now().Add(timeout); ; time.Sleep(2 * time.Second) {
		r = checkUntil(t, e, l, false, 0)
		ok := true
		for _, p := range passed {
			ok = ok && checkOf(r, p) != nil && checkOf(r, p).Passed
		}
		if c := checkOf(r, id); ok && c != nil && !c.Passed && strings.Contains(strings.Join(c.Problems, "\n"), problem) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, check %s shows no ✗ line with %q:\n%s", timeout, id, problem, reportText(r))
		}
	}
}

func checkOf(r *Report, id string) *Check {
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return &r.Checks[i]
		}
	}
	return nil
}

// applyEdited applies a lab's exercise or solution file (fsys: exercises.FS or
// solutions.FS) with each edit's old text replaced by its new, as a learner's own edit of it.
func applyEdited(t *testing.T, e *Env, fsys fs.FS, path string, edits ...[2]string) {
	t.Helper()
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(forAccount(data, e.Account))
	for _, ed := range edits {
		if !strings.Contains(s, ed[0]) {
			t.Fatalf("%s has no %q to edit", path, ed[0])
		}
		s = strings.Replace(s, ed[0], ed[1], 1)
	}
	objs, err := DecodeManifests(path, []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(t.Context(), objs, testOut(t)); err != nil {
		t.Fatalf("applying the edited %s: %v", path, err)
	}
}

func applyingEdited(fsys fs.FS, path string, edits ...[2]string) func(t *testing.T, e *Env) {
	return func(t *testing.T, e *Env) { applyEdited(t, e, fsys, path, edits...) }
}

func applyingSolution(lab string) func(t *testing.T, e *Env) {
	return func(t *testing.T, e *Env) {
		if err := e.ApplySolution(t.Context(), lab, testOut(t)); err != nil {
			t.Fatal(err)
		}
	}
}

// Both file systems, named for the tables.
var exercisesFS, solutionsFS fs.FS = exercises.FS, solutions.FS

// learnerDir is a folder where the learner ran karplab lab get lab, as the README has them.
func learnerDir(t *testing.T, lab string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := runShell(t, kubectlDir(t), `cd "$2" && karplab lab get "$3"`, dir, lab); err != nil {
		t.Fatalf("karplab lab get %s: %v\n%s", lab, err, out)
	}
	return dir
}

// doAsHinted runs commands, which the hint of check id in r must contain as typed, in dir
// (a learner's shell after eval "$(karplab env)").
func doAsHinted(t *testing.T, r *Report, id, dir string, commands ...string) {
	t.Helper()
	c := checkOf(r, id)
	if c == nil || c.Passed {
		t.Fatalf("check %s does not fail:\n%s", id, reportText(r))
	}
	for _, cmd := range commands {
		if !strings.Contains(c.Hint, cmd) {
			t.Fatalf("check %s's hint does not say %q: %q", id, cmd, c.Hint)
		}
	}
	script := fmt.Sprintf(`cd "$2" && %s`, strings.Join(commands, " && "))
	out, err := runShell(t, kubectlDir(t), script, dir)
	if err != nil {
		t.Fatalf("doing what the hint says (%s): %v\n%s", strings.Join(commands, "; "), err, out)
	}
	t.Logf("did what %s's hint says: %s\n%s", id, strings.Join(commands, "; "), out)
}
