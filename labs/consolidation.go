package labs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/labs/evidence"
)

// The consolidation lab: the render workers ran ten replicas on four small machines at the
// morning peak; in the evening demand drops to three. Karpenter should consolidate the
// machines nobody needs, one at a time (the NodePool's disruption budget), without ever
// taking the workers below their PodDisruptionBudget, and the bill should drop with them.
const (
	consolidationLab = "consolidation"
	consPeakReplicas = 10
	consLowReplicas  = 3
	// consRequiredAvailable is the publishing SLO: render workers that must serve at all times.
	consRequiredAvailable = 2
	// consMaxBudgetPercent is the seed's disruption budget: at most 20% of the pool's nodes at once.
	consMaxBudgetPercent = 20
)

func init() {
	register(&Lab{
		Name:     consolidationLab,
		Position: 3,
		Title:    "Demand drops: consolidate within the disruption budget and the PodDisruptionBudget",
		Summary: `Ten render workers ran on four machines at the peak; demand drops to three.
Let Karpenter consolidate (WhenEmptyOrUnderutilized), at most 20% of the nodes at once, while a
PodDisruptionBudget keeps two workers serving. check proves from both control planes which
NodeClaims were consolidated and why, that the budget and the PDB held, that displaced pods run
again, that the instances, disks and interfaces are gone and billed no more, and what it saved.`,
		Checklist: []string{
			"PodDisruptionBudgets and Karpenter disruption budgets preserve the required availability.",
			"Node bootstrap, leaked-instance detection, interruption, consolidation, and rollback are rehearsed.",
			"Cost alerts and aggregate capacity limits cover reconciliation races and unexpected demand.",
		},
		Stage: stageConsolidation,
		Grade: gradeConsolidation,
	})
}

func gradeConsolidation(g *Grading) []Check {
	claims := g.claimLives(generalPool)
	consolidated := consolidatedClaims(claims)
	return []Check{
		checkRunning(g.Evidence, zibaNamespace, renderWorker, consLowReplicas),
		checkConsolidated(g, claims, consolidated),
		checkDisruptionBudget(g, claims),
		checkPDBProtects(g, consLowReplicas, consRequiredAvailable),
		checkAvailabilityHeld(g, consRequiredAvailable),
		checkRescheduled(g, consolidated),
		checkCleanedUp(g.Evidence, consolidated),
		checkCostSaved(g),
		checkWithinLimits(g, generalPool),
		checkNoLeaks(g.Evidence),
	}
}

func describeClaim(ev *evidence.Evidence, c claimLife) string {
	what := c.Name
	if in, ok := ev.Instance(c.InstanceID); ok {
		what += fmt.Sprintf(" (%s %s %s)", in.ID, in.Type, in.CapacityType)
	}
	s := fmt.Sprintf("%s %s: marked %s", what, c.Reason, hms(*c.Disrupting))
	if c.Terminating != nil {
		s += ", instance terminating " + hms(*c.Terminating)
	}
	if c.Deleted != nil {
		s += ", deleted " + hms(*c.Deleted)
	}
	return s
}

// checkConsolidated: Karpenter removed empty and underutilized nodes, and no node left runs
// pods that would fit on the others.
func checkConsolidated(g *Grading, claims, consolidated []claimLife) Check {
	const id, title = "nodes-consolidated", "Karpenter consolidated the machines the lower demand no longer needs"
	peak, _ := peakNodes(claims)
	live := g.liveNodes(generalPool)
	var proofs []string
	for _, c := range consolidated {
		proofs = append(proofs, describeClaim(g.Evidence, c))
	}
	running := 0
	for _, p := range g.Evidence.PodsOf(zibaNamespace, renderWorker) {
		if p.Phase == "Running" {
			running++
		}
	}
	if len(consolidated) == 0 {
		hint := "Set spec.disruption.consolidationPolicy: WhenEmptyOrUnderutilized, the seed's consolidateAfter: 5m and budget nodes: \"20%\" (kubectl apply -f consolidation/nodepool.yaml), then let five quiet minutes pass: karplab time skip 5m. kubectl describe nodepool ziba-general and the NodeClaims' events say why Karpenter waits."
		if running > consLowReplicas {
			hint = fmt.Sprintf("Demand has not dropped yet: %d workers run. kubectl scale deployment %s -n %s --replicas=%d", running, renderWorker, zibaNamespace, consLowReplicas)
		}
		why := g.whyNotConsolidated(running, len(live))
		if len(why) == 0 {
			why = []string{fmt.Sprintf("%d nodes run, as many as at the peak (%d): Karpenter marked none Empty or Underutilized yet", len(live), peak)}
			hint = "The NodePool is as the seed's: let five quiet minutes pass (karplab time skip 5m), then kubectl get nodeclaims -w."
		}
		return fail(id, title, fmt.Sprintf("no NodeClaim of %s was consolidated: %d nodes at the peak, %d now", generalPool, peak, len(live)), hint, why...)
	}
	var pending []string
	for _, c := range claims {
		if c.DeletionRequested != nil && c.Deleted == nil {
			pending = append(pending, c.Name)
		}
	}
	if len(pending) > 0 {
		var removing []string
		for _, name := range pending {
			removing = append(removing, "NodeClaim "+name+" is still being removed: not judged until it is gone")
		}
		return failWith(id, title, fmt.Sprintf("consolidation still under way: %s being removed", strings.Join(pending, ", ")),
			"Wait a little and check again: kubectl get nodeclaims -w", removing, proofs)
	}
	var underused []string
	for i, n := range live {
		if removable(live, i) {
			underused = append(underused, fmt.Sprintf("%s (%s) runs %d pods that would fit on the other nodes", n.Claim, n.Name, len(n.Pods)))
		}
	}
	if len(underused) > 0 {
		return failWith(id, title, fmt.Sprintf("%d of %d remaining nodes are underutilized: their pods fit elsewhere", len(underused), len(live)),
			"WhenEmpty removes only nodes with no pods at all; WhenEmptyOrUnderutilized also moves the pods of underutilized nodes and removes them.",
			underused, proofs)
	}
	return pass(id, title, fmt.Sprintf("%d NodeClaims consolidated: %d nodes at the peak, %d now, none of them removable", len(consolidated), peak, len(live)), proofs...)
}

// whyNotConsolidated names what in the NodePool, the PDB or the demand keeps Karpenter from
// consolidating the pool now.
func (g *Grading) whyNotConsolidated(running, nodes int) []string {
	var why []string
	if running > consLowReplicas {
		why = append(why, fmt.Sprintf("%d render workers run: the demand has not dropped to %d", running, consLowReplicas))
	}
	np, ok := g.nodePool(generalPool)
	if !ok {
		return append(why, "no NodePool "+generalPool+" is applied")
	}
	d := np.Spec.Disruption
	if d.ConsolidationPolicy != karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized {
		why = append(why, fmt.Sprintf("consolidationPolicy %s removes only nodes with no pod at all, and every node still runs a worker", evidence.Dash(string(d.ConsolidationPolicy))))
	}
	switch after := d.ConsolidateAfter.Duration; {
	case after == nil:
		why = append(why, "consolidateAfter Never: no node is ever a candidate")
	case *after != consolidationQuiet:
		why = append(why, fmt.Sprintf("consolidateAfter %s, not the seed's 5m (karplab time skip 5m lets five quiet minutes pass, not %s)", shortDuration(*after), shortDuration(*after)))
	}
	if allowed := allowedDisruptions(np, max(nodes, 1), karpv1.DisruptionReasonUnderutilized, g.Snapshot.TakenAt); allowed == 0 {
		why = append(why, fmt.Sprintf("the disruption budgets allow 0 of the %d nodes to be disrupted now (the seed's: nodes \"20%%\")", nodes))
	}
	if pdb, ok := g.pdbFor(zibaNamespace, g.podLabelsOf(zibaNamespace, renderWorker)); ok && pdbMinAvailable(pdb, running) >= running && running > 0 {
		why = append(why, describePDB(pdb)+fmt.Sprintf(": keeps all %d running workers, so no eviction is allowed and no node drains", running))
	}
	return why
}

// checkDisruptionBudget: the NodePool's budgets allow no more than 20% of its nodes at once
// for consolidation, and the evidence shows no more were ever disrupted together.
func checkDisruptionBudget(g *Grading, claims []claimLife) Check {
	const id, title = "disruption-budget", "Karpenter's disruption budget held: at most 20% of the pool's nodes disrupted at once"
	np, ok := g.nodePool(generalPool)
	if !ok {
		return fail(id, title, fmt.Sprintf("no NodePool %q was ever applied", generalPool), "kubectl apply -f "+consolidationLab+"/nodepool.yaml",
			fmt.Sprintf("no NodePool %s: no disruption budget to judge", generalPool))
	}
	peak, _ := peakNodes(claims)
	if peak == 0 {
		peak = 1
	}
	want := requiredBudget(peak)
	var problems, proofs []string
	for _, reason := range []karpv1.DisruptionReason{karpv1.DisruptionReasonUnderutilized, karpv1.DisruptionReasonEmpty} {
		if allowed := allowedDisruptions(np, peak, reason, g.Snapshot.TakenAt); allowed > want {
			problems = append(problems, fmt.Sprintf("for %s the budgets allow %s of the %d nodes at once; %d%% allows %d", reason, countOrAll(allowed, peak), peak, consMaxBudgetPercent, want))
		}
	}
	for _, b := range np.Spec.Disruption.Budgets {
		proofs = append(proofs, "budget nodes "+b.Nodes)
	}
	maxAtOnce := 0
	for _, c := range claims {
		if c.Disrupting == nil {
			continue
		}
		at := *c.Disrupting
		together := disruptingAt(claims, at)
		nodes := countingAt(claims, at)
		maxAtOnce = max(maxAtOnce, len(together))
		if limit := requiredBudget(nodes); len(together) > limit {
			problems = append(problems, fmt.Sprintf("at %s %d NodeClaims were disrupted at once (%s) of %d nodes; %d%% allows %d",
				hms(at), len(together), strings.Join(together, ", "), nodes, consMaxBudgetPercent, limit))
		}
	}
	if len(problems) > 0 {
		return failWith(id, title, fmt.Sprintf("%d budget problems", len(problems)),
			`Set spec.disruption.budgets to [{nodes: "20%"}], the seed's budget: Karpenter then disrupts at most that share of the pool's nodes at once (rounded up).`,
			problems, proofs)
	}
	return pass(id, title, fmt.Sprintf("at most %d NodeClaim disrupted at once; the budgets allow %d of %d nodes", maxAtOnce, want, peak), proofs...)
}

// requiredBudget is the seed's 20% of n nodes, rounded up as Karpenter rounds.
func requiredBudget(n int) int {
	return int(math.Ceil(float64(n) * consMaxBudgetPercent / 100))
}

func countOrAll(allowed, nodes int) string {
	if allowed >= nodes {
		return "all"
	}
	return fmt.Sprint(allowed)
}

// checkRescheduled: the pods of consolidated nodes were evicted and replaced by pods that run.
func checkRescheduled(g *Grading, consolidated []claimLife) Check {
	const id, title = "pods-rescheduled", "The pods of consolidated nodes were rescheduled and run again"
	if len(consolidated) == 0 {
		return fail(id, title, "no node was consolidated, so no pod moved", "Fix the consolidation first (see nodes-consolidated).",
			"no NodeClaim of "+generalPool+" was consolidated: no pod was moved to judge")
	}
	pods := g.Evidence.PodsOf(zibaNamespace, renderWorker)
	var displaced []evidence.PodRow
	onNode := map[string]claimLife{}
	for _, c := range consolidated {
		if c.NodeName != "" {
			onNode[c.NodeName] = c
		}
	}
	for _, p := range pods {
		c, ok := onNode[p.Node]
		if left := p.LeftAt(); ok && left != nil && !left.Before(*c.Disrupting) {
			displaced = append(displaced, p)
		}
	}
	if len(displaced) == 0 {
		return fail(id, title, fmt.Sprintf("%d nodes were consolidated, all of them empty: no pod had to move", len(consolidated)),
			"Only an underutilized node's consolidation moves pods; WhenEmptyOrUnderutilized allows it.",
			fmt.Sprintf("%s consolidated, none of them running a pod: no underutilized node was consolidated", nouns(len(consolidated), "node")))
	}
	proofs, missing := matchReplacements(displaced, pods)
	if len(missing) > 0 {
		return failWith(id, title, fmt.Sprintf("%d of %d displaced pods were not replaced", len(missing), len(displaced)),
			"kubectl get pods -n ziba -o wide; kubectl describe pod shows why a replacement waits.", missing, proofs)
	}
	return pass(id, title, fmt.Sprintf("%d displaced pods replaced by running pods", len(displaced)), proofs...)
}

// matchReplacements pairs each displaced pod, in the order they left, with the earliest pod
// created once it began to leave (its ReplicaSet acts on the eviction, not on the pod's final
// removal). A replacement either runs now or was itself displaced later and has its own
// replacement: a pod can move twice when Karpenter consolidates the node it moved to.
func matchReplacements(displaced, pods []evidence.PodRow) (proofs, missing []string) {
	moved := map[string]bool{}
	for _, d := range displaced {
		moved[d.UID] = true
	}
	displaced = slices.Clone(displaced)
	slices.SortFunc(displaced, func(a, b evidence.PodRow) int { return a.LeftAt().Compare(*b.LeftAt()) })
	candidates := slices.Clone(pods)
	slices.SortFunc(candidates, func(a, b evidence.PodRow) int { return a.Created.Compare(b.Created) })
	used := map[string]bool{}
	for _, d := range displaced {
		left := d.LeftAt()
		i := slices.IndexFunc(candidates, func(p evidence.PodRow) bool {
			return !used[p.UID] && p.UID != d.UID && p.StartedAt != nil && !p.Created.Before(left.Add(-clockSlack)) &&
				(p.Phase == "Running" || moved[p.UID])
		})
		if i < 0 {
			missing = append(missing, fmt.Sprintf("%s left %s at %s and nothing replaced it", d.Name, d.Node, hms(*left)))
			continue
		}
		p := candidates[i]
		used[p.UID] = true
		line := fmt.Sprintf("%s left %s at %s; %s runs on %s since %s", d.Name, d.Node, hms(*left), p.Name, p.Node, hms(*p.StartedAt))
		if moved[p.UID] {
			line = fmt.Sprintf("%s left %s at %s; %s ran on %s from %s until it moved in turn", d.Name, d.Node, hms(*left), p.Name, p.Node, hms(*p.StartedAt))
		}
		proofs = append(proofs, line)
	}
	return proofs, missing
}

// checkCleanedUp: every consolidated NodeClaim's instance is terminated, its volumes and
// network interfaces are deleted, and billing stopped.
func checkCleanedUp(ev *evidence.Evidence, consolidated []claimLife) Check {
	const id, title = "consolidated-cleaned-up", "Consolidated machines are gone on the EC2 side: instance terminated, volumes and interfaces deleted, billing stopped"
	if len(consolidated) == 0 {
		return fail(id, title, "no node was consolidated", "Fix the consolidation first (see nodes-consolidated).",
			"no NodeClaim of "+generalPool+" was consolidated: no machine was removed to judge")
	}
	var bad, good []string
	for _, c := range consolidated {
		in, ok := ev.Instance(c.InstanceID)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: EC2 does not know its instance %q", c.Name, c.InstanceID))
			continue
		}
		if problems := machineLeftovers(in); len(problems) > 0 {
			bad = append(bad, fmt.Sprintf("%s (%s): %s", c.Name, in.ID, strings.Join(problems, ", ")))
			continue
		}
		good = append(good, c.Name+": "+machineGone(in))
	}
	if len(bad) > 0 {
		return failWith(id, title, fmt.Sprintf("%d of %d consolidated machines are not fully gone", len(bad), len(consolidated)),
			"aws ec2 describe-instances / describe-volumes / describe-network-interfaces: a volume without deleteOnTermination outlives its instance.", bad, good)
	}
	return pass(id, title, fmt.Sprintf("%d machines terminated with their volumes and interfaces", len(consolidated)), good...)
}

// checkCostSaved: the pool's hourly rate now is below its peak.
func checkCostSaved(g *Grading) Check {
	const id, title = "cost-saved", "The bill dropped with the demand: the pool's hourly rate is below its peak"
	peak, at := peakHourly(g, generalPool)
	now := hourlyAt(g, generalPool, g.Snapshot.TakenAt)
	running := 0
	for _, in := range g.Evidence.InstancesOfPool(generalPool) {
		if in.State == "running" || in.State == "pending" {
			running++
		}
	}
	if peak == 0 {
		return fail(id, title, "nothing was ever billed for NodePool "+generalPool, "Stage the lab and apply the NodePool first.",
			"no instance of NodePool "+generalPool+" was ever billed")
	}
	reason := fmt.Sprintf("$%.4f/h at the peak (from %s), $%.4f/h now with %s", peak, hms(at), now, nouns(running, "instance"))
	if now >= peak {
		return fail(id, title, reason+": nothing saved", "Consolidation removes the machines the lower demand does not need; the ledger stops billing them at termination.",
			fmt.Sprintf("the pool bills $%.4f/h now, as much as at its peak: no machine it bought for the peak has gone", now))
	}
	saved := peak - now
	return pass(id, title, reason, fmt.Sprintf("saves $%.4f/h (%.0f%%), $%.2f over 30 days", saved, 100*saved/peak, saved*24*30))
}

func stageConsolidation(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if err := e.ApplyExercise(ctx, consolidationLab, "workload.yaml", out); err != nil {
		return err
	}
	if !opts.Solution {
		if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, consPeakReplicas, "Pending (Unschedulable)", "Running"); err != nil {
			return err
		}
		fmt.Fprintf(out, `
The morning peak: %d render workers wait for machines. Your task (karplab lab get %s):
complete nodepool.yaml and pdb.yaml, apply them, wait until all %d run, then drop the demand:
  kubectl scale deployment %s -n %s --replicas=%d
and watch Karpenter consolidate (kubectl get nodeclaims -w); then karplab check %s
`, consPeakReplicas, consolidationLab, consPeakReplicas, renderWorker, zibaNamespace, consLowReplicas, consolidationLab)
		return nil
	}
	if err := e.ApplySolution(ctx, consolidationLab, out); err != nil {
		return err
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, consPeakReplicas, "Running"); err != nil {
		return err
	}
	if err := e.scaleDeployment(ctx, out, zibaNamespace, renderWorker, consLowReplicas); err != nil {
		return err
	}
	if err := e.consolidateBySkips(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nKarpenter consolidated the pool. Grade it: karplab check %s; read it: karplab evidence\n", consolidationLab)
	return nil
}

// consolidateBySkips skips each quiet spell of the seed's consolidateAfter (5m), as the
// README has the learner do, until Karpenter has nothing left to consolidate.
func (e *Env) consolidateBySkips(ctx context.Context, out io.Writer) error {
	var err error
	done := false
	for i := 0; i < consolidationSkips && !done && ctx.Err() == nil; i++ {
		done, err = e.skipAndConsolidate(ctx, out)
	}
	if !done {
		if err == nil {
			err = errors.New("Karpenter still had nodes to consolidate")
		}
		return fmt.Errorf("after %d skips of %s: %w", consolidationSkips, consolidationQuiet, err)
	}
	return nil
}

// skipAndConsolidate skips one quiet spell and waits until the checks pass (done) or
// Karpenter has finished the step the skip allowed: a NodeClaim fewer, none being deleted,
// the workers rolled out. The workers it moved make their new nodes busy again, so the
// caller skips again at once; with no step within consolidationStep, it skips again too.
func (e *Env) skipAndConsolidate(ctx context.Context, out io.Writer) (done bool, err error) {
	l, err := Get(consolidationLab)
	if err != nil {
		return false, err
	}
	before, _, err := e.countPoolClaims(ctx, generalPool)
	if err != nil {
		return false, err
	}
	if err := e.skipTime(ctx, out, consolidationQuiet); err != nil {
		return false, err
	}
	fmt.Fprintf(out, " waiting for Karpenter to consolidate (one node at a time)\n")
	ids := []string{"nodes-consolidated", "consolidated-cleaned-up"}
	err = poll(ctx, out, consolidationStep, 3*time.Second, strings.Join(ids, ", "), func(ctx context.Context) (bool, string, error) {
		r, err := l.Check(ctx, e)
		if err != nil {
			return false, "", err
		}
		var status string
		if done, status = checksPassed(r, ids); done {
			return true, status, nil
		}
		live, deleting, err := e.countPoolClaims(ctx, generalPool)
		if err != nil {
			return false, "", err
		}
		rolled, _, err := e.rolledOut(ctx, zibaNamespace, renderWorker)
		if err != nil {
			return false, "", err
		}
		return live < before && deleting == 0 && rolled, status, nil
	})
	return done, err
}

// countPoolClaims counts pool's NodeClaims: those that live and those being deleted.
func (e *Env) countPoolClaims(ctx context.Context, pool string) (live, deleting int, err error) {
	list, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{LabelSelector: karpv1.NodePoolLabelKey + "=" + pool})
	if err != nil {
		return 0, 0, fmt.Errorf("listing NodeClaims: %w", err)
	}
	for _, c := range list.Items {
		if c.GetDeletionTimestamp() != nil {
			deleting++
		} else {
			live++
		}
	}
	return live, deleting, nil
}

// The solution's consolidation: each skip of the seed's consolidateAfter lets Karpenter
// take a step (it decides within seconds, validates for 15 s, then drains and terminates);
// the pods it moves reset the quiet time of the nodes that receive them, so four machines
// take two or three skips to become one.
const (
	consolidationQuiet = 5 * time.Minute // the seed's consolidateAfter
	consolidationStep  = 40 * time.Second
	consolidationSkips = 8
)

// shortDuration writes a duration as a manifest does: 10m, not 10m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
