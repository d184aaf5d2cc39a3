package labs

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/labs/evidence"
)

// The runaway-demand lab: an unbounded NodePool meets a bad autoscaler target (300 render
// workers) and a pod no machine can hold. The learner bounds the pool, sets a cost alert,
// then rehearses the surge: Karpenter stops at the limits counting NodeClaims in flight, the
// alert fires on the skipped hours' spend before it crosses the budget, and demand recovers.
const (
	runawayLab    = "runaway-demand"
	runawayHonest = 4
	runawaySurge  = 300
	// surgeFloor is how many render workers at once count as the surge having happened.
	surgeFloor = 100
	giantPod   = "ziba-render-giant"
	// runawaySkip is how long the drill lets the surge bill (lab time: the account's clock
	// and Karpenter's).
	runawaySkip = 4 * time.Hour
)

// runawayBudget is solutions/runaway-demand/commands.sh's budget: a monthly $5 for the pool's
// machines, alerting at 50%. The surge (200 vCPU at the limit) crosses $2.50 within the
// skipped hours; the honest four workers would take days.
var runawayBudget = budgets.Spec{
	Name: generalPool, LimitUSD: 5, TimeUnit: budgets.Monthly,
	CostFilters: map[string][]string{budgets.FilterTagKeyValue: {"user:karpenter.sh/nodepool$" + generalPool}},
	Notifications: []budgets.NotificationSpec{{Type: budgets.Actual, Threshold: 50,
		Subscribers: []budgets.Subscriber{{SubscriptionType: "EMAIL", Address: "platform@ziba.dev"}}}},
}

func init() {
	register(&Lab{
		Name:     runawayLab,
		Position: 11,
		Title:    "Runaway demand: a bad autoscaler target and an impossible pod against limits and a cost alert",
		Summary: `The course's NodePool lost its limits, and last quarter an autoscaler asked for 300 render
workers while a one-off pod asked for 256 vCPU. Bound the pool (spec.limits), set a cost
alert (karplab ec2 budget set), then rehearse the surge: apply it, skip the account's clock
(karplab time skip 4h) and recover. check proves the peak, counting NodeClaims in flight,
stayed within the limits, no machine launched over them, the alert fired before the spend
crossed the budget, and demand came back to its honest size.`,
		Checklist: []string{
			"Cost alerts and aggregate capacity limits cover reconciliation races and unexpected demand.",
		},
		Stage: stageRunaway,
		Grade: gradeRunaway,
	})
}

func gradeRunaway(g *Grading) []Check {
	return []Check{
		checkSurgeRehearsed(g),
		checkBounded(g, generalPool),
		checkPeakWithinLimits(g, generalPool),
		checkWithinLimits(g, generalPool),
		checkAlertBeforeThreshold(g, generalPool),
		checkDemandRecovered(g),
		checkNoLeaks(g.Evidence),
	}
}

// workerPeak is the most render workers that existed at once from since on (zero: all the
// history), and when that was.
func workerPeak(ev *evidence.Evidence, since time.Time) (int, time.Time) {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if !isReplicaOf(p, renderWorker) {
			continue
		}
		edges = append(edges, edge{p.Created, 1})
		if p.DeletedAt != nil {
			edges = append(edges, edge{*p.DeletedAt, -1})
		}
	}
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].at.Before(edges[j].at) })
	n, peak, at := 0, 0, time.Time{}
	for _, e := range edges {
		if n += e.d; n > peak && !e.at.Before(since) {
			peak, at = n, e.at
		}
	}
	return peak, at
}

// checkSurgeRehearsed: the drill happened since the pool's limits took effect: hundreds of
// workers at once, and the giant pod. A surge before the limits is history.
func checkSurgeRehearsed(g *Grading) Check {
	const id, title = "surge-rehearsed", "The surge was rehearsed: hundreds of render workers at once and a pod no machine can hold"
	var since time.Time
	if np, ok := g.nodePool(generalPool); ok && len(np.Spec.Limits) > 0 {
		since = g.limitsSince(generalPool)
	}
	peak, at := workerPeak(g.Evidence, since)
	var giants []evidence.PodRow
	for _, p := range g.Evidence.Pods {
		if p.Namespace == zibaNamespace && p.Name == giantPod && (p.DeletedAt == nil || !p.DeletedAt.Before(since)) {
			giants = append(giants, p)
		}
	}
	var context []string
	if before, beforeAt := workerPeak(g.Evidence, time.Time{}); !since.IsZero() && before >= surgeFloor && beforeAt.Before(since) {
		context = append(context, fmt.Sprintf("an earlier surge of %d workers at once (%s) ran before the limits took effect at %s: history, not graded", before, stamp(&beforeAt), stamp(&since)))
	}
	hint := "Bound the pool and set the alert first, then kubectl apply -f " + runawayLab + "/surge.yaml"
	if len(context) > 0 {
		hint = "Rehearse the surge again with the limits in place, as README.md says: recover, remove the first surge's machines, then kubectl apply -f " + runawayLab + "/surge.yaml"
	}
	if peak < surgeFloor || len(giants) == 0 {
		reason := fmt.Sprintf("at most %d render workers at once, %s", peak, nouns(len(giants), giantPod+" pod"))
		if !since.IsZero() {
			reason += " since the limits took effect (" + stamp(&since) + ")"
		}
		return failWith(id, title, reason, hint, []string{"not rehearsed: " + reason}, context)
	}
	said := "-"
	for _, p := range giants {
		if p.KarpenterMessage != "" {
			said = p.KarpenterMessage
		}
	}
	return pass(id, title, fmt.Sprintf("%d render workers at once (%s), and %s", peak, stamp(&at), giantPod),
		append([]string{"Karpenter on " + giantPod + ": " + said}, context...)...)
}

// courseLimits are the course's NodePool limits (the seed's spec.limits): the bound the
// drill is judged against, whatever limits the pool sets.
var courseLimits = karpv1.Limits{corev1.ResourceCPU: resource.MustParse("200"), corev1.ResourceMemory: resource.MustParse("800Gi")}

// checkPeakWithinLimits: since the pool's limits took effect, its NodeClaims, in flight or
// running, together held no more than the limits at any creation of one: the reconciliation
// race the course names, where claims still launching are not yet counted by a controller
// that reads only nodes. The limits must have been exercised: a surge run before they
// existed is history, and one that launched nothing since proves nothing. Limits far above
// the course's bound nothing, and the surge shows it; limits far below it starve the pool.
func checkPeakWithinLimits(g *Grading, pool string) Check {
	const id, title = "peak-within-limits", "At its peak, counting NodeClaims still in flight, the pool stayed within its limits"
	claims := poolClaims(g, pool)
	var span limitSpan
	for _, c := range claims {
		span.add(c.created, c.deleted, c.cpu.MilliValue(), c.memory.Value())
	}
	course := limitsText(courseLimits)
	np, ok := g.nodePool(pool)
	if !ok || len(np.Spec.Limits) == 0 {
		_, all, _ := span.peaks(time.Time{})
		return fail(id, title, fmt.Sprintf("NodePool %s sets no limits; peak %s in %s (%s)", pool, all, nouns(int(all.n), "NodeClaim"), stamp(&all.at)),
			"Without spec.limits every pending pod becomes a machine: restore the course's limits (cpu 200, memory 800Gi) in "+runawayLab+"/nodepool.yaml and kubectl apply -f "+runawayLab+"/nodepool.yaml before the surge.",
			fmt.Sprintf("NodePool %s sets no spec.limits (the course's: %s)", pool, course))
	}
	if len(claims) == 0 {
		return fail(id, title, "no NodeClaim of "+pool+" was recorded", "Stage the lab: karplab lab run "+runawayLab, "no NodeClaim of "+pool+" to count")
	}
	since := g.limitsSince(pool)
	_, after, judged := span.peaks(since)
	limits := limitsText(np.Spec.Limits)
	context := g.limitsHistory(pool, since)
	off := offCourse(np.Spec.Limits)
	const hintCourse = "Set the course's limits (cpu \"200\", memory 800Gi) in " + runawayLab + "/nodepool.yaml and kubectl apply -f " + runawayLab + "/nodepool.yaml, then rehearse the surge again as README.md says."
	if judged == 0 {
		what := fmt.Sprintf("no NodeClaim was created since the limits took effect (%s): the surge has not met %s yet", stamp(&since), limits)
		hint := "Rehearse the surge with the limits in place, on the honest demand's machines: kubectl apply -f " + runawayLab + "/workload.yaml and kubectl delete pod -n ziba " + giantPod +
			" (if the first surge is still there), let Karpenter remove the surge's machines (karplab time skip 5m, then kubectl get nodeclaims until few are left), then kubectl apply -f " + runawayLab + "/surge.yaml."
		if len(off) > 0 {
			hint = hintCourse
		}
		return failWith(id, title, what, hint, append(off, "untested: "+limits+" have bounded no surge yet"), context)
	}
	reason := fmt.Sprintf("since the limits took effect (%s): peak %s in %s (%s) against %s", stamp(&since), after, nouns(int(after.n), "NodeClaim"), stamp(&after.at), limits)
	if over := after.over(np.Spec.Limits); len(over) > 0 {
		return failWith(id, title, reason, "The limits must be in place before the demand arrives: Karpenter checks them when it creates a NodeClaim, not afterwards.", over, context)
	}
	var problems []string
	if cpu := courseLimits[corev1.ResourceCPU]; after.cpu > cpu.MilliValue() {
		problems = append(problems, fmt.Sprintf("the surge bought %s vCPU, beyond the course's bound of %s: %s bounded nothing", resource.NewMilliQuantity(after.cpu, resource.DecimalSI), cpu.String(), limits))
	}
	if mem := courseLimits[corev1.ResourceMemory]; after.mem > mem.Value() {
		problems = append(problems, fmt.Sprintf("the surge bought %.0fGi memory, beyond the course's bound of %s: %s bounded nothing", float64(after.mem)/(1<<30), mem.String(), limits))
	}
	if problems = append(problems, off...); len(problems) > 0 {
		return failWith(id, title, reason, hintCourse, problems, context)
	}
	return pass(id, title, reason, context...)
}

// offCourse lists the limits under half the course's or over twice it: a pool that cannot
// grow for honest demand is an outage waiting, and one that may buy ten times the course's
// capacity is not bounded.
func offCourse(limits karpv1.Limits) []string {
	var out []string
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := limits[res]
		want := courseLimits[res]
		if !ok {
			continue
		}
		ratio := q.AsApproximateFloat64() / want.AsApproximateFloat64()
		switch {
		case ratio < 0.5:
			out = append(out, fmt.Sprintf("limits.%s %s is %.0f%% of the course's %s: the pool cannot grow for honest demand", res, q.String(), ratio*100, want.String()))
		case ratio > 2:
			out = append(out, fmt.Sprintf("limits.%s %s is %.0f times the course's %s: it bounds nothing the surge asks for", res, q.String(), ratio, want.String()))
		}
	}
	return out
}

// coversPool reports whether a budget counts the pool's machines: no filter, or a
// TagKeyValue filter naming the pool.
func coversPool(b budgets.Budget, pool string) bool {
	vals, ok := b.CostFilters[budgets.FilterTagKeyValue]
	if !ok {
		return len(b.CostFilters) == 0
	}
	for _, v := range vals {
		if v == "user:"+karpv1.NodePoolLabelKey+"$"+pool {
			return true
		}
	}
	return false
}

// checkAlertBeforeThreshold: a budget counts the pool's spend, and one of its alerts fired
// while the actual spend was still under the budget's limit.
func checkAlertBeforeThreshold(g *Grading, pool string) Check {
	const id, title = "cost-alert-before-threshold", "A cost alert on the pool's spend fired before the spend crossed the budget"
	hint := "karplab ec2 budget set " + pool + " --period monthly --limit 5 --alert 50% --tag karpenter.sh/nodepool=" + pool + ", then rehearse the surge and karplab time skip 4h."
	var seen, late []string
	for _, b := range g.Snapshot.Budgets {
		if !coversPool(b, pool) {
			late = append(late, fmt.Sprintf("budget %s does not count %s's machines (filters %v)", b.Name, pool, b.CostFilters))
			continue
		}
		line := fmt.Sprintf("budget %s: %s limit $%.2f, actual $%.4f, forecast $%.2f, burning $%.4f/h", b.Name, b.TimeUnit, b.LimitUSD, b.ActualUSD, b.ForecastUSD, b.USDPerHour)
		seen = append(seen, line)
		for _, a := range b.Alerts {
			alert := fmt.Sprintf("%s alert at %s %s (threshold $%.2f): actual spend then $%.4f of $%.2f, forecast $%.2f",
				a.NotificationType, a.ComparisonOperator, thresholdText(a), a.ThresholdUSD, a.ActualUSD, a.LimitUSD, a.ForecastUSD)
			if a.ActualUSD < a.LimitUSD && a.ComparisonOperator == budgets.GreaterThan {
				return pass(id, title, fmt.Sprintf("budget %s alerted at %s (lab time), with $%.4f of $%.2f spent", b.Name, a.Time.Format(time.RFC3339), a.ActualUSD, a.LimitUSD),
					alert, line)
			}
			late = append(late, alert+": too late, the spend had crossed the budget")
		}
	}
	if len(g.Snapshot.Budgets) == 0 {
		return fail(id, title, "the account has no budget", hint, "no budget counts "+pool+"'s spend: karplab ec2 budget list shows none")
	}
	if len(late) == 0 {
		late = []string{"no alert has fired yet: the spend has not reached an alert's threshold"}
	}
	return failWith(id, title, "no alert fired before the spend crossed its budget", hint, first(late, 6), first(seen, 4))
}

func thresholdText(a budgets.Alert) string {
	if a.ThresholdType == budgets.AbsoluteValue {
		return fmt.Sprintf("$%g", a.Threshold)
	}
	return fmt.Sprintf("%g%%", a.Threshold)
}

// checkDemandRecovered: the workers are back at their honest count, all Running, the giant
// pod is gone and nothing in the namespace waits.
func checkDemandRecovered(g *Grading) Check {
	const id, title = "demand-recovered", "Demand recovered: the honest workers run, the impossible pod is gone, nothing waits"
	ev := g.Evidence
	var running, waiting, giants []string
	for _, p := range ev.Pods {
		if p.Namespace != zibaNamespace || p.DeletedAt != nil || p.TerminatingAt != nil {
			continue
		}
		switch {
		case p.Name == giantPod:
			giants = append(giants, fmt.Sprintf("%s %s: %s", p.Name, p.Phase, evidence.Dash(p.KarpenterMessage)))
		case p.Phase == "Running" && isReplicaOf(p, renderWorker):
			running = append(running, p.Name)
		case p.Phase == "Pending":
			waiting = append(waiting, fmt.Sprintf("%s Pending: %s", p.Name, evidence.Dash(p.KarpenterMessage)))
		}
	}
	giant := giantPod + " gone"
	if len(giants) > 0 {
		giant = giantPod + " still there"
	}
	reason := fmt.Sprintf("%d render workers Running (honest size %d), %d Pending, %s", len(running), runawayHonest, len(waiting), giant)
	if len(running) == runawayHonest && len(waiting) == 0 && len(giants) == 0 {
		return pass(id, title, reason)
	}
	problems := append(giants, waiting...)
	if len(running) != runawayHonest {
		problems = append(problems, fmt.Sprintf("%d render workers Running, not the honest %d", len(running), runawayHonest))
	}
	return fail(id, title, reason,
		"Recover at the earliest failing boundary, the demand: kubectl apply -f "+runawayLab+"/workload.yaml and kubectl delete pod -n ziba "+giantPod+"; widening the pool only buys the mistake.",
		first(problems, 6)...)
}

func stageRunaway(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	for _, f := range []string{"nodepool.yaml", "workload.yaml"} {
		if err := e.ApplyExercise(ctx, runawayLab, f, out); err != nil {
			return err
		}
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, runawayHonest, "Running"); err != nil {
		return err
	}
	if !opts.Solution {
		fmt.Fprintf(out, "\nFour render workers run on a NodePool with no limits and an account with no cost alert.\nYour task: karplab lab get %s; bound nodepool.yaml and apply it, set a budget (karplab ec2 budget set), then rehearse surge.yaml as README.md says, and karplab check %s\n", runawayLab, runawayLab)
		return nil
	}
	if err := e.ApplySolution(ctx, runawayLab, out); err != nil {
		return err
	}
	b, err := e.Admin.SetBudget(ctx, runawayBudget)
	if err != nil {
		return fmt.Errorf("setting the solution's budget: %w", err)
	}
	fmt.Fprintf(out, " budget %s: %s limit $%.2f, alert at %g%% of actual spend\n", b.Name, strings.ToLower(b.TimeUnit), b.LimitUSD, runawayBudget.Notifications[0].Threshold)
	if err := e.drillRunaway(ctx, out, opts.Wait); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe surge stopped at the limits, the alert fired, and the workers are back to four. Grade it: karplab check %s\n", runawayLab)
	return nil
}

// drillRunaway is the README's rehearsal: the surge, Karpenter settling against whatever
// bounds the pool, the account's clock skipped so the surge bills, then the honest demand
// restored.
func (e *Env) drillRunaway(ctx context.Context, out io.Writer, wait time.Duration) error {
	if err := e.ApplyExercise(ctx, runawayLab, "surge.yaml", out); err != nil {
		return err
	}
	if err := e.waitSurgeSettled(ctx, out, max(wait, 3*time.Minute)); err != nil {
		return err
	}
	if err := e.skipTime(ctx, out, runawaySkip); err != nil {
		return err
	}
	if err := e.ApplyExercise(ctx, runawayLab, "workload.yaml", out); err != nil {
		return err
	}
	err := e.Kube.CoreV1().Pods(zibaNamespace).Delete(ctx, giantPod, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting pod %s: %w", giantPod, err)
	}
	fmt.Fprintf(out, "pod/%s deleted\n", giantPod)
	if err := e.waitPods(ctx, out, max(wait, 3*time.Minute), zibaNamespace, renderSelector, runawayHonest, "Running"); err != nil {
		return err
	}
	return e.waitRecorded(ctx, out, wait, zibaNamespace, "app.kubernetes.io/name="+giantPod)
}

// waitSurgeSettled waits until Karpenter has done all it will for the surge: every
// surge pod exists, every NodeClaim is initialized, and their number has held for
// surgeQuiet. With limits some workers stay Pending; without, only the giant pod does.
func (e *Env) waitSurgeSettled(ctx context.Context, out io.Writer, timeout time.Duration) error {
	const surgeQuiet = 15 * time.Second
	lastCount, since := -1, time.Now()
	return poll(ctx, out, timeout, time.Second, "Karpenter to settle the surge", func(ctx context.Context) (bool, string, error) {
		counts, total, err := e.podPhases(ctx, zibaNamespace, renderSelector)
		if err != nil {
			return false, "", err
		}
		claims, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		initialized := 0
		for _, u := range claims.Items {
			if st, _ := condition(u, "Initialized"); st == "True" {
				initialized++
			}
		}
		n := len(claims.Items)
		if n != lastCount || initialized != n {
			lastCount, since = n, time.Now()
		}
		status := fmt.Sprintf("%d render workers: %s; %d NodeClaims, %d initialized", total, formatCounts(counts), n, initialized)
		quiet := time.Since(since) >= surgeQuiet
		return total >= runawaySurge && initialized == n && counts["Pending"] == 0 && quiet, status, nil
	})
}
