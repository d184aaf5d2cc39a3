package labs

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/labs/evidence"
)

// Helpers of the disruption labs (consolidation, interruption, ami-drift): NodeClaim lives with
// their disruption windows, a workload's availability over time, and its PodDisruptionBudget.
// All times are the recorder's (when a state was seen), which orders events of one control
// plane to the nanosecond.

// claimLife is one NodeClaim's life as the disruption graders need it.
type claimLife struct {
	Name       string
	NodePool   string
	NodeName   string
	ProviderID string
	InstanceID string
	ImageID    string
	Created    time.Time
	// Initialized is when the NodeClaim was first seen Initialized: from then on Karpenter
	// counts it against the NodePool's disruption budget.
	Initialized *time.Time
	// Reason is the DisruptionReason condition's reason (Underutilized, Empty, Drifted, ...).
	Reason string
	// DriftReason is the Drifted condition's reason, the provider's (AMIDrift, NodeClassDrift, ...).
	DriftReason string
	// Disrupting is when Karpenter first marked it for disruption (DisruptionReason) or its
	// deletion was requested, whichever came first.
	Disrupting        *time.Time
	DeletionRequested *time.Time
	// Terminating is when its instance was first seen terminating (InstanceTerminating): it
	// then stops counting against the budget.
	Terminating *time.Time
	Deleted     *time.Time
}

// end is when the NodeClaim stopped counting as a node of its pool, or nil.
func (c claimLife) end() *time.Time {
	if c.Terminating != nil {
		return c.Terminating
	}
	return c.Deleted
}

// claimLives returns the NodeClaims of pool ("" for all), oldest first.
func (g *Grading) claimLives(pool string) []claimLife {
	var out []claimLife
	for _, v := range evidence.SortedVersions(g.hist.NodeClaims, func(a, b karpv1.NodeClaim) bool {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}) {
		last := v.Last()
		if pool != "" && last.Labels[karpv1.NodePoolLabelKey] != pool {
			continue
		}
		c := claimLife{Name: last.Name, NodePool: last.Labels[karpv1.NodePoolLabelKey], Created: last.CreationTimestamp.UTC(), Deleted: v.Deleted}
		for i, nc := range v.States {
			seen := v.Seen[i].UTC()
			if nc.Status.NodeName != "" {
				c.NodeName = nc.Status.NodeName
			}
			if nc.Status.ProviderID != "" {
				c.ProviderID = nc.Status.ProviderID
			}
			if nc.Status.ImageID != "" {
				c.ImageID = nc.Status.ImageID
			}
			if nc.DeletionTimestamp != nil && c.DeletionRequested == nil {
				c.DeletionRequested = &seen
			}
			for _, cond := range nc.Status.Conditions {
				if cond.Status != metav1.ConditionTrue {
					continue
				}
				switch cond.Type {
				case karpv1.ConditionTypeInitialized:
					if c.Initialized == nil {
						c.Initialized = &seen
					}
				case karpv1.ConditionTypeDisruptionReason:
					c.Reason = cond.Reason
					if c.Disrupting == nil {
						c.Disrupting = &seen
					}
				case karpv1.ConditionTypeDrifted:
					c.DriftReason = cond.Reason
				case karpv1.ConditionTypeInstanceTerminating:
					if c.Terminating == nil {
						c.Terminating = &seen
					}
				}
			}
		}
		if c.DeletionRequested != nil && (c.Disrupting == nil || c.DeletionRequested.Before(*c.Disrupting)) {
			c.Disrupting = c.DeletionRequested
		}
		if c.Reason == "" {
			for _, e := range g.hist.Events[v.UID] {
				if e.Reason == "DisruptionTerminating" {
					c.Reason = evidence.DisruptionReasonFromMessage(e.Message)
				}
			}
		}
		c.InstanceID = evidence.InstanceIDFromProviderID(c.ProviderID)
		out = append(out, c)
	}
	return out
}

// countingAt is how many NodeClaims count as nodes of their pool at t, as Karpenter counts
// them for budgets: initialized, and not yet terminating their instance.
func countingAt(claims []claimLife, t time.Time) int {
	n := 0
	for _, c := range claims {
		if c.Initialized != nil && !c.Initialized.After(t) && (c.end() == nil || c.end().After(t)) {
			n++
		}
	}
	return n
}

// disruptingAt is how many NodeClaims were being disrupted at t.
func disruptingAt(claims []claimLife, t time.Time) []string {
	var names []string
	for _, c := range claims {
		if c.Disrupting != nil && !c.Disrupting.After(t) && (c.end() == nil || c.end().After(t)) {
			names = append(names, c.Name)
		}
	}
	return names
}

// peakNodes is the largest number of NodeClaims of claims alive at once.
func peakNodes(claims []claimLife) (peak int, at time.Time) {
	for _, c := range claims {
		if n := countingAt(claims, c.Created); n > peak {
			peak, at = n, c.Created
		}
		if c.Initialized != nil {
			if n := countingAt(claims, *c.Initialized); n > peak {
				peak, at = n, *c.Initialized
			}
		}
	}
	return peak, at
}

// allowedDisruptions is what np's budgets allow for reason among numNodes nodes at t.
func allowedDisruptions(np karpv1.NodePool, numNodes int, reason karpv1.DisruptionReason, t time.Time) int {
	return np.MustGetAllowedDisruptions(clocktesting.NewFakeClock(t), numNodes, reason)
}

// availStep is how many of a workload's pods were available (Ready, not terminating) from At on.
type availStep struct {
	At        time.Time
	Available int
}

// availability returns the workload's available-pod count after each change, in time order.
// A pod is available from when it is first seen Ready until it is seen terminating, not
// Ready, or deleted — or until its node's machine died (lost: node name -> when EC2 ended
// its instance), which Kubernetes learns only when the node stops reporting.
func (g *Grading) availability(ns, prefix string, lost map[string]time.Time) []availStep {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, v := range g.hist.Pods {
		last := v.Last()
		if last.Namespace != ns || !strings.HasPrefix(last.Name, prefix+"-") {
			continue
		}
		var from *time.Time
		// interval records one available interval, cut short by the death of its machine.
		interval := func(from time.Time, until *time.Time, node string) {
			if dead, ok := lost[node]; ok && (until == nil || dead.Before(*until)) {
				if !dead.After(from) {
					return
				}
				until = &dead
			}
			edges = append(edges, edge{from, 1})
			if until != nil {
				edges = append(edges, edge{*until, -1})
			}
		}
		for i, p := range v.States {
			seen := v.Seen[i].UTC()
			ok := p.DeletionTimestamp == nil && podReady(p)
			switch {
			case ok && from == nil:
				from = &seen
			case !ok && from != nil:
				interval(*from, &seen, p.Spec.NodeName)
				from = nil
			}
		}
		if from != nil {
			interval(*from, v.Deleted, last.Spec.NodeName)
		}
	}
	// Losses first at equal times: the worst case is what a PodDisruptionBudget guards.
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	var steps []availStep
	n := 0
	for _, e := range edges {
		n += e.delta
		steps = append(steps, availStep{e.at, n})
	}
	return steps
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// lowestAfterPeak returns the lowest availability seen once the workload first reached its
// highest availability (its start-up does not count), and the last time it was that low; ok is
// false if the workload never had required pods available.
func lowestAfterPeak(steps []availStep, required int) (low int, at time.Time, ok bool) {
	peak, from := 0, 0
	for i, s := range steps {
		if s.Available > peak {
			peak, from = s.Available, i
		}
	}
	if peak < required {
		return 0, time.Time{}, false
	}
	low, at = peak, steps[from].At
	for _, s := range steps[from:] {
		if s.Available <= low {
			low, at = s.Available, s.At
		}
	}
	return low, at, true
}

// pdbFor returns the PodDisruptionBudget in ns that selects podLabels, if any.
func (g *Grading) pdbFor(ns string, podLabels map[string]string) (policyv1.PodDisruptionBudget, bool) {
	for _, pdb := range g.Snapshot.PDBs {
		if pdb.Namespace != ns || pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		if sel.Matches(labels.Set(podLabels)) {
			return pdb, true
		}
	}
	return policyv1.PodDisruptionBudget{}, false
}

// pdbMinAvailable is how many of replicas pods the budget keeps available, as the disruption
// controller computes it (percentages round up).
func pdbMinAvailable(pdb policyv1.PodDisruptionBudget, replicas int) int {
	switch {
	case pdb.Spec.MinAvailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, replicas, true)
		if err != nil {
			return 0
		}
		return n
	case pdb.Spec.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, replicas, true)
		if err != nil {
			return 0
		}
		return max(replicas-n, 0)
	}
	return 0
}

func describePDB(pdb policyv1.PodDisruptionBudget) string {
	return fmt.Sprintf("PodDisruptionBudget %s/%s: %s (now %d healthy, %d desired, %d disruptions allowed)",
		pdb.Namespace, pdb.Name, pdbSpec(pdb), pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy, pdb.Status.DisruptionsAllowed)
}

// pdbSpec is what the budget keeps, as its spec says it.
func pdbSpec(pdb policyv1.PodDisruptionBudget) string {
	switch {
	case pdb.Spec.MinAvailable != nil:
		return "minAvailable " + pdb.Spec.MinAvailable.String()
	case pdb.Spec.MaxUnavailable != nil:
		return "maxUnavailable " + pdb.Spec.MaxUnavailable.String()
	}
	return "no minAvailable or maxUnavailable"
}

// podLabelsOf returns the labels of the newest recorded pod of the workload.
func (g *Grading) podLabelsOf(ns, prefix string) map[string]string {
	var newest *corev1.Pod
	for _, v := range g.hist.Pods {
		p := v.Last()
		if p.Namespace == ns && strings.HasPrefix(p.Name, prefix+"-") && (newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp)) {
			newest = &p
		}
	}
	if newest == nil {
		return nil
	}
	return newest.Labels
}

// liveNode is a node of a pool now, with the workload pods on it.
type liveNode struct {
	Name        string
	Claim       string
	Allocatable corev1.ResourceList
	Pods        []corev1.Pod
}

// liveNodes returns the pool's NodeClaims that are not being deleted, with their Node's
// allocatable resources and the running pods of every workload namespace bound to them.
func (g *Grading) liveNodes(pool string) []liveNode {
	nodes := map[string]corev1.Node{}
	for _, v := range g.hist.Nodes {
		if v.Deleted == nil {
			nodes[v.Last().Name] = v.Last()
		}
	}
	var out []liveNode
	index := map[string]int{}
	for _, c := range g.claimLives(pool) {
		if c.Deleted != nil || c.DeletionRequested != nil || c.NodeName == "" {
			continue
		}
		n, ok := nodes[c.NodeName]
		if !ok {
			continue
		}
		index[c.NodeName] = len(out)
		out = append(out, liveNode{Name: c.NodeName, Claim: c.Name, Allocatable: n.Status.Allocatable})
	}
	for _, v := range g.hist.Pods {
		p := v.Last()
		if v.Deleted != nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || !evidence.IsWorkloadNamespace(p.Namespace) {
			continue
		}
		if i, ok := index[p.Spec.NodeName]; ok {
			out[i].Pods = append(out[i].Pods, p)
		}
	}
	for i := range out {
		sort.Slice(out[i].Pods, func(a, b int) bool { return out[i].Pods[a].Name < out[i].Pods[b].Name })
	}
	return out
}

// podRequests sums a pod's container requests (cpu and memory).
func podRequests(p corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	return out
}

// removable reports whether node i's pods would all fit in the free room of the other live
// nodes (first fit, cpu and memory): then the node is underutilized and consolidation could
// remove it without buying anything.
func removable(nodes []liveNode, i int) bool {
	free := make([]corev1.ResourceList, len(nodes))
	for j, n := range nodes {
		free[j] = corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			q := n.Allocatable[name].DeepCopy()
			for _, p := range n.Pods {
				r := podRequests(p)[name]
				q.Sub(r)
			}
			free[j][name] = q
		}
	}
	for _, p := range nodes[i].Pods {
		req := podRequests(p)
		placed := false
		for j := range nodes {
			if j == i {
				continue
			}
			fits := true
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				f := free[j][name]
				if f.Cmp(req[name]) < 0 {
					fits = false
				}
			}
			if fits {
				for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					f := free[j][name]
					f.Sub(req[name])
					free[j][name] = f
				}
				placed = true
				break
			}
		}
		if !placed {
			return false
		}
	}
	return true
}

// hourlyAt is what the pool's billed resources (instances and their volumes) cost per hour at t.
func hourlyAt(g *Grading, pool string, t time.Time) float64 {
	instances := map[string]bool{}
	for _, in := range g.Evidence.InstancesOfPool(pool) {
		instances[in.ID] = true
	}
	sum := 0.0
	for _, e := range g.Snapshot.Billing.Entries {
		if !instances[e.ResourceID] && !instances[e.InstanceID] {
			continue
		}
		if e.Started.After(t) || (e.Stopped != nil && !e.Stopped.After(t)) {
			continue
		}
		sum += e.PricePerHour
	}
	return evidence.RoundUSD(sum)
}

// peakHourly is the pool's highest hourly rate, and when it began.
func peakHourly(g *Grading, pool string) (peak float64, at time.Time) {
	for _, e := range g.Snapshot.Billing.Entries {
		if h := hourlyAt(g, pool, e.Started); h > peak {
			peak, at = h, e.Started
		}
	}
	return peak, at
}

// machineLeftovers lists what of a removed machine is still there on the EC2 side: the
// instance not terminated, volumes or interfaces not deleted, billing not stopped.
func machineLeftovers(in evidence.InstanceRow) []string {
	var problems []string
	if in.State != "terminated" {
		problems = append(problems, "instance "+in.State)
	}
	for _, v := range in.Volumes {
		if !v.Deleted {
			problems = append(problems, "volume "+v.ID+" remains")
		}
	}
	for _, n := range in.ENIs {
		if !n.Deleted {
			problems = append(problems, "interface "+n.ID+" remains")
		}
	}
	if in.BilledUntil == nil {
		problems = append(problems, "still billed")
	}
	return problems
}

// machineGone says how a removed machine went: who terminated it, when billing stopped, what
// was deleted with it.
func machineGone(in evidence.InstanceRow) string {
	var ids []string
	for _, v := range in.Volumes {
		ids = append(ids, v.ID)
	}
	for _, n := range in.ENIs {
		ids = append(ids, n.ID)
	}
	return fmt.Sprintf("%s terminated by %s at %s, billed until %s; deleted %s", in.ID, evidence.Dash(in.TerminatedBy),
		hmsPtr(in.TerminatedAt), hmsPtr(in.BilledUntil), strings.Join(ids, ", "))
}

// checkPDBProtects: a PodDisruptionBudget selects the workload, keeps required pods
// available, and still allows an eviction (one that allows none blocks every drain).
func checkPDBProtects(g *Grading, replicas, required int) Check {
	const id = "pdb-protects"
	title := fmt.Sprintf("A PodDisruptionBudget keeps at least %d render workers available", required)
	lbls := g.podLabelsOf(zibaNamespace, renderWorker)
	pdb, ok := g.pdbFor(zibaNamespace, lbls)
	if !ok {
		var others []string
		for _, p := range g.Snapshot.PDBs {
			others = append(others, describePDB(p)+", selecting "+metav1.FormatLabelSelector(p.Spec.Selector))
		}
		return failWith(id, title, "no PodDisruptionBudget in "+zibaNamespace+" selects the render workers",
			"kubectl apply -f pdb.yaml with selector app.kubernetes.io/name: ziba-render-worker in namespace ziba; kubectl get pdb -n ziba",
			[]string{fmt.Sprintf("no PodDisruptionBudget in namespace %s selects the render workers (%s)", zibaNamespace, labels.Set(lbls))}, others)
	}
	keeps := pdbMinAvailable(pdb, replicas)
	switch {
	case keeps < required:
		return fail(id, title, fmt.Sprintf("with %d replicas it keeps only %d available", replicas, keeps),
			fmt.Sprintf("Set spec.minAvailable: %d (or maxUnavailable: %d); an eviction that would break it is refused, so Karpenter waits.", required, replicas-required),
			describePDB(pdb)+fmt.Sprintf(": keeps %d of %d, fewer than %d", keeps, replicas, required))
	case keeps >= replicas:
		return fail(id, title, fmt.Sprintf("with %d replicas it keeps all %d: no eviction is ever allowed", replicas, keeps),
			fmt.Sprintf("Set spec.minAvailable: %d: a budget that keeps every replica refuses every eviction, so a drain never ends.", required),
			describePDB(pdb)+fmt.Sprintf(": keeps %d of %d, so no drain can evict one", keeps, replicas))
	}
	return pass(id, title, fmt.Sprintf("with %d replicas it keeps %d available", replicas, keeps), describePDB(pdb))
}

// checkAvailabilityHeld: from the pods' recorded history, once required workers were available
// they never fell below it.
func checkAvailabilityHeld(g *Grading, required int) Check {
	return checkAvailabilitySince(g, required, time.Time{}, "")
}

// checkAvailabilitySince is checkAvailabilityHeld judged from since on (zero: all the
// history): what came before, when fix (what changed at since) was not yet in force, is
// context, marked fixed.
func checkAvailabilitySince(g *Grading, required int, since time.Time, fix string) Check {
	const id = "availability-held"
	title := fmt.Sprintf("The workload never fell below %d available render workers", required)
	all := g.availability(zibaNamespace, renderWorker, nil)
	steps, before := all, []availStep(nil)
	if !since.IsZero() {
		steps = []availStep{{since, 0}}
		for _, s := range all {
			if s.At.Before(since) {
				before, steps[0].Available = append(before, s), s.Available
			} else {
				steps = append(steps, s)
			}
		}
	}
	var context []string
	if low, at, ok := lowestAfterPeak(before, required); ok && low < required {
		context = append(context, fmt.Sprintf("fixed: %d available at %s (fewer than %d), before %s at %s", low, hms(at), required, fix, hms(since)))
	}
	low, at, ok := lowestAfterPeak(steps, required)
	if !ok {
		what := fmt.Sprintf("the render workers never had %d available pods", required)
		if !since.IsZero() {
			what += " since " + fix + " at " + hms(since)
		}
		return failWith(id, title, what, "Apply the NodePool and wait for the workers: kubectl rollout status deployment ziba-render-worker -n ziba", []string{what}, context)
	}
	if low < required {
		var dips, around []string
		for _, s := range steps {
			if s.At.Before(at.Add(-time.Minute)) {
				continue
			}
			line := fmt.Sprintf("%s: %d available", hms(s.At), s.Available)
			if s.Available < required && len(dips) < 6 {
				dips = append(dips, line+fmt.Sprintf(" (fewer than %d)", required))
			} else if s.Available >= required && len(around) < 6 {
				around = append(around, line)
			}
		}
		return failWith(id, title, fmt.Sprintf("only %d render workers were available at %s", low, hms(at)),
			"A PodDisruptionBudget makes Karpenter's drain wait; with a 100% budget Karpenter drains every node at once.", dips, append(around, context...))
	}
	reason := fmt.Sprintf("never fewer than %d available since the peak; last that low at %s", low, hms(at))
	if !since.IsZero() {
		reason = fmt.Sprintf("never fewer than %d available since %s at %s; last that low at %s", low, fix, hms(since), hms(at))
	}
	return pass(id, title, reason, context...)
}

// consolidatedClaims are the NodeClaims Karpenter removed because they were empty or
// underutilized.
func consolidatedClaims(claims []claimLife) []claimLife {
	var out []claimLife
	for _, c := range claims {
		if c.Disrupting != nil && (c.Reason == string(karpv1.DisruptionReasonUnderutilized) || c.Reason == string(karpv1.DisruptionReasonEmpty)) {
			out = append(out, c)
		}
	}
	return out
}
