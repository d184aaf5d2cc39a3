package labs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/exercises"
	"github.com/karplab/karplab/labs/evidence"
	"github.com/karplab/karplab/solutions"
)

// applyFile applies one embedded manifest file (exercises or solutions) and reports it.
func (e *Env) applyFile(ctx context.Context, fsys fs.FS, path string, out io.Writer) error {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	objs, err := DecodeManifests(path, forAccount(data, e.Account))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, " applying %s\n", path)
	return e.Apply(ctx, objs, out)
}

// ApplyExercise applies a lab's exercise file (e.g. the workload) as staging does.
func (e *Env) ApplyExercise(ctx context.Context, lab, file string, out io.Writer) error {
	return e.applyFile(ctx, exercises.FS, lab+"/"+file, out)
}

// ApplySolution applies every manifest of a lab's solution directory.
func (e *Env) ApplySolution(ctx context.Context, lab string, out io.Writer) error {
	names, _, err := readManifests(solutions.FS, lab)
	if err != nil {
		return fmt.Errorf("reading the %s solution: %w", lab, err)
	}
	for _, name := range names {
		if err := e.applyFile(ctx, solutions.FS, name, out); err != nil {
			return err
		}
	}
	return nil
}

// waitFor polls cond every half second until it holds; see poll.
func waitFor(ctx context.Context, out io.Writer, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) error {
	return poll(ctx, out, timeout, 500*time.Millisecond, what, cond)
}

// poll calls cond every interval until it holds, printing its status line whenever it
// changes. It gives up when the status has not moved for timeout, and in any case after
// three times that: a step that keeps moving, such as consolidating one node at a time
// on a busy machine, may take longer than one that is stuck.
func poll(ctx context.Context, out io.Writer, timeout, interval time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) error {
	limit := 3 * timeout
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	last, moved := "", time.Now()
	for {
		ok, status, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if status != last {
			fmt.Fprintf(out, " ... %s\n", status)
			last, moved = status, time.Now()
		}
		if ok {
			return nil
		}
		if time.Since(moved) >= timeout {
			return fmt.Errorf("waiting for %s: gave up after %s without progress (last: %s)", what, timeout, last)
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("waiting for %s: %w", what, parent.Err())
			}
			return fmt.Errorf("waiting for %s: gave up after %s (last: %s)", what, limit, last)
		case <-time.After(interval):
		}
	}
}

// podPhases counts the pods matching selector in ns by phase (Pending split by whether
// the scheduler has marked them Unschedulable).
func (e *Env) podPhases(ctx context.Context, ns, selector string) (map[string]int, int, error) {
	pods, err := e.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, 0, err
	}
	counts := map[string]int{}
	for _, p := range pods.Items {
		phase := string(p.Status.Phase)
		if p.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		for _, c := range p.Status.Conditions {
			if p.Status.Phase == corev1.PodPending && c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				phase = "Pending (Unschedulable)"
			}
		}
		counts[phase]++
	}
	return counts, len(pods.Items), nil
}

// waitPods waits until want pods matching selector are in one of the phases.
func (e *Env) waitPods(ctx context.Context, out io.Writer, timeout time.Duration, ns, selector string, want int, phases ...string) error {
	if err := waitFor(ctx, out, timeout, fmt.Sprintf("%d pods %v", want, phases), func(ctx context.Context) (bool, string, error) {
		counts, total, err := e.podPhases(ctx, ns, selector)
		if err != nil {
			return false, "", err
		}
		n := 0
		for _, ph := range phases {
			n += counts[ph]
		}
		status := fmt.Sprintf("%d %s pods: %s", total, ns, formatCounts(counts))
		if counts["Pending (Unschedulable)"] > 0 {
			status += e.poolsNotReady(ctx)
		}
		return n == want && total == want, status, nil
	}); err != nil {
		return err
	}
	return e.waitRecorded(ctx, out, timeout, ns, selector)
}

// waitRecorded waits until the recorder's history shows every pod matching selector in the
// phase the API shows now: the graders read the history, so staging returns only once they
// see what it saw (on a busy machine the recorder can trail by seconds).
func (e *Env) waitRecorded(ctx context.Context, out io.Writer, timeout time.Duration, ns, selector string) error {
	return waitFor(ctx, out, timeout, "the recorder to catch up", func(ctx context.Context) (bool, string, error) {
		pods, err := e.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, "", err
		}
		recs, err := recorder.Read(e.Home.History())
		if err != nil {
			return false, "", err
		}
		h := evidence.DecodeHistory(recs)
		behind := 0
		for _, p := range pods.Items {
			v := h.Pods[string(p.UID)]
			if v == nil || v.Last().Status.Phase != p.Status.Phase {
				behind++
			}
		}
		return behind == 0, fmt.Sprintf("%d of %d pods not recorded as they are yet", behind, len(pods.Items)), nil
	})
}

// poolsNotReady says which NodePools Karpenter ignores and why (poolNotReady), as the
// cluster holds them now: what a learner would read in kubectl describe.
func (e *Env) poolsNotReady(ctx context.Context) string {
	pools, err := e.Dynamic.Resource(nodePoolsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	var out []string
	for _, u := range pools.Items {
		np, err := typedNodePool(u)
		if err != nil {
			continue
		}
		var class *unstructured.Unstructured
		if name := poolClassName(np); name != "" {
			class, _ = e.Dynamic.Resource(nodeClassGVR).Get(ctx, name, metav1.GetOptions{})
		}
		if why := poolNotReady(np, class); why != "" {
			out = append(out, why)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// formatCounts renders phase counts as "8 Pending (Unschedulable), 2 Running".
func formatCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	if len(parts) == 0 {
		return "none yet"
	}
	return strings.Join(parts, ", ")
}

// twoStepReady is the first half of a two-step lab's staging (`karplab lab run NAME` twice):
// the first run applies the lab's workload and says what to do (firstStep); later runs
// report a workload that has not settled yet (settleHint says what to apply). It returns
// true once the workload has rolled out: time for the lab's event.
func (e *Env) twoStepReady(ctx context.Context, out io.Writer, opts StageOptions, lab string, replicas int, firstStep, settleHint string) (bool, error) {
	_, err := e.Kube.AppsV1().Deployments(zibaNamespace).Get(ctx, renderWorker, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if err := e.ApplyExercise(ctx, lab, "workload.yaml", out); err != nil {
			return false, err
		}
		if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, replicas, "Pending (Unschedulable)", "Running"); err != nil {
			return false, err
		}
		fmt.Fprint(out, firstStep)
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading deployment %s/%s: %w", zibaNamespace, renderWorker, err)
	}
	counts, _, err := e.podPhases(ctx, zibaNamespace, renderSelector)
	if err != nil {
		return false, err
	}
	done, status, err := e.rolledOut(ctx, zibaNamespace, renderWorker)
	if err != nil || done {
		return done, err
	}
	fmt.Fprintf(out, "\nThe render workers are not settled yet (%s; %s): %s, wait, and run karplab lab run %s again.\n",
		status, formatCounts(counts), settleHint, lab)
	return false, nil
}

// skipTime moves the lab's clocks (the account's and Karpenter's) d forward, as karplab
// time skip does, and says what the span cost and what came due in it.
func (e *Env) skipTime(ctx context.Context, out io.Writer, d time.Duration) error {
	sk, err := cluster.SkipTime(ctx, e.Home, d)
	if err != nil {
		return fmt.Errorf("skipping lab time %s: %w", d, err)
	}
	fmt.Fprintf(out, " skipped lab time %s: $%.2f accrued, %s, %s came due\n", d, sk.CostUSD,
		nouns(len(sk.Alerts), "budget alert"), nouns(len(sk.Due), "NodeClaim decision"))
	return nil
}

// stagedAnnotation on the lab's namespace names the lab staged there; a reset deletes the
// namespace, and with it the mark.
const stagedAnnotation = "karplab.dev/staged-lab"

// stagedLab is the lab staged in this lab now ("" when none).
func (e *Env) stagedLab(ctx context.Context) (string, error) {
	ns, err := e.Kube.CoreV1().Namespaces().Get(ctx, zibaNamespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading namespace %s: %w", zibaNamespace, err)
	}
	return ns.Annotations[stagedAnnotation], nil
}

// markStaged records that lab is staged in this lab.
func (e *Env) markStaged(ctx context.Context, lab string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, stagedAnnotation, lab)
	_, err := e.Kube.CoreV1().Namespaces().Patch(ctx, zibaNamespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return fmt.Errorf("marking namespace %s staged by %s: %w", zibaNamespace, lab, err)
	}
	return nil
}
