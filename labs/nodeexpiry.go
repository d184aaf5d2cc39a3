package labs

import (
	"context"
	"fmt"
	"io"
	"time"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/karplab/karplab/fakeec2"
)

// The node-expiry lab: the course's NodePool replaces every machine after expireAfter: 720h.
// The render workers run for a month (karplab time skip 30d), every machine under them comes
// due at once, and Karpenter deletes them all: expiry is forceful, so the NodePool's
// disruption budget does not pace it. Only the PodDisruptionBudget does, through the
// eviction API the drain uses. The month's cost lands on the pool's tag.
const (
	expiryLab      = "node-expiry"
	expiryReplicas = 4
	// expiryRequired is the publishing SLO: render workers that must serve at all times.
	expiryRequired = 2
	// expiryMonth is the seed's expireAfter, and the skip that reaches it.
	expiryMonth = 720 * time.Hour
	expiryTTL   = "720h"
)

func init() {
	register(&Lab{
		Name:     expiryLab,
		Position: 12,
		Title:    "A month passes: expireAfter replaces every machine, and only the PodDisruptionBudget paces it",
		Summary: `Four render workers run on the course's NodePool, whose machines live forever. Set the
seed's expireAfter: 720h and a PodDisruptionBudget, then let the month pass (karplab time
skip 30d). Karpenter expires every machine at once (expiry is forceful: the disruption
budget does not pace it); check proves each machine was expired at its age, replaced, that
the PodDisruptionBudget kept two workers serving through the drain, and what the month
cost on the pool's tag.`,
		Checklist: []string{
			"PodDisruptionBudgets and Karpenter disruption budgets preserve the required availability.",
		},
		Stage: stageExpiry,
		Grade: gradeExpiry,
	})
}

func gradeExpiry(g *Grading) []Check {
	return []Check{
		checkRunning(g.Evidence, zibaNamespace, renderWorker, expiryReplicas),
		checkExpired(g),
		checkPDBProtects(g, expiryReplicas, expiryRequired),
		checkExpiryAvailability(g),
		checkMonthBilled(g),
		checkNoLeaks(g.Evidence),
	}
}

// checkExpired: the NodePool sets an expireAfter, every NodeClaim of the pool that reached
// it was deleted no earlier than its age allowed, and new machines took their place.
func checkExpired(g *Grading) Check {
	const id, title = "nodes-expired", "Every machine that reached expireAfter was expired at its age, and replaced"
	np, ok := g.nodePool(generalPool)
	if !ok {
		return fail(id, title, fmt.Sprintf("no NodePool %q was ever applied", generalPool), "kubectl apply -f node-expiry/nodepool.yaml",
			fmt.Sprintf("no NodePool %s", generalPool))
	}
	ttl := np.Spec.Template.Spec.ExpireAfter.Duration
	if ttl == nil {
		return fail(id, title, "the NodePool's expireAfter is Never: no machine is ever replaced for its age",
			"Set spec.template.spec.expireAfter: 720h (the seed's), kubectl apply -f node-expiry/nodepool.yaml, and let the month pass: karplab time skip 30d",
			fmt.Sprintf("NodePool %s: expireAfter Never, not the seed's %s", generalPool, expiryTTL))
	}
	if *ttl != expiryMonth {
		how := fmt.Sprintf("a machine lives %s of patches, %.1f times the seed's month", *ttl, float64(*ttl)/float64(expiryMonth))
		if *ttl < expiryMonth {
			how = fmt.Sprintf("every machine is drained and replaced every %s, %.0f times a month", *ttl, float64(expiryMonth)/float64(*ttl))
		}
		return fail(id, title, fmt.Sprintf("the NodePool's expireAfter is %s, not the seed's %s", ttl, expiryTTL),
			"Set spec.template.spec.expireAfter: 720h (the seed's), kubectl apply -f node-expiry/nodepool.yaml; the changed template drifts the machines, so let another month pass: karplab time skip 30d",
			fmt.Sprintf("NodePool %s: expireAfter %s: %s", generalPool, ttl, how))
	}
	var expired, overdue, early []string
	var firstExpiry *time.Time
	for _, c := range g.claimLives(generalPool) {
		due := c.Created.Add(*ttl)
		switch {
		case c.DeletionRequested == nil && !g.Snapshot.TakenAt.Before(due.Add(time.Minute)):
			overdue = append(overdue, fmt.Sprintf("%s created %s is %s old and still there", c.Name, day(c.Created), g.Snapshot.TakenAt.Sub(c.Created).Round(time.Hour)))
		case c.DeletionRequested != nil && c.Reason == "" && !c.DeletionRequested.Before(due):
			expired = append(expired, fmt.Sprintf("%s created %s, expired %s at %s old", c.Name, day(c.Created), day(*c.DeletionRequested), c.DeletionRequested.Sub(c.Created).Round(time.Minute)))
			if firstExpiry == nil || c.DeletionRequested.Before(*firstExpiry) {
				firstExpiry = c.DeletionRequested
			}
		case c.DeletionRequested != nil && c.Reason == "":
			early = append(early, fmt.Sprintf("%s deleted %s at %s old, before its expireAfter %s, with no disruption reason", c.Name, day(*c.DeletionRequested), c.DeletionRequested.Sub(c.Created).Round(time.Minute), ttl))
		}
	}
	if len(overdue) > 0 {
		return fail(id, title, fmt.Sprintf("%d machines outlived expireAfter %s", len(overdue), ttl),
			"Karpenter expires a NodeClaim once it is expireAfter old; it acts within a minute of the skip: kubectl get nodeclaims -w", overdue...)
	}
	if len(expired) == 0 {
		return failWith(id, title, fmt.Sprintf("no machine of %s reached expireAfter %s yet", generalPool, ttl),
			"Let the month pass: karplab time skip 30d. kubectl get nodeclaims -w shows Karpenter replace them.",
			[]string{fmt.Sprintf("no NodeClaim of %s has been expired yet: the oldest is %s old", generalPool, g.oldestClaimAge())}, early)
	}
	replacements := 0
	for _, c := range g.claimLives(generalPool) {
		if c.DeletionRequested == nil && !c.Created.Before(*firstExpiry) {
			replacements++
		}
	}
	if replacements == 0 {
		return failWith(id, title, fmt.Sprintf("%d machines expired, and none took their place", len(expired)),
			"The workers' pods go Pending when their machines drain; Karpenter launches new ones for them: kubectl get nodeclaims -w",
			[]string{fmt.Sprintf("no NodeClaim of %s was created since the first expiry at %s", generalPool, hms(*firstExpiry))}, expired)
	}
	return pass(id, title, fmt.Sprintf("%d machines expired at expireAfter %s; %d new ones run the workers", len(expired), ttl, replacements),
		append(expired, early...)...)
}

// oldestClaimAge is the age of the pool's oldest NodeClaim not being deleted, in lab time.
func (g *Grading) oldestClaimAge() time.Duration {
	var oldest time.Duration
	for _, c := range g.claimLives(generalPool) {
		if c.DeletionRequested == nil {
			oldest = max(oldest, g.Snapshot.TakenAt.Sub(c.Created).Round(time.Minute))
		}
	}
	return oldest
}

// checkExpiryAvailability is availability-held judged since the PodDisruptionBudget took
// its current spec, when the workers fell short before it: that dip is fixed, and what the
// learner can still change is the drain of the next month's expiry.
func checkExpiryAvailability(g *Grading) Check {
	pdb, ok := g.pdbFor(zibaNamespace, g.podLabelsOf(zibaNamespace, renderWorker))
	if !ok {
		c := checkAvailabilityHeld(g, expiryRequired)
		c.Hint = "No PodDisruptionBudget selects the render workers, so the drain evicts them freely: select app.kubernetes.io/name: ziba-render-worker in node-expiry/pdb.yaml and kubectl apply -f node-expiry/pdb.yaml."
		return c
	}
	changed := pdbChanged(g, pdb)
	whole := checkAvailabilityHeld(g, expiryRequired)
	keeps := pdbMinAvailable(pdb, expiryReplicas)
	if whole.Passed || changed.IsZero() || keeps < expiryRequired {
		return whole
	}
	fix := "PodDisruptionBudget " + pdb.Name + " took its spec (" + pdbSpec(pdb) + ")"
	c := checkAvailabilitySince(g, expiryRequired, changed, fix)
	if !c.Passed {
		c.Hint = fmt.Sprintf("The workers fell short with %s in force: kubectl get events -n ziba --field-selector reason=Evicted shows what was evicted, kubectl get pdb -n ziba what the budget allows.", fix)
		return c
	}
	drained := 0
	for _, cl := range g.claimLives(generalPool) {
		if cl.DeletionRequested != nil && cl.DeletionRequested.After(changed) {
			drained++
		}
	}
	if drained == 0 {
		what := fmt.Sprintf("no machine of %s was drained since %s at %s: the fix has not met an expiry yet", generalPool, fix, hms(changed))
		return failWith(c.ID, c.Title, what,
			"Let another month pass with the fixed budget: karplab time skip 30d (the machines that replaced the expired ones come due), then kubectl get nodeclaims -w",
			[]string{what}, c.Evidence)
	}
	c.Reason += fmt.Sprintf(", through the drain of %s", nouns(drained, "machine"))
	return c
}

// pdbChanged is when the budget's spec last changed (its managed fields' newest time outside
// status), in lab time; zero if the object does not say.
func pdbChanged(g *Grading, pdb policyv1.PodDisruptionBudget) time.Time {
	var at time.Time
	for _, m := range pdb.ManagedFields {
		if m.Subresource == "" && m.Time != nil && m.Time.After(at) {
			at = m.Time.Time
		}
	}
	if at.IsZero() {
		return at
	}
	return at.Add(fakeec2.LeadAt(g.Snapshot.LabSkips, at)).UTC()
}

// checkMonthBilled: what the skipped month cost is on the ledger, all of it tagged with the
// pool, so a cost report by karpenter.sh/nodepool shows it.
func checkMonthBilled(g *Grading) Check {
	const id, title = "month-billed-by-tag", "The month's machines are billed to the pool's tag (karpenter.sh/nodepool)"
	var longest fakeec2.LabSkip
	for _, s := range g.Snapshot.LabSkips {
		if s.To.Sub(s.From) > longest.To.Sub(longest.From) {
			longest = s
		}
	}
	if longest.To.Sub(longest.From) < expiryMonth {
		return fail(id, title, "no month of lab time has passed", "karplab time skip 30d",
			fmt.Sprintf("the longest skip of lab time was %s, less than a month (%s)", longest.To.Sub(longest.From), expiryMonth))
	}
	var pool, untagged float64
	var untaggedIDs []string
	for _, e := range g.Snapshot.Billing.Entries {
		usd := e.AccrueBetween(longest.From, longest.To)
		switch {
		case usd == 0:
		case e.Tags[fakeec2.NodePoolTag] == generalPool:
			pool += usd
		case e.Tags[fakeec2.NodePoolTag] == "":
			untagged += usd
			untaggedIDs = append(untaggedIDs, e.ResourceID)
		}
	}
	span := fmt.Sprintf("the skipped %s (%s to %s)", longest.To.Sub(longest.From), day(longest.From), day(longest.To))
	if untagged > 0 {
		return fail(id, title, fmt.Sprintf("$%.2f of %s billed without a karpenter.sh/nodepool tag", untagged, span),
			"Everything Karpenter launches carries the tag; an untagged resource was launched by hand: karplab ec2 billing --by-tag karpenter.sh/nodepool",
			first(untaggedIDs, 5)...)
	}
	if pool == 0 {
		return fail(id, title, fmt.Sprintf("nothing of %s is billed to %s", span, generalPool), "Apply the NodePool and let the workers run before the month passes: kubectl apply -f node-expiry/nodepool.yaml",
			fmt.Sprintf("no machine of %s ran during %s", generalPool, span))
	}
	return pass(id, title, fmt.Sprintf("$%.2f of %s billed to karpenter.sh/nodepool=%s", pool, span, generalPool),
		"karplab ec2 billing --by-tag karpenter.sh/nodepool")
}

func stageExpiry(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if err := e.ApplyExercise(ctx, expiryLab, "workload.yaml", out); err != nil {
		return err
	}
	if !opts.Solution {
		if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, expiryReplicas, "Pending (Unschedulable)", "Running"); err != nil {
			return err
		}
		fmt.Fprintf(out, `
%d render workers wait for machines. Your task (karplab lab get %s): complete nodepool.yaml
and pdb.yaml, apply them, wait until all %d run, then let a month pass:
  karplab time skip 30d
and watch Karpenter expire and replace every machine (kubectl get nodeclaims -w); then
karplab check %s
`, expiryReplicas, expiryLab, expiryReplicas, expiryLab)
		return nil
	}
	if err := e.ApplySolution(ctx, expiryLab, out); err != nil {
		return err
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, expiryReplicas, "Running"); err != nil {
		return err
	}
	if err := e.skipTime(ctx, out, expiryMonth); err != nil {
		return err
	}
	fmt.Fprintf(out, " waiting for Karpenter to expire and replace the machines (the PodDisruptionBudget paces the drain)\n")
	ids := []string{"nodes-expired", "workload-running"}
	if err := e.waitChecks(ctx, out, max(opts.Wait, 3*time.Minute), expiryLab, ids...); err != nil {
		return err
	}
	if err := e.waitRecorded(ctx, out, opts.Wait, zibaNamespace, renderSelector); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nA month passed and every machine was replaced. Grade it: karplab check %s; read it: karplab evidence\n", expiryLab)
	return nil
}
