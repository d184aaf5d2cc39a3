package labs

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/labs/evidence"
)

// The interruption lab: three render workers run on spot machines; EC2 takes one machine
// back (a spot interruption) and, with it, the spot capacity. Kubernetes notices only when
// the node stops reporting; Karpenter replaces the capacity once the pods are evicted. The
// learner spreads the workers so one machine's loss takes one worker, and lets the NodePool
// fall back to on-demand. Karpenter core has no interruption controller (the AWS provider's
// reads EventBridge events from SQS, which the lab does not have), so the loss is abrupt.
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
		Summary: `Three render workers run on spot machines. EC2 reclaims one machine, and spot capacity with it.
Spread the workers so one machine's loss takes one worker, and let the NodePool fall back to
on-demand. check proves the timeline across both control planes: instance reclaimed, node
NotReady and deleted, NodeClaim deleted, replacement launched and registered, workers serving
again, and that two of them served throughout.`,
		Checklist: []string{
			"Node bootstrap, leaked-instance detection, interruption, consolidation, and rollback are rehearsed.",
			"PodDisruptionBudgets and Karpenter disruption budgets preserve the required availability.",
		},
		Stage: stageInterruption,
		Grade: gradeInterruption,
	})
}

// reclaim is the spot interruption the grader follows: the last one in the audit trail.
type reclaim struct {
	At       time.Time
	Instance evidence.InstanceRow
	Claim    *claimLife
	Node     string
	// Workers are the render workers that ran on the machine when it was reclaimed.
	Workers []string
}

func (g *Grading) lastReclaim() (reclaim, bool) {
	var r reclaim
	found := false
	for _, e := range g.Snapshot.Audit {
		if e.Action != fakeec2.ActionBidEvicted || e.ErrorCode != "" || len(e.Terminated) == 0 {
			continue
		}
		in, ok := g.Evidence.Instance(e.Terminated[0])
		if !ok {
			continue
		}
		r, found = reclaim{At: e.Time.UTC(), Instance: in, Node: in.PrivateDNS}, true
	}
	if !found {
		return r, false
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
		if p.CreationTimestamp.Time.After(r.At) || (v.Deleted != nil && v.Deleted.Before(r.At)) {
			continue
		}
		r.Workers = append(r.Workers, p.Name)
	}
	sort.Strings(r.Workers)
	return r, true
}

// since renders t as an offset from the reclaim.
func (r reclaim) since(t time.Time) string {
	d := t.Sub(r.At).Round(time.Second)
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

func gradeInterruption(g *Grading) []Check {
	r, ok := g.lastReclaim()
	if !ok {
		const hint = "Apply your NodePool and workload, wait until the three workers run, then run karplab lab run interruption again: it has EC2 reclaim a spot machine."
		none := "no spot machine was reclaimed yet"
		return []Check{
			fail("instance-reclaimed", titleReclaimed, none, hint),
			fail("loss-detected", titleDetected, none, hint),
			fail("blast-radius", titleBlast, none, hint),
			fail("availability-held", fmt.Sprintf(titleAvailability, intRequired), none, hint),
			fail("capacity-replaced", titleReplaced, none, hint),
			fail("recovery-timeline", titleRecovery, none, hint),
			fail("reclaimed-cleaned-up", titleReclaimCleanup, none, hint),
			checkNoLeaks(g.Evidence),
		}
	}
	if r.Claim == nil {
		// A machine Karpenter never knew: nothing of the timeline can be traced.
		c := checkReclaimed(g, r)
		why := "the reclaimed instance " + r.Instance.ID + " belongs to no NodeClaim"
		return []Check{
			c,
			fail("loss-detected", titleDetected, why, c.Hint),
			fail("blast-radius", titleBlast, why, c.Hint),
			fail("availability-held", fmt.Sprintf(titleAvailability, intRequired), why, c.Hint),
			fail("capacity-replaced", titleReplaced, why, c.Hint),
			fail("recovery-timeline", titleRecovery, why, c.Hint),
			checkReclaimCleanedUp(g, r),
			checkNoLeaks(g.Evidence),
		}
	}
	steps := g.availability(zibaNamespace, renderWorker, map[string]time.Time{r.Node: r.At})
	return []Check{
		checkReclaimed(g, r),
		checkLossDetected(g, r),
		checkBlastRadius(g, r),
		checkAvailabilityThroughLoss(g, r, steps),
		checkCapacityReplaced(g, r),
		checkRecoveryTimeline(g, r, steps),
		checkReclaimCleanedUp(g, r),
		checkNoLeaks(g.Evidence),
	}
}

const (
	titleReclaimed      = "EC2 reclaimed a spot machine that ran render workers (the rehearsed interruption)"
	titleDetected       = "The loss was detected: the node went NotReady and was deleted, and Karpenter deleted its NodeClaim"
	titleBlast          = "The reclaimed machine took at most one render worker with it"
	titleAvailability   = "At least %d render workers served throughout the interruption"
	titleReplaced       = "Karpenter replaced the lost capacity"
	titleRecovery       = "The timeline is complete: reclaimed, NotReady, deleted, replaced, serving again"
	titleReclaimCleanup = "The reclaimed machine is gone on the EC2 side: terminated, volumes and interface deleted, billing stopped"
)

func checkReclaimed(g *Grading, r reclaim) Check {
	in := r.Instance
	reason := fmt.Sprintf("EC2 reclaimed %s (%s %s %s) at %s, running %s", in.ID, in.Type, in.Zone, in.CapacityType, hms(r.At), nouns(len(r.Workers), "render worker"))
	var ev []string
	ev = append(ev, fmt.Sprintf("audit trail: %s by %s, %s", fakeec2.ActionBidEvicted, fakeec2.AWSServiceCaller, in.ID))
	for _, si := range g.Snapshot.Instances {
		if aws.ToString(si.InstanceId) == in.ID && si.StateReason != nil {
			ev = append(ev, fmt.Sprintf("DescribeInstances: %s, state reason %s", si.State.Name, aws.ToString(si.StateReason.Code)))
		}
	}
	if r.Claim != nil {
		ev = append(ev, fmt.Sprintf("NodeClaim %s, node %s", r.Claim.Name, r.Node))
	}
	if len(r.Workers) > 0 {
		ev = append(ev, "workers on it: "+strings.Join(r.Workers, ", "))
	}
	if r.Claim == nil {
		return fail("instance-reclaimed", titleReclaimed, reason+", but no NodeClaim ever named it",
			"Stage the interruption with karplab lab run interruption while the workers run on Karpenter's machines.", ev...)
	}
	return pass("instance-reclaimed", titleReclaimed, reason, ev...)
}

// nodeNotReadyAfter is when the named Node was first seen not Ready after t.
func (g *Grading) nodeNotReadyAfter(name string, t time.Time) (notReady, deleted *time.Time) {
	for _, v := range g.hist.Nodes {
		if v.Last().Name != name {
			continue
		}
		for i, n := range v.States {
			if v.Seen[i].Before(t) || notReady != nil {
				continue
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
					seen := v.Seen[i].UTC()
					notReady = &seen
				}
			}
		}
		if v.Deleted != nil {
			deleted = v.Deleted
		}
	}
	return notReady, deleted
}

func checkLossDetected(g *Grading, r reclaim) Check {
	notReady, nodeDeleted := g.nodeNotReadyAfter(r.Node, r.At)
	var ev []string
	if notReady != nil {
		ev = append(ev, fmt.Sprintf("%s node %s NotReady: the kubelet stopped reporting (the node monitor grace period is 50s)", r.since(*notReady), r.Node))
	}
	if nodeDeleted != nil {
		ev = append(ev, fmt.Sprintf("%s node deleted: its instance no longer exists (cloud node lifecycle)", r.since(*nodeDeleted)))
	}
	if r.Claim.Deleted != nil {
		ev = append(ev, fmt.Sprintf("%s NodeClaim %s deleted: Karpenter finalized it, the instance being gone", r.since(*r.Claim.Deleted), r.Claim.Name))
	}
	if r.Claim.Deleted == nil {
		return fail("loss-detected", titleDetected, fmt.Sprintf("NodeClaim %s still exists %s after the reclaim", r.Claim.Name, r.since(g.Snapshot.TakenAt)),
			"Kubernetes learns of a dead machine only when its node stops reporting: wait about a minute (kubectl get nodes -w).", ev...)
	}
	return pass("loss-detected", titleDetected, fmt.Sprintf("NodeClaim %s deleted %s after the reclaim", r.Claim.Name, r.since(*r.Claim.Deleted)), ev...)
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
		if p.CreationTimestamp.Time.After(t) || (v.Deleted != nil && v.Deleted.Before(t)) {
			continue
		}
		perNode[p.Spec.NodeName]++
	}
	var out []string
	for node, n := range perNode {
		out = append(out, fmt.Sprintf("%s (%s): %s", node, dash(zoneOf[node]), nouns(n, "worker")))
	}
	sort.Strings(out)
	return out
}

func checkBlastRadius(g *Grading, r reclaim) Check {
	placement := g.workerPlacement(r.At)
	reason := fmt.Sprintf("the reclaimed machine ran %d of the %d render workers", len(r.Workers), intReplicas)
	if len(r.Workers) > intReplicas-intRequired {
		return fail("blast-radius", titleBlast, reason,
			"Spread the workers (topologySpreadConstraints on topology.kubernetes.io/zone, maxSkew 1, DoNotSchedule): Karpenter then buys a machine per zone and one loss takes one worker.",
			placement...)
	}
	return pass("blast-radius", titleBlast, reason, placement...)
}

func checkAvailabilityThroughLoss(g *Grading, r reclaim, steps []availStep) Check {
	title := fmt.Sprintf(titleAvailability, intRequired)
	low, at, ok := lowestAfterPeak(steps, intRequired)
	var ev []string
	for _, s := range steps {
		if !s.At.Before(r.At) && len(ev) < 8 {
			ev = append(ev, fmt.Sprintf("%s: %d available", r.since(s.At), s.Available))
		}
	}
	if notReady, _ := g.nodeNotReadyAfter(r.Node, r.At); notReady != nil && len(r.Workers) > 0 {
		ev = append(ev, fmt.Sprintf("Kubernetes still showed %s on %s Ready until %s; EC2 ended the machine at %s, so they count as lost from then",
			nouns(len(r.Workers), "worker"), r.Node, r.since(*notReady), hms(r.At)))
	}
	if !ok {
		return fail("availability-held", title, fmt.Sprintf("the render workers never had %d available pods", intRequired), "Stage the lab and apply the NodePool first.", ev...)
	}
	if low < intRequired {
		return fail("availability-held", title, fmt.Sprintf("only %d render workers served from %s", low, r.since(at)),
			"One machine held too many workers: spread them across zones so the reclaim takes one.", ev...)
	}
	return pass("availability-held", title, fmt.Sprintf("never fewer than %d serving; last that low at %s", low, r.since(at)), ev...)
}

// replacements are the pool's NodeClaims created after the reclaim.
func (g *Grading) replacements(r reclaim) []claimLife {
	var out []claimLife
	pool := ""
	if r.Claim != nil {
		pool = r.Claim.NodePool
	}
	for _, c := range g.claimLives(pool) {
		if c.Created.After(r.At.Add(-clockSlack)) && c.Name != r.Claim.Name {
			out = append(out, c)
		}
	}
	return out
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
		out = append(out, fmt.Sprintf("%s %s for %s: no instance: %s", l.Action, hms(l.Time), dash(l.NodeClaim), dash(msg)))
	}
	return out
}

func checkCapacityReplaced(g *Grading, r reclaim) Check {
	var ready, proofs []string
	for _, c := range g.replacements(r) {
		in, _ := g.Evidence.Instance(c.InstanceID)
		switch {
		case c.Initialized != nil && c.Deleted == nil:
			ready = append(ready, c.Name)
			proofs = append(proofs, fmt.Sprintf("%s: %s %s %s %s, created %s, initialized %s", c.Name, dash(in.ID), dash(in.Type), dash(in.Zone), dash(in.CapacityType),
				r.since(c.Created), r.since(*c.Initialized)))
		case c.Deleted != nil && c.Initialized == nil:
			proofs = append(proofs, fmt.Sprintf("%s: created %s, deleted %s without a machine", c.Name, r.since(c.Created), r.since(*c.Deleted)))
		}
	}
	failed := failedLaunches(g.Evidence, r.At)
	if len(ready) == 0 {
		reason := "no replacement NodeClaim came up since the reclaim"
		if len(failed) > 0 {
			reason += fmt.Sprintf("; %d launch attempts found no capacity", len(failed))
		}
		return fail("capacity-replaced", titleReplaced, reason,
			`Spot capacity is gone with the reclaimed machine: allow on-demand too (karpenter.sh/capacity-type In ["spot", "on-demand"]) and Karpenter falls back when spot launches fail.`,
			append(first(failed, 4), proofs...)...)
	}
	return pass("capacity-replaced", titleReplaced, nouns(len(ready), "replacement NodeClaim")+" initialized", append(proofs, first(failed, 3)...)...)
}

func checkRecoveryTimeline(g *Grading, r reclaim, steps []availStep) Check {
	type step struct {
		what string
		at   *time.Time
	}
	notReady, nodeDeleted := g.nodeNotReadyAfter(r.Node, r.At)
	var evicted *time.Time
	for _, v := range g.hist.Pods {
		if v.Last().Spec.NodeName != r.Node || !strings.HasPrefix(v.Last().Name, renderWorker+"-") {
			continue
		}
		for i, p := range v.States {
			if p.DeletionTimestamp != nil && !v.Seen[i].Before(r.At) {
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
		if s.At.After(r.At) && s.Available >= intReplicas && serving == nil {
			at := s.At
			serving = &at
		}
	}
	timeline := []step{
		{"node NotReady", notReady}, {"node deleted", nodeDeleted}, {"NodeClaim deleted", r.Claim.Deleted},
		{"its workers deleted (pod garbage collection)", evicted}, {"replacement NodeClaim created", replaced}, {"replacement initialized", registered},
		{fmt.Sprintf("%d workers serving again", intReplicas), serving},
	}
	ev := []string{fmt.Sprintf("+0s %s reclaimed by EC2 (%s)", r.Instance.ID, hms(r.At))}
	var missing, notYet []string
	sort.SliceStable(timeline, func(i, j int) bool {
		return timeline[i].at != nil && (timeline[j].at == nil || timeline[i].at.Before(*timeline[j].at))
	})
	for _, s := range timeline {
		if s.at == nil {
			missing = append(missing, s.what)
			notYet = append(notYet, "-- "+s.what+": not yet")
			continue
		}
		ev = append(ev, fmt.Sprintf("%s %s (%s)", r.since(*s.at), s.what, hms(*s.at)))
	}
	ev = append(ev, notYet...)
	if len(missing) > 0 {
		return fail("recovery-timeline", titleRecovery, fmt.Sprintf("not recovered: %s missing", strings.Join(missing, ", ")),
			"kubectl get pods -n ziba -o wide and kubectl get nodeclaims show where recovery stopped; pending pods' events say why.", ev...)
	}
	return pass("recovery-timeline", titleRecovery, fmt.Sprintf("%d workers serving again %s after the reclaim", intReplicas, r.since(*serving)), ev...)
}

func checkReclaimCleanedUp(g *Grading, r reclaim) Check {
	if problems := machineLeftovers(r.Instance); len(problems) > 0 {
		return fail("reclaimed-cleaned-up", titleReclaimCleanup, fmt.Sprintf("%s: %s", r.Instance.ID, strings.Join(problems, ", ")),
			"EC2 deletes DeleteOnTermination volumes and the primary interface when the instance terminates: check the EC2NodeClass's blockDeviceMappings.")
	}
	return pass("reclaimed-cleaned-up", titleReclaimCleanup, machineGone(r.Instance))
}

func stageInterruption(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if opts.Solution {
		if err := e.ApplySolution(ctx, interruptionLab, out); err != nil {
			return err
		}
		if err := e.waitRolledOut(ctx, out, opts.Wait, zibaNamespace, renderWorker); err != nil {
			return err
		}
		if err := e.reclaimSpot(ctx, out); err != nil {
			return err
		}
		fmt.Fprintf(out, " waiting for the loss to be noticed and the capacity replaced (about a minute and a half)\n")
		if err := e.waitChecks(ctx, out, opts.Wait, interruptionLab, "recovery-timeline"); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nThe workers serve again. Grade it: karplab check %s; read it: karplab evidence\n", interruptionLab)
		return nil
	}
	ready, err := e.twoStepReady(ctx, out, opts, interruptionLab, intReplicas, fmt.Sprintf(`
Three render workers wait for machines. Your task (karplab lab get %s): complete workload.yaml
and nodepool.yaml, apply them, wait until the three workers run, then run
  karplab lab run %s
again: EC2 will reclaim one of the spot machines.
`, interruptionLab, interruptionLab), "apply your nodepool.yaml and workload.yaml")
	if err != nil || !ready {
		return err
	}
	if err := e.reclaimSpot(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(out, `
Watch what follows (about a minute and a half):
  kubectl get nodes -w
  kubectl get nodeclaims -w
  kubectl get pods -n %s -o wide -w
  aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=%s
then karplab check %s
`, zibaNamespace, generalPool, interruptionLab)
	return nil
}

// reclaimSpot plays EC2 taking spot capacity back: spot launches fail everywhere from now on
// (the capacity is gone), and the spot machine running the most render workers is interrupted.
func (e *Env) reclaimSpot(ctx context.Context, out io.Writer) error {
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
	// At once, with no warning's grace: the lab's own provider does not read the
	// interruption queue the warning goes to.
	if _, err := e.Admin.InterruptSpot(ctx, 0, id); err != nil {
		return fmt.Errorf("interrupting %s: %w", id, err)
	}
	fmt.Fprintf(out, " EC2 reclaimed spot instance %s (%s, %s), node %s with %s, at %s\n", id, victim.InstanceType,
		aws.ToString(victim.Placement.AvailabilityZone), aws.ToString(victim.PrivateDnsName), nouns(most, "render worker"), time.Now().Format(time.TimeOnly))
	return nil
}

// rolledOut reports whether a Deployment runs exactly its replicas, all of its latest
// template and available, with no old pod left.
func (e *Env) rolledOut(ctx context.Context, ns, name string) (bool, string, error) {
	d, err := e.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("reading deployment %s/%s: %w", ns, name, err)
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	status := fmt.Sprintf("deployment %s: %d of %d updated, %d available, %d pods", name, st.UpdatedReplicas, want, st.AvailableReplicas, st.Replicas)
	done := st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want
	if done {
		// Pods of an old ReplicaSet may still be terminating.
		pods, err := e.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
		if err != nil {
			return false, "", err
		}
		done = len(pods.Items) == int(want)
	}
	return done, status, nil
}

// waitRolledOut waits until rolledOut holds.
func (e *Env) waitRolledOut(ctx context.Context, out io.Writer, timeout time.Duration, ns, name string) error {
	return waitFor(ctx, out, timeout, "deployment "+name+" rolled out", func(ctx context.Context) (bool, string, error) {
		return e.rolledOut(ctx, ns, name)
	})
}
