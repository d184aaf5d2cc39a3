package labs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/trail"
	"github.com/karplab/karplab/labs/evidence"
)

// The interruption lab: three render workers run on spot machines; EC2 warns that it takes
// one machine back in two minutes (a spot interruption), and the spot capacity goes with it.
// The warning reaches Karpenter's interruption queue (EventBridge to SQS); Karpenter cordons
// and drains the node, deletes its NodeClaim, terminates the machine and launches a
// replacement, all before EC2 would reclaim it. The learner spreads the workers so one
// machine's loss takes one worker, and lets the NodePool fall back to on-demand.
const (
	interruptionLab = "interruption"
	intReplicas     = 3
	// intRequired render workers must serve throughout (the publishing SLO).
	intRequired = 2
)

func init() {
	register(&Lab{
		Name:     interruptionLab,
		Position: 7,
		Title:    "A spot machine is reclaimed: keep serving, and replace the capacity",
		Summary: `Three render workers run on spot machines. EC2 warns that it reclaims one machine in two
minutes, and spot capacity goes with it. Spread the workers so one machine's loss takes one
worker, and let the NodePool fall back to on-demand. check proves the timeline across both
control planes: warning, NodeClaim deleted and node drained, replacement launched and Ready
before the reclaim, machine terminated, workers serving again, and that two of them served
throughout.`,
		Checklist: []string{
			"Node bootstrap, leaked-instance detection, interruption, consolidation, and rollback are rehearsed.",
			"PodDisruptionBudgets and Karpenter disruption budgets preserve the required availability.",
		},
		Stage:   stageInterruption,
		TwoStep: true,
		Grade:   gradeInterruption,
	})
}

// interruption is the spot interruption the grader follows: the last warning in the audit trail.
type interruption struct {
	Warned   time.Time // EC2's two-minute warning
	Deadline time.Time // when EC2 takes the machine back
	// Lost is when the machine stopped (Karpenter terminated it, or EC2 reclaimed it: ByEC2);
	// zero while it runs.
	Lost     time.Time
	ByEC2    bool
	Instance evidence.InstanceRow
	Claim    *claimLife
	Node     string
	// Workers are the render workers that ran on the machine when the warning came.
	Workers []string
}

func (g *Grading) lastInterruption() (interruption, bool) {
	var r interruption
	found := false
	for _, e := range g.Snapshot.Audit {
		if e.Action != fakeec2.ActionSpotWarning || e.ErrorCode != "" {
			continue
		}
		in, ok := g.Evidence.Instance(e.Parameters["InstanceId.1"])
		if !ok {
			continue
		}
		deadline, err := time.Parse(time.RFC3339Nano, e.Parameters["ReclaimAt"])
		if err != nil {
			continue
		}
		r, found = interruption{Warned: e.Time.UTC(), Deadline: deadline.UTC(), Instance: in, Node: in.PrivateDNS}, true
	}
	if !found {
		return r, false
	}
	for _, e := range g.Snapshot.Audit {
		if e.Time.Before(r.Warned) || e.ErrorCode != "" || !r.Lost.IsZero() {
			continue
		}
		for _, id := range e.Terminated {
			if id == r.Instance.ID {
				r.Lost, r.ByEC2 = e.Time.UTC(), e.Action == fakeec2.ActionBidEvicted
			}
		}
	}
	for _, c := range g.claimLives("") {
		if c.InstanceID == r.Instance.ID {
			c := c
			r.Claim = &c
			if c.NodeName != "" {
				r.Node = c.NodeName
			}
		}
	}
	for _, v := range g.hist.Pods {
		p := v.Last()
		if p.Namespace != zibaNamespace || !strings.HasPrefix(p.Name, renderWorker+"-") || p.Spec.NodeName != r.Node {
			continue
		}
		if v.Seen[0].After(r.Warned) || (v.Deleted != nil && v.Deleted.Before(r.Warned)) {
			continue
		}
		r.Workers = append(r.Workers, p.Name)
	}
	sort.Strings(r.Workers)
	return r, true
}

// since renders t as an offset from the warning.
func (r interruption) since(t time.Time) string {
	d := t.Sub(r.Warned).Round(time.Second)
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// lostAt is when the machine's pods stopped serving for want of it (zero: not yet).
func (r interruption) lostAt(now time.Time) time.Time {
	if r.Lost.IsZero() && !now.Before(r.Deadline) {
		return r.Deadline
	}
	return r.Lost
}

func gradeInterruption(g *Grading) []Check {
	r, ok := g.lastInterruption()
	if !ok {
		return notYetInterrupted(g)
	}
	if r.Claim == nil {
		// A machine Karpenter never knew: nothing of the timeline can be traced.
		c := checkWarned(g, r)
		why := "the interrupted instance " + r.Instance.ID + " belongs to no NodeClaim"
		return []Check{
			c,
			fail("warning-handled", titleHandled, why, c.Hint, why),
			fail("blast-radius", titleBlast, why, c.Hint, why),
			fail("availability-held", fmt.Sprintf(titleAvailability, intRequired), why, c.Hint, why),
			fail("capacity-replaced", titleReplaced, why, c.Hint, why),
			fail("recovery-timeline", titleRecovery, why, c.Hint, why),
			checkReclaimCleanedUp(g, r),
			checkNoLeaks(g.Evidence),
		}
	}
	lost := map[string]time.Time{}
	if at := r.lostAt(g.Snapshot.TakenAt); !at.IsZero() {
		lost[r.Node] = at
	}
	steps := g.availability(zibaNamespace, renderWorker, lost)
	return []Check{
		checkWarned(g, r),
		checkWarningHandled(g, r),
		checkBlastRadius(g, r),
		checkAvailabilityThroughLoss(g, r, steps),
		checkCapacityReplaced(g, r),
		checkRecoveryTimeline(g, r, steps),
		checkReclaimCleanedUp(g, r),
		checkNoLeaks(g.Evidence),
	}
}

// notYetInterrupted grades the lab before EC2's warning: nothing of the interruption can
// pass yet, but what the learner has applied so far is judged for what the warning will
// find: workers packed on one machine, a NodePool with no fallback from spot.
func notYetInterrupted(g *Grading) []Check {
	const hint = "Apply your NodePool and workload, wait until the three workers run, then run karplab lab run interruption again: EC2 warns that it reclaims a spot machine."
	none := "no spot interruption warning was sent yet"
	notYet := func(id, title string) Check { return fail(id, title, none, hint, none) }
	blast := notYet("blast-radius", titleBlast)
	if packed := g.packedWorkers(); len(packed) > 0 {
		blast.Problems = append(blast.Problems, packed...)
		blast.Hint = spreadHint + " Then: " + hint
	}
	replaced := notYet("capacity-replaced", titleReplaced)
	if np, ok := g.nodePool(generalPool); ok && !allowsOnDemand(np) {
		replaced.Problems = append(replaced.Problems, fmt.Sprintf("NodePool %s buys spot only (karpenter.sh/capacity-type %s): when EC2 takes spot back, nothing can replace it", generalPool, capacityTypes(np)))
		replaced.Hint = fallbackHint + " Then: " + hint
	}
	return []Check{
		notYet("interruption-warned", titleWarned),
		notYet("warning-handled", titleHandled),
		blast,
		notYet("availability-held", fmt.Sprintf(titleAvailability, intRequired)),
		replaced,
		notYet("recovery-timeline", titleRecovery),
		notYet("reclaimed-cleaned-up", titleReclaimCleanup),
		checkNoLeaks(g.Evidence),
	}
}

const (
	spreadHint   = "Spread the workers (topologySpreadConstraints on topology.kubernetes.io/zone, maxSkew 1, minDomains 3, DoNotSchedule, selecting app.kubernetes.io/name: ziba-render-worker) and kubectl apply -f interruption/workload.yaml: Karpenter then buys a machine per zone and one loss takes one worker."
	fallbackHint = `Allow on-demand too (karpenter.sh/capacity-type In ["spot", "on-demand"]) and kubectl apply -f interruption/nodepool.yaml: Karpenter falls back when spot launches fail.`
)

// packedWorkers lists the machines that run more render workers now than one loss may take.
func (g *Grading) packedWorkers() []string {
	perNode := map[string]int{}
	for _, v := range g.hist.Pods {
		p := v.Last()
		if v.Deleted != nil || p.DeletionTimestamp != nil || p.Namespace != zibaNamespace || !strings.HasPrefix(p.Name, renderWorker+"-") || p.Spec.NodeName == "" {
			continue
		}
		perNode[p.Spec.NodeName]++
	}
	var out []string
	for node, n := range perNode {
		if n > intReplicas-intRequired {
			out = append(out, fmt.Sprintf("node %s runs %d of the %d render workers now: one reclaim would take %d", node, n, intReplicas, n))
		}
	}
	sort.Strings(out)
	return out
}

// allowsOnDemand reports whether the pool may launch on-demand machines.
func allowsOnDemand(np karpv1.NodePool) bool {
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Key != karpv1.CapacityTypeLabelKey {
			continue
		}
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			return slices.Contains(r.Values, karpv1.CapacityTypeOnDemand)
		case corev1.NodeSelectorOpNotIn:
			return !slices.Contains(r.Values, karpv1.CapacityTypeOnDemand)
		}
	}
	return true // unconstrained: Karpenter's default allows on-demand
}

func capacityTypes(np karpv1.NodePool) string {
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Key == karpv1.CapacityTypeLabelKey {
			return fmt.Sprintf("%s %v", r.Operator, r.Values)
		}
	}
	return "unset"
}

const (
	titleWarned         = "EC2 warned that it reclaims a spot machine that ran render workers (the rehearsed interruption)"
	titleHandled        = "Karpenter acted on the warning: it deleted the NodeClaim, drained the node and terminated the machine before EC2 reclaimed it"
	titleBlast          = "The interrupted machine took at most one render worker with it"
	titleAvailability   = "At least %d render workers served throughout the interruption"
	titleReplaced       = "Karpenter replaced the capacity, Ready before EC2's reclaim"
	titleRecovery       = "The timeline is complete: warned, drained, replaced, terminated, serving again"
	titleReclaimCleanup = "The interrupted machine is gone on the EC2 side: terminated, volumes and interface deleted, billing stopped"
)

func checkWarned(g *Grading, r interruption) Check {
	in := r.Instance
	reason := fmt.Sprintf("EC2 warned at %s that it reclaims %s (%s %s %s) at %s, running %s", hms(r.Warned), in.ID, in.Type, in.Zone, in.CapacityType,
		hms(r.Deadline), nouns(len(r.Workers), "render worker"))
	ev := []string{
		fmt.Sprintf("audit trail: %s by %s, %s, reclaim at %s", fakeec2.ActionSpotWarning, fakeec2.AWSServiceCaller, in.ID, r.since(r.Deadline)),
		"EventBridge delivered it to Karpenter's interruption queue (SQS " + queueName(g) + ")",
	}
	if r.Claim != nil {
		ev = append(ev, fmt.Sprintf("NodeClaim %s, node %s", r.Claim.Name, r.Node))
	}
	if len(r.Workers) > 0 {
		ev = append(ev, "workers on it: "+strings.Join(r.Workers, ", "))
	}
	if r.Claim == nil {
		return failWith("interruption-warned", titleWarned, reason+", but no NodeClaim ever named it",
			"Stage the interruption with karplab lab run interruption while the workers run on Karpenter's machines.",
			[]string{"no NodeClaim ever named " + in.ID + ": the warning tested no machine of Karpenter's"}, ev)
	}
	return pass("interruption-warned", titleWarned, reason, ev...)
}

// nodeTainted is when the named Node was first seen with Karpenter's disrupted taint after t.
func (g *Grading) nodeTainted(name string, t time.Time) *time.Time {
	for _, v := range g.hist.Nodes {
		if v.Last().Name != name {
			continue
		}
		for i, n := range v.States {
			if v.Seen[i].Before(t.Add(-clockSlack)) {
				continue
			}
			for _, taint := range n.Spec.Taints {
				if taint.Key == karpv1.DisruptedTaintKey {
					seen := v.Seen[i].UTC()
					return &seen
				}
			}
		}
	}
	return nil
}

// karpenterSaid quotes Karpenter's events about the interrupted NodeClaim and node.
func (g *Grading) karpenterSaid(r interruption) []string {
	var out []string
	uids := map[string]string{}
	if v := g.hist.NodeClaims; v != nil {
		for uid, c := range v {
			if c.Last().Name == r.Claim.Name {
				uids[uid] = "NodeClaim " + r.Claim.Name
			}
		}
	}
	for uid, n := range g.hist.Nodes {
		if n.Last().Name == r.Node {
			uids[uid] = "node " + r.Node
		}
	}
	type said struct {
		at   time.Time
		line string
	}
	var all []said
	for uid, what := range uids {
		for _, e := range g.hist.Events[uid] {
			if t := evidence.FirstEventTime(e); !t.Before(r.Warned.Add(-clockSlack)) && e.Source.Component == "karpenter" {
				// Event times are whole seconds: one in the warning's second is not before it.
				at := maxTime(t, r.Warned)
				all = append(all, said{at, fmt.Sprintf("%s event on %s: %s: %s", r.since(at), what, e.Reason, e.Message)})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].at.Equal(all[j].at) {
			return all[i].at.Before(all[j].at)
		}
		return all[i].line < all[j].line
	})
	for _, s := range all {
		out = append(out, s.line)
	}
	return out
}

func checkWarningHandled(g *Grading, r interruption) Check {
	var ev []string
	if r.Claim.DeletionRequested != nil {
		ev = append(ev, fmt.Sprintf("%s NodeClaim %s deletion requested by Karpenter's interruption controller", r.since(*r.Claim.DeletionRequested), r.Claim.Name))
	}
	if t := g.nodeTainted(r.Node, r.Warned); t != nil {
		ev = append(ev, fmt.Sprintf("%s node %s tainted %s:NoSchedule (cordoned), its pods evicted", r.since(*t), r.Node, karpv1.DisruptedTaintKey))
	}
	ev = append(ev, g.karpenterSaid(r)...)
	var reason, hint string
	switch {
	case r.ByEC2:
		reason = fmt.Sprintf("EC2 reclaimed %s at %s: Karpenter had not terminated it by the deadline", r.Instance.ID, r.since(r.Lost))
		hint = "Karpenter reads the warning from its interruption queue: is it configured (settings.interruptionQueue), and did the drain finish? kubectl get events -A | grep -i interrupt"
	case r.Claim.DeletionRequested == nil:
		reason = fmt.Sprintf("NodeClaim %s is not being deleted %s after the warning", r.Claim.Name, r.since(g.Snapshot.TakenAt))
		hint = "Karpenter polls its interruption queue every few seconds: wait a little (kubectl get nodeclaims -w)."
	case r.Lost.IsZero():
		reason = fmt.Sprintf("%s still runs %s after the warning; the drain is not done", r.Instance.ID, r.since(g.Snapshot.TakenAt))
		hint = "kubectl describe node " + r.Node + " shows what the drain waits on (a PodDisruptionBudget, a do-not-disrupt pod)."
	}
	if reason != "" {
		return failWith("warning-handled", titleHandled, reason, hint, []string{reason}, ev)
	}
	ev = append(ev, fmt.Sprintf("%s %s terminated by Karpenter (TerminateInstances), %s before EC2's reclaim", r.since(r.Lost), r.Instance.ID, r.Deadline.Sub(r.Lost).Round(time.Second)))
	return pass("warning-handled", titleHandled, fmt.Sprintf("NodeClaim %s deleted and %s terminated %s after the warning, before the reclaim at %s",
		r.Claim.Name, r.Instance.ID, r.since(r.Lost), r.since(r.Deadline)), ev...)
}

// workerPlacement lists, per node and zone, the render workers that ran at t.
func (g *Grading) workerPlacement(t time.Time) []string {
	zoneOf := map[string]string{}
	for _, c := range g.claimLives("") {
		if in, ok := g.Evidence.Instance(c.InstanceID); ok && c.NodeName != "" {
			zoneOf[c.NodeName] = in.Zone
		}
	}
	perNode := map[string]int{}
	for _, v := range g.hist.Pods {
		p := v.Last()
		if p.Namespace != zibaNamespace || !strings.HasPrefix(p.Name, renderWorker+"-") || p.Spec.NodeName == "" {
			continue
		}
		if v.Seen[0].After(t) || (v.Deleted != nil && v.Deleted.Before(t)) {
			continue
		}
		perNode[p.Spec.NodeName]++
	}
	var out []string
	for node, n := range perNode {
		out = append(out, fmt.Sprintf("%s (%s): %s", node, evidence.Dash(zoneOf[node]), nouns(n, "worker")))
	}
	sort.Strings(out)
	return out
}

func checkBlastRadius(g *Grading, r interruption) Check {
	placement := g.workerPlacement(r.Warned)
	reason := fmt.Sprintf("the interrupted machine ran %d of the %d render workers", len(r.Workers), intReplicas)
	if len(r.Workers) > intReplicas-intRequired {
		return failWith("blast-radius", titleBlast, reason, spreadHint+eventHint,
			[]string{fmt.Sprintf("%s (node %s) ran %s when EC2 warned: %s", r.Instance.ID, r.Node, nouns(len(r.Workers), "render worker"), strings.Join(r.Workers, ", "))}, placement)
	}
	return pass("blast-radius", titleBlast, reason, placement...)
}

// eventHint is what every check of the interruption adds to its hint when it fails: the
// interruption happened with the workload and NodePool as they were then.
const eventHint = " The interruption is an event: it happened with the workers and the NodePool as they were then, and a fix applied since cannot change it. " +
	"To try your fix: karplab reset, karplab lab run interruption, apply your nodepool.yaml and workload.yaml, wait for the three workers, then karplab lab run interruption again."

// availableAt is how many pods were available at t: the count of the last step at or before it.
func availableAt(steps []availStep, t time.Time) int {
	n := 0
	for _, s := range steps {
		if s.At.After(t) {
			break
		}
		n = s.Available
	}
	return n
}

// checkAvailabilityThroughLoss: from the warning on, at least intRequired workers served:
// when it came, and after every change since.
func checkAvailabilityThroughLoss(g *Grading, r interruption, steps []availStep) Check {
	title := fmt.Sprintf(titleAvailability, intRequired)
	low, lowAt := availableAt(steps, r.Warned), r.Warned
	var problems, ev []string
	line := func(at time.Time, n int) {
		text := fmt.Sprintf("%s: %d available", r.since(at), n)
		if at.Equal(r.Warned) {
			text = fmt.Sprintf("at the warning: %d available", n)
		}
		if n < intRequired {
			problems = append(problems, text+fmt.Sprintf(" (fewer than %d)", intRequired))
		} else if len(ev) < 8 {
			ev = append(ev, text)
		}
	}
	line(r.Warned, low)
	for _, s := range steps {
		if !s.At.After(r.Warned) {
			continue
		}
		line(s.At, s.Available)
		if s.Available < low {
			low, lowAt = s.Available, s.At
		}
	}
	if short := shortfall(steps, r.Warned, intReplicas); short > 0 {
		ev = append(ev, fmt.Sprintf("fewer than all %d workers served for %s in all after the warning", intReplicas, short))
	}
	if low < intRequired {
		return failWith("availability-held", title, fmt.Sprintf("only %d render workers served from %s", low, r.since(lowAt)),
			"One machine held too many workers: spread them across zones so the interruption takes one."+eventHint, first(problems, 6), ev)
	}
	return pass("availability-held", title, fmt.Sprintf("never fewer than %d serving from the warning on; %d at the warning", low, availableAt(steps, r.Warned)), ev...)
}

// shortfall is how long, after t, fewer than want pods were available.
func shortfall(steps []availStep, t time.Time, want int) time.Duration {
	var total time.Duration
	var from *time.Time
	count := 0
	for _, s := range steps {
		if s.At.After(t) {
			if from != nil && count < want {
				total += s.At.Sub(*from)
			}
			at := s.At
			from = &at
		} else {
			from = &t
		}
		count = s.Available
	}
	return total.Round(time.Second)
}

// failedLaunches quotes the launch calls after t that created no instance.
func failedLaunches(ev *evidence.Evidence, t time.Time) []string {
	var out []string
	for _, l := range ev.Launches {
		if l.Time.Before(t) {
			continue
		}
		created := false
		for _, id := range l.Created {
			created = created || strings.HasPrefix(id, "i-")
		}
		if created {
			continue
		}
		msg := l.ErrorCode
		if len(l.Errors) > 0 {
			msg = strings.Join(first(l.Errors, 2), "; ")
		}
		out = append(out, fmt.Sprintf("%s %s for %s: no instance: %s", l.Action, hms(l.Time), evidence.Dash(l.NodeClaim), evidence.Dash(msg)))
	}
	return out
}

// replacements are the pool's NodeClaims created after the warning.
func (g *Grading) replacements(r interruption) []claimLife {
	var out []claimLife
	pool := ""
	if r.Claim != nil {
		pool = r.Claim.NodePool
	}
	for _, c := range g.claimLives(pool) {
		if c.Created.After(r.Warned.Add(-clockSlack)) && c.Name != r.Claim.Name {
			out = append(out, c)
		}
	}
	return out
}

func checkCapacityReplaced(g *Grading, r interruption) Check {
	var ready, late, proofs []string
	for _, c := range g.replacements(r) {
		in, _ := g.Evidence.Instance(c.InstanceID)
		switch {
		case c.Initialized != nil && c.Deleted == nil:
			if c.Initialized.After(r.Deadline) {
				late = append(late, c.Name)
			} else {
				ready = append(ready, c.Name)
			}
			proofs = append(proofs, fmt.Sprintf("%s: %s %s %s %s, created %s, initialized %s", c.Name, evidence.Dash(in.ID), evidence.Dash(in.Type), evidence.Dash(in.Zone), evidence.Dash(in.CapacityType),
				r.since(c.Created), r.since(*c.Initialized)))
		case c.Deleted != nil && c.Initialized == nil:
			proofs = append(proofs, fmt.Sprintf("%s: created %s, deleted %s without a machine", c.Name, r.since(c.Created), r.since(*c.Deleted)))
		}
	}
	proofs = append(proofs, fmt.Sprintf("EC2's reclaim deadline: %s", r.since(r.Deadline)))
	failed := failedLaunches(g.Evidence, r.Warned)
	if len(ready) == 0 {
		reason := "no replacement NodeClaim came up since the warning"
		if len(late) > 0 {
			reason = fmt.Sprintf("the replacement %s came up only after EC2's reclaim", strings.Join(late, ", "))
		}
		if len(failed) > 0 {
			reason += fmt.Sprintf("; %d launch attempts found no capacity", len(failed))
		}
		problems := first(failed, 4)
		if len(problems) == 0 {
			problems = []string{reason}
		}
		return failWith("capacity-replaced", titleReplaced, reason,
			"Spot capacity is gone with the interrupted machine: "+fallbackHint+eventHint, problems, proofs)
	}
	return pass("capacity-replaced", titleReplaced, nouns(len(ready), "replacement NodeClaim")+" initialized before the reclaim", append(proofs, first(failed, 3)...)...)
}

func checkRecoveryTimeline(g *Grading, r interruption, steps []availStep) Check {
	type step struct {
		what string
		at   *time.Time
	}
	var evicted *time.Time
	for _, v := range g.hist.Pods {
		if v.Last().Spec.NodeName != r.Node || !strings.HasPrefix(v.Last().Name, renderWorker+"-") {
			continue
		}
		for i, p := range v.States {
			if p.DeletionTimestamp != nil && !v.Seen[i].Before(r.Warned) {
				if evicted == nil || v.Seen[i].Before(*evicted) {
					seen := v.Seen[i].UTC()
					evicted = &seen
				}
				break
			}
		}
	}
	var replaced, registered *time.Time
	for _, c := range g.replacements(r) {
		if c.Initialized != nil && (registered == nil || c.Initialized.Before(*registered)) {
			created := c.Created
			replaced, registered = &created, c.Initialized
		}
	}
	var serving *time.Time
	for _, s := range steps {
		if s.At.After(r.Warned) && s.Available >= intReplicas && serving == nil {
			at := s.At
			serving = &at
		}
	}
	var terminated *time.Time
	if !r.Lost.IsZero() {
		terminated = &r.Lost
	}
	timeline := []step{
		{"NodeClaim deletion requested", r.Claim.DeletionRequested}, {"node cordoned", g.nodeTainted(r.Node, r.Warned)},
		{"its workers evicted", evicted}, {"replacement NodeClaim created", replaced}, {"replacement initialized", registered},
		{"machine terminated", terminated}, {"NodeClaim deleted", r.Claim.Deleted},
		{fmt.Sprintf("%d workers serving again", intReplicas), serving},
	}
	ev := []string{fmt.Sprintf("+0s EC2 warned: %s is reclaimed at %s (%s)", r.Instance.ID, r.since(r.Deadline), hms(r.Warned))}
	var missing, notYet []string
	sort.SliceStable(timeline, func(i, j int) bool {
		return timeline[i].at != nil && (timeline[j].at == nil || timeline[i].at.Before(*timeline[j].at))
	})
	for _, s := range timeline {
		if s.at == nil {
			missing = append(missing, s.what)
			notYet = append(notYet, s.what+": not yet")
			continue
		}
		ev = append(ev, fmt.Sprintf("%s %s (%s)", r.since(*s.at), s.what, hms(*s.at)))
	}
	if len(missing) > 0 {
		return failWith("recovery-timeline", titleRecovery, fmt.Sprintf("not recovered: %s missing", strings.Join(missing, ", ")),
			"kubectl get pods -n ziba -o wide and kubectl get nodeclaims show where recovery stopped; pending pods' events say why."+eventHint, notYet, ev)
	}
	return pass("recovery-timeline", titleRecovery, fmt.Sprintf("%d workers serving again %s after the warning; fewer served for %s in all", intReplicas,
		r.since(*serving), shortfall(steps, r.Warned, intReplicas)), ev...)
}

func checkReclaimCleanedUp(g *Grading, r interruption) Check {
	if problems := machineLeftovers(r.Instance); len(problems) > 0 {
		hint := "EC2 deletes DeleteOnTermination volumes and the primary interface when the instance terminates: check the EC2NodeClass's blockDeviceMappings."
		if r.Instance.State == "shutting-down" {
			hint = "EC2 is still terminating the reclaimed machine; its volumes and interface go when it is terminated: karplab check interruption again in a few seconds."
		}
		lines := make([]string, len(problems))
		for i, p := range problems {
			lines[i] = r.Instance.ID + ": " + p
		}
		return fail("reclaimed-cleaned-up", titleReclaimCleanup, fmt.Sprintf("%s: %s", r.Instance.ID, strings.Join(problems, ", ")), hint, lines...)
	}
	return pass("reclaimed-cleaned-up", titleReclaimCleanup, machineGone(r.Instance))
}

func stageInterruption(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if opts.Solution {
		if err := e.noEarlierInterruption(ctx); err != nil {
			return err
		}
		if err := e.ApplySolution(ctx, interruptionLab, out); err != nil {
			return err
		}
		if err := e.waitRolledOut(ctx, out, opts.Wait, zibaNamespace, renderWorker); err != nil {
			return err
		}
		if err := e.warnSpot(ctx, out); err != nil {
			return err
		}
		fmt.Fprintf(out, " waiting for Karpenter to drain the machine and replace the capacity (well inside the two minutes)\n")
		if err := e.waitChecks(ctx, out, opts.Wait, interruptionLab, "recovery-timeline", "reclaimed-cleaned-up"); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nThe workers serve again. Grade it: karplab check %s; read it: karplab evidence\n", interruptionLab)
		return nil
	}
	if err := e.noEarlierInterruption(ctx); err != nil {
		return err
	}
	ready, err := e.twoStepReady(ctx, out, opts, interruptionLab, intReplicas, fmt.Sprintf(`
Three render workers wait for machines. Your task (karplab lab get %s): complete workload.yaml
and nodepool.yaml, apply them, wait until the three workers run, then run
  karplab lab run %s
again: EC2 will warn that it reclaims one of the spot machines.
`, interruptionLab, interruptionLab), "apply your nodepool.yaml and workload.yaml")
	if err != nil || !ready {
		return err
	}
	if err := e.warnSpot(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(out, `
Watch what follows (Karpenter acts within seconds; EC2 reclaims in two minutes):
  kubectl get nodes -w
  kubectl get nodeclaims -w
  kubectl get pods -n %s -o wide -w
  aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=%s
then karplab check %s
`, zibaNamespace, generalPool, interruptionLab)
	return nil
}

// noEarlierInterruption refuses a second interruption in one lab: the first left spot
// capacity exhausted until a reset, so no spot machine could carry the workers again.
func (e *Env) noEarlierInterruption(ctx context.Context) error {
	warned, err := e.Admin.Audit(ctx, trail.AuditQuery{Action: fakeec2.ActionSpotWarning})
	if err != nil {
		return fmt.Errorf("reading the audit trail: %w", err)
	}
	for _, w := range warned {
		if w.ErrorCode == "" {
			return fmt.Errorf("EC2 already reclaimed a spot machine in this lab (%s at %s) and spot capacity stays exhausted until a reset: "+
				"karplab reset, karplab lab run %s, apply your nodepool.yaml and workload.yaml, wait for the three workers, then karplab lab run %s again",
				w.Parameters["InstanceId.1"], w.Time.Local().Format(time.TimeOnly), interruptionLab, interruptionLab)
		}
	}
	return nil
}

// warnSpot plays EC2 taking spot capacity back: spot launches fail everywhere from now on
// (the capacity is gone), and the spot machine running the most render workers gets EC2's
// two-minute interruption warning, which EventBridge delivers to Karpenter's queue.
func (e *Env) warnSpot(ctx context.Context, out io.Writer) error {
	pods, err := e.Kube.CoreV1().Pods(zibaNamespace).List(ctx, metav1.ListOptions{LabelSelector: renderSelector})
	if err != nil {
		return fmt.Errorf("listing the render workers: %w", err)
	}
	workers := map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			workers[p.Spec.NodeName]++
		}
	}
	res, err := e.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{generalPool}},
		{Name: aws.String("instance-state-name"), Values: []string{"running"}},
		{Name: aws.String("instance-lifecycle"), Values: []string{"spot"}},
	}})
	if err != nil {
		return fmt.Errorf("describing the pool's spot instances: %w", err)
	}
	var victim ec2types.Instance
	most := -1
	for _, r := range res.Reservations {
		for _, in := range r.Instances {
			n := workers[aws.ToString(in.PrivateDnsName)]
			if n > most || (n == most && aws.ToString(in.InstanceId) < aws.ToString(victim.InstanceId)) {
				victim, most = in, n
			}
		}
	}
	if most <= 0 {
		return fmt.Errorf("no spot machine of NodePool %s runs a render worker: nothing for EC2 to reclaim (does the NodePool buy spot?)", generalPool)
	}
	health, err := e.Admin.Health(ctx)
	if err != nil {
		return err
	}
	for _, zone := range health.Zones {
		if _, err := e.Admin.SetFault(ctx, fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, Zone: zone, CapacityType: "spot"}); err != nil {
			return fmt.Errorf("exhausting spot capacity in %s: %w", zone, err)
		}
	}
	fmt.Fprintf(out, " spot capacity exhausted in %s: spot launches now fail with InsufficientInstanceCapacity\n", strings.Join(health.Zones, ", "))
	id := aws.ToString(victim.InstanceId)
	if _, err := e.Admin.InterruptSpot(ctx, fakeec2.DefaultSpotWarning, id); err != nil {
		return fmt.Errorf("interrupting %s: %w", id, err)
	}
	now := time.Now()
	fmt.Fprintf(out, " EC2 warned at %s: spot instance %s (%s, %s), node %s with %s, is reclaimed at %s\n", now.Format(time.TimeOnly), id, victim.InstanceType,
		aws.ToString(victim.Placement.AvailabilityZone), aws.ToString(victim.PrivateDnsName), nouns(most, "render worker"), now.Add(fakeec2.DefaultSpotWarning).Format(time.TimeOnly))
	return nil
}

// queueName is the interruption queue's name: the cluster's.
func queueName(g *Grading) string {
	if g.Env == nil {
		return cluster.DefaultClusterName
	}
	return g.Env.Account.ClusterName
}
