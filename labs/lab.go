package labs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/karplab/karplab/labs/evidence"
)

// Lab is one scenario: the incident it stages, the learner's exercise and the reference
// solution, and the grader that reads the evidence.
type Lab struct {
	// Name is how the CLI names it ("happy-path"); exercises/NAME and solutions/NAME hold its files.
	Name string
	// Position is where the lab comes in the course, from 1: `karplab lab list` and All
	// order by it, so a new lab is its one register call.
	Position int
	Title    string
	// Summary says, in a few lines, what the learner proves.
	Summary string
	// Checklist names the course checklist items this lab rehearses.
	Checklist []string
	// Stage applies the scenario's workload and faults: what `karplab lab run` does.
	Stage func(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error
	// TwoStep labs are run twice: the second `karplab lab run` brings the lab's event (a
	// publication, an interruption) once the learner's fix is in place. Any other lab, run
	// again without a reset, says it is staged already and changes nothing.
	TwoStep bool
	// Grade turns evidence into the checklist.
	Grade func(g *Grading) []Check
}

// StageOptions are `karplab lab run`'s choices.
type StageOptions struct {
	// Solution also applies the reference solution, for watching the scenario end to end.
	Solution bool
	// Wait bounds how long staging waits for the scenario to reach its starting point.
	Wait time.Duration
}

// Grading is what a grader reads: the snapshot, its correlation, and the lab's own files.
type Grading struct {
	Snapshot *evidence.Snapshot
	Evidence *evidence.Evidence
	hist     *evidence.History
	// Live is the running lab, for graders that must look at current objects; nil in
	// offline tests.
	Env *Env
	Ctx context.Context
}

var registry = map[string]*Lab{}

// register adds a lab; each scenario file registers its own in init.
func register(l *Lab) {
	if _, dup := registry[l.Name]; dup {
		panic("labs: duplicate lab " + l.Name)
	}
	registry[l.Name] = l
}

// All returns the labs in the order a course takes them (by Position; the name breaks a tie,
// which TestCoursePositions forbids).
func All() []*Lab {
	out := make([]*Lab, 0, len(registry))
	for _, l := range registry {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Position != out[j].Position {
			return out[i].Position < out[j].Position
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Get returns the named lab or an error listing the known ones.
func Get(name string) (*Lab, error) {
	if l, ok := registry[name]; ok {
		return l, nil
	}
	var names []string
	for _, l := range All() {
		names = append(names, l.Name)
	}
	return nil, fmt.Errorf("no lab named %q; the labs are: %s (karplab lab list)", name, strings.Join(names, ", "))
}

// Run stages the lab on a running lab environment.
func (l *Lab) Run(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if opts.Wait == 0 {
		opts.Wait = 3 * time.Minute
	}
	staged, err := e.stagedLab(ctx)
	if err != nil {
		return err
	}
	switch {
	case staged != "" && staged != l.Name:
		return fmt.Errorf("this lab holds %s's staging: karplab reset first, then karplab lab run %s", staged, l.Name)
	case staged == l.Name && !l.TwoStep && !opts.Solution:
		fmt.Fprintf(out, "%s is staged already, and running it again would undo what you applied since: karplab check %s grades what you have; karplab reset stages it from the start\n", l.Name, l.Name)
		return nil
	}
	fmt.Fprintf(out, "Staging %s: %s\n", l.Name, l.Title)
	defer e.timed("stage", time.Now())
	if err := l.Stage(ctx, e, out, opts); err != nil {
		return fmt.Errorf("staging %s: %w", l.Name, err)
	}
	return e.markStaged(ctx, l.Name)
}

// Check grades the lab from both control planes as they are now.
func (l *Lab) Check(ctx context.Context, e *Env) (*Report, error) {
	defer e.timed("check", time.Now())
	snap, err := e.TakeSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	return l.GradeSnapshot(ctx, e, snap), nil
}

// GradeSnapshot grades a snapshot (e may be nil offline).
func (l *Lab) GradeSnapshot(ctx context.Context, e *Env, snap *evidence.Snapshot) *Report {
	return newReport(l, snap.TakenAt, l.Grade(newGrading(ctx, e, snap)))
}

func newGrading(ctx context.Context, e *Env, snap *evidence.Snapshot) *Grading {
	h := evidence.DecodeHistory(snap.History)
	return &Grading{Snapshot: snap, Evidence: evidence.CorrelateHistory(h, snap), hist: h, Env: e, Ctx: ctx}
}

// grading reads both control planes as they are now, for staging that waits on what the
// graders will see.
func (e *Env) grading(ctx context.Context) (*Grading, error) {
	snap, err := e.TakeSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	return newGrading(ctx, e, snap), nil
}

// readManifests reads and decodes every YAML file of a directory of fsys, in name order.
func readManifests(fsys fs.FS, dir string) ([]string, [][]byte, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	var docs [][]byte
	for _, e := range entries {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		b, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, nil, err
		}
		names = append(names, dir+"/"+e.Name())
		docs = append(docs, b)
	}
	return names, docs, nil
}
