package labs

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/labs/evidence"
)

// clockSlack absorbs Kubernetes' whole-second timestamps when ordering events across the two
// control planes (EC2 keeps milliseconds).
const clockSlack = time.Second

// nodePool returns the NodePool's latest recorded spec, or false when it never existed.
func (g *Grading) nodePool(name string) (karpv1.NodePool, bool) {
	var found *evidence.Versions[karpv1.NodePool]
	for _, v := range g.hist.NodePools {
		if v.Last().Name == name && (found == nil || v.Deleted == nil) {
			found = v
		}
	}
	if found == nil {
		return karpv1.NodePool{}, false
	}
	return found.Last(), true
}

// checkRunning: want pods of the Deployment run (and none is left Pending). The pods named in
// also (the course's example pod, which shares the replicas' name prefix but no ReplicaSet)
// must run too when they exist; they do not count towards want.
func checkRunning(ev *evidence.Evidence, ns, deploy string, want int, also ...string) Check {
	const id, title = "workload-running", "The workload runs: every replica is Running"
	var running, pending []string
	var waiting []evidence.PodRow
	for _, p := range ev.PodsOf(ns, deploy) {
		extra := slices.Contains(also, p.Name)
		if !extra && !isReplicaOf(p, deploy) {
			continue
		}
		switch p.Phase {
		case "Running":
			if !extra {
				running = append(running, p.Name)
			}
		case "Pending":
			pending = append(pending, p.Name)
			waiting = append(waiting, p)
		}
	}
	reason := fmt.Sprintf("%d of %d %s/%s pods Running", len(running), want, ns, deploy)
	if len(running) >= want && len(pending) == 0 {
		return pass(id, title, reason)
	}
	var lines []string
	for _, p := range waiting {
		msg := p.KarpenterMessage
		if msg == "" {
			msg = p.PendingReason
		}
		lines = append(lines, fmt.Sprintf("%s Pending: %s", p.Name, evidence.Dash(msg)))
	}
	if len(running) < want {
		lines = append(lines, fmt.Sprintf("only %d of the %d replicas run", len(running), want))
	}
	return fail(id, title, reason+fmt.Sprintf(", %d Pending", len(pending)),
		"Is a NodePool applied and Ready (kubectl get nodepools,nodeclaims)? kubectl describe pod shows why a pod waits.", first(lines, 5)...)
}

// isReplicaOf tells the Deployment's pods (made by one of its ReplicaSets) from a pod that
// only shares their name prefix.
func isReplicaOf(p evidence.PodRow, deploy string) bool {
	return strings.HasPrefix(p.Owner, "ReplicaSet/"+deploy+"-")
}

// claimCause is why Karpenter created a NodeClaim: for a Pending pod, or to replace a
// NodeClaim it was disrupting (drift, consolidation), and since when.
type claimCause struct {
	what string
	at   time.Time
}

// claimCauses explains each NodeClaim of the evidence: a pod that was Pending and was
// nominated to it or ran on it, or else a NodeClaim of the same pool whose disruption had
// begun when it was created and had not ended yet (Karpenter launches the replacements of
// a disruption before it drains the node they replace).
func (g *Grading) claimCauses() map[string]claimCause {
	out := map[string]claimCause{}
	for _, p := range g.Evidence.Pods {
		if p.PendingSince == nil {
			continue
		}
		for _, nc := range []string{p.NominatedNodeClaim, p.NodeClaim} {
			if c, ok := out[nc]; nc != "" && (!ok || p.PendingSince.Before(c.at)) {
				out[nc] = claimCause{"launched for Pending pod " + p.Name, *p.PendingSince}
			}
		}
	}
	lives := g.claimLives("")
	for _, b := range lives {
		if _, ok := out[b.Name]; ok {
			continue
		}
		for _, a := range lives {
			if a.Name == b.Name || a.NodePool != b.NodePool || a.Disrupting == nil || b.Created.Before(a.Disrupting.Add(-clockSlack)) {
				continue
			}
			if end := a.end(); end == nil || !b.Created.After(*end) {
				out[b.Name] = claimCause{fmt.Sprintf("launched to replace %s (%s)", a.Name, evidence.Dash(a.Reason)), *a.Disrupting}
				break
			}
		}
	}
	return out
}

// checkChains: each running pod's chain pod UID -> NodeClaim -> instance -> Node is complete
// and consistent, with timestamps in causal order. A pod that never waited (it replaced a pod
// a disruption evicted, or fit a node already there) is traced through its NodeClaim's cause.
func checkChains(g *Grading, pods []evidence.PodRow) (chain, order Check) {
	const cid, ctitle = "chain-complete", "Each pod's chain is complete: Pending pod UID -> NodeClaim -> EC2 instance -> Node -> started pod"
	const oid, otitle = "timestamps-ordered", "Timestamps run in causal order: pending, NodeClaim, launch, registration, initialization, scheduling, start"
	ev := g.Evidence
	causes := g.claimCauses()
	var broken, outOfOrder, inFlight, proofs []string
	brokenHint := ""
	breaks := func(line, hint string) {
		broken = append(broken, line)
		if brokenHint == "" {
			brokenHint = hint
		}
	}
	complete, running := 0, 0
	for _, p := range pods {
		if p.Phase != "Running" {
			continue
		}
		running++
		nc, ok := ev.NodeClaim(p.NodeClaim)
		in, inOK := ev.Instance(p.InstanceID)
		node, nodeOK := ev.Node(p.Node)
		cause, caused := causes[p.NodeClaim]
		switch {
		case p.NodeClaim == "" || !ok:
			breaks(p.Name+": its node "+evidence.Dash(p.Node)+" has no NodeClaim",
				"A node Karpenter did not launch took the pod: kubectl get nodes -L karpenter.sh/nodepool shows which nodes no NodePool owns; taint them or keep the pods off them.")
		case p.PendingSince == nil && !caused:
			breaks(fmt.Sprintf("%s: never Pending, and its NodeClaim %s was launched neither for a Pending pod nor to replace a disrupted NodeClaim", p.Name, nc.Name),
				"kubectl get events -n "+p.Namespace+" --field-selector involvedObject.name="+p.Name+" and kubectl describe nodeclaim "+nc.Name+" show what placed the pod.")
		case !inOK:
			breaks(fmt.Sprintf("%s: NodeClaim %s names instance %q, which EC2 does not know", p.Name, nc.Name, p.InstanceID),
				"Compare kubectl get nodeclaims -o wide with aws ec2 describe-instances: every NodeClaim's providerID must name a tagged instance whose Node registered.")
		case in.NodeClaim != nc.Name:
			breaks(fmt.Sprintf("%s: instance %s is tagged karpenter.sh/nodeclaim=%q, not %s", p.Name, in.ID, in.NodeClaim, nc.Name),
				"aws ec2 describe-instances --instance-ids "+in.ID+": another actor retagged or launched the machine.")
		case !nodeOK || node.ProviderID != nc.ProviderID:
			breaks(fmt.Sprintf("%s: node %s's providerID does not match NodeClaim %s", p.Name, p.Node, nc.Name),
				"kubectl get node "+evidence.Dash(p.Node)+" -o jsonpath='{.spec.providerID}' and kubectl get nodeclaim "+nc.Name+" -o wide must name the same instance.")
		case p.StartedAt == nil:
			breaks(p.Name+": no container start recorded", "kubectl describe pod -n "+p.Namespace+" "+p.Name+" shows why it has not started.")
		default:
			complete++
			if len(proofs) < 3 {
				origin := "pod " + p.Name + " (uid " + p.UID + ")"
				if p.PendingSince == nil {
					origin = fmt.Sprintf("pod %s (uid %s, never Pending: %s was %s)", p.Name, p.UID, nc.Name, cause.what)
				}
				proofs = append(proofs, fmt.Sprintf("%s -> %s -> %s (%s %s %s) -> %s", origin, nc.Name, in.ID, in.Type, in.Zone, in.CapacityType, node.Name))
			}
			first := step{"pending", p.PendingSince}
			if p.PendingSince == nil {
				first = step{"cause of " + nc.Name, &cause.at}
			}
			ooo, flying := chainOrder(p, first, nc, in, node)
			outOfOrder = append(outOfOrder, ooo...)
			inFlight = append(inFlight, flying...)
			if in.LaunchTime.Add(clockSlack).Before(nc.Created) {
				outOfOrder = append(outOfOrder, fmt.Sprintf("%s: instance %s launched before NodeClaim %s existed", p.Name, in.ID, nc.Name))
			}
		}
	}
	if running == 0 {
		hint, why := g.noRunningPodHint(), notRunning(pods)
		chain = fail(cid, ctitle, "no running pod to trace", hint, why...)
		order = fail(oid, otitle, "no running pod to trace", hint, why...)
		return
	}
	if len(broken) == 0 {
		chain = pass(cid, ctitle, fmt.Sprintf("%d of %d running pods traced end to end", complete, running), proofs...)
	} else {
		chain = fail(cid, ctitle, fmt.Sprintf("%d of %d running pods have a broken chain", len(broken), running), brokenHint, first(broken, 5)...)
	}
	switch {
	case len(outOfOrder) == 0 && len(broken) == 0 && len(inFlight) > 0:
		order = fail(oid, otitle, fmt.Sprintf("still in flight: the NodeClaims of %s are not initialized yet", nouns(len(inFlight), "pod")),
			"Karpenter has not finished with them: check again in a few seconds (kubectl get nodeclaims).", first(inFlight, 5)...)
	case len(outOfOrder) == 0 && len(broken) == 0:
		order = pass(oid, otitle, fmt.Sprintf("all %d chains in order", complete))
	case len(outOfOrder) == 0:
		order = fail(oid, otitle, "cannot order what is not traced", "Fix the broken chains first.",
			fmt.Sprintf("%d of %d running pods have a broken chain (see chain-complete): no order to judge", len(broken), running))
	default:
		order = fail(oid, otitle, fmt.Sprintf("%d chains out of order", len(outOfOrder)),
			"A pod that started before its node registered was not placed by this NodeClaim: look for a second NodePool or a static node.", first(outOfOrder, 5)...)
	}
	return
}

// notRunning names what the pods are instead of running: the ✗ lines of a chain with
// nothing to trace.
func notRunning(pods []evidence.PodRow) []string {
	if len(pods) == 0 {
		return []string{"no pod of the workload exists"}
	}
	var lines []string
	for _, p := range pods {
		msg := p.KarpenterMessage
		if msg == "" {
			msg = p.PendingReason
		}
		lines = append(lines, fmt.Sprintf("%s is %s, not Running: %s", p.Name, evidence.Dash(p.Phase), evidence.Dash(msg)))
	}
	return first(lines, 5)
}

// noRunningPodHint says what keeps every traced pod from running, as the lab is now.
func (g *Grading) noRunningPodHint() string {
	pools := g.liveNodePools()
	if len(pools) == 0 {
		return "Apply a NodePool: kubectl apply -f nodepool.yaml"
	}
	for _, np := range pools {
		if why := g.nodePoolNotReady(np.Name); why != "" {
			return why + ": kubectl describe nodepool " + np.Name + " and kubectl describe ec2nodeclass say what to fix."
		}
	}
	return "The NodePool is Ready: kubectl get nodeclaims and kubectl describe pod -n ziba show what the pods wait for."
}

// step is one timestamp of a chain, named.
type step struct {
	name string
	at   *time.Time
}

// chainOrder checks one traced pod's timestamps against what causality orders: the machine's
// launch, registration and initialization follow one another; the pod is scheduled after its
// cause (it was pending, or the disruption that moved it began) and after its node registered
// (the scheduler binds to a Ready node whether or not Karpenter has marked its NodeClaim
// initialized yet), and starts after it is scheduled. A NodeClaim not initialized yet is in
// flight, not out of order.
func chainOrder(p evidence.PodRow, cause step, nc evidence.NodeClaimRow, in evidence.InstanceRow, node evidence.NodeRow) (outOfOrder, inFlight []string) {
	launched, registered := in.LaunchTime, node.Registered
	var (
		instance    = step{"instance launched", &launched}
		claimLaunch = step{"nodeclaim launched", nc.Launched}
		nodeReg     = step{"node registered", &registered}
		claimReg    = step{"nodeclaim registered", nc.Registered}
		claimInit   = step{"nodeclaim initialized", nc.Initialized}
		scheduled   = step{"pod scheduled", p.ScheduledAt}
		started     = step{"pod started", p.StartedAt}
	)
	for _, pair := range [][2]step{
		{instance, claimLaunch}, {claimLaunch, nodeReg}, {nodeReg, claimReg}, {claimReg, claimInit},
		{cause, scheduled}, {nodeReg, scheduled}, {scheduled, started},
	} {
		prev, cur := pair[0], pair[1]
		switch {
		case cur.at == nil && cur.name == claimInit.name:
			return nil, []string{fmt.Sprintf("%s: NodeClaim %s registered, not initialized yet", p.Name, nc.Name)}
		case prev.at == nil || cur.at == nil:
			missing := cur.name
			if prev.at == nil {
				missing = prev.name
			}
			return []string{fmt.Sprintf("%s: no %s time", p.Name, missing)}, nil
		case cur.at.Add(clockSlack).Before(*prev.at):
			return []string{fmt.Sprintf("%s: %s (%s) before %s (%s)", p.Name, cur.name, cur.at.Format(time.TimeOnly), prev.name, prev.at.Format(time.TimeOnly))}, nil
		}
	}
	return nil, nil
}

// requirementKeys are the constraints a bounded NodePool sets, with what they protect.
var requirementKeys = []struct{ key, why string }{
	{"kubernetes.io/arch", "architecture"},
	{karpv1.CapacityTypeLabelKey, "capacity type"},
	{"karpenter.k8s.aws/instance-category", "instance family category"},
	{"karpenter.k8s.aws/instance-generation", "instance generation"},
	{corev1.LabelTopologyZone, "zones"},
}

// checkBounded: the NodePool constrains architecture, capacity type, category, generation and
// zones, caps aggregate cpu and memory, and limits how much disruption happens at once.
func checkBounded(g *Grading, pool string) Check {
	const id, title = "nodepool-bounded", "The NodePool is bounded: architecture, capacity type, category, generation, zones, aggregate limits, disruption budget"
	np, ok := g.nodePool(pool)
	if !ok {
		return fail(id, title, fmt.Sprintf("no NodePool %q was ever applied", pool), "kubectl apply -f nodepool.yaml",
			fmt.Sprintf("no NodePool %s: nothing bounds what Karpenter may buy", pool))
	}
	var missing, have []string
	reqs := map[string]string{}
	for _, r := range np.Spec.Template.Spec.Requirements {
		reqs[r.Key] = fmt.Sprintf("%s %s %v", r.Key, r.Operator, r.Values)
	}
	for _, k := range requirementKeys {
		if r, ok := reqs[k.key]; ok {
			have = append(have, r)
		} else {
			missing = append(missing, "no "+k.why+" requirement ("+k.key+")")
		}
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := np.Spec.Limits[res]; ok {
			have = append(have, fmt.Sprintf("limits.%s %s", res, q.String()))
		} else {
			missing = append(missing, fmt.Sprintf("no aggregate limit on %s (spec.limits.%s)", res, res))
		}
	}
	if len(np.Spec.Disruption.Budgets) == 0 {
		missing = append(missing, "no disruption budget (spec.disruption.budgets)")
	} else {
		for _, b := range np.Spec.Disruption.Budgets {
			have = append(have, "budget nodes "+b.Nodes)
			if b.Nodes == "100%" && b.Schedule == nil {
				missing = append(missing, "the disruption budget allows every node at once (nodes: 100%)")
			}
		}
	}
	if len(missing) == 0 {
		return pass(id, title, fmt.Sprintf("NodePool %s sets %d requirements, cpu and memory limits and a disruption budget", pool, len(have)), have...)
	}
	return fail(id, title, fmt.Sprintf("NodePool %s misses %d of its bounds", pool, len(missing)),
		"An unbounded NodePool can turn one malformed pod into expensive infrastructure: add the missing requirements, spec.limits and spec.disruption.budgets.", missing...)
}

// limitsSince is when the pool's current limits took effect: the first recorded state of the
// pool from which its spec.limits stayed as they are now. It is zero when the history does
// not date them (they held from the start).
func (g *Grading) limitsSince(pool string) time.Time {
	var found *evidence.Versions[karpv1.NodePool]
	for _, v := range g.hist.NodePools {
		if v.Last().Name == pool && (found == nil || v.Deleted == nil) {
			found = v
		}
	}
	if found == nil {
		return time.Time{}
	}
	now := found.Last().Spec.Limits
	i := len(found.States) - 1
	for i > 0 && equality.Semantic.DeepEqual(found.States[i-1].Spec.Limits, now) {
		i--
	}
	if i >= len(found.Seen) {
		return time.Time{}
	}
	return found.Seen[i]
}

// limitSpan is a pool's capacity over time, as edges of (cpu millicores, memory bytes).
type limitSpan struct {
	edges []limitEdge
}

type limitEdge struct {
	at          time.Time
	cpu, mem, n int64
	launch      bool // a launch (or a NodeClaim's creation): what Karpenter decided against the limits
}

func (s *limitSpan) add(from time.Time, to *time.Time, cpu, mem int64) {
	s.edges = append(s.edges, limitEdge{from, cpu, mem, 1, true})
	if to != nil {
		s.edges = append(s.edges, limitEdge{*to, -cpu, -mem, -1, false})
	}
}

// peaks walks the edges in time order and returns the highest capacity right after a launch
// before since (history: the limits did not exist yet) and from since on (judged), with
// when each judged peak came and how many launches were judged.
func (s *limitSpan) peaks(since time.Time) (before, after limitPeak, judged int) {
	sort.SliceStable(s.edges, func(i, j int) bool {
		if !s.edges[i].at.Equal(s.edges[j].at) {
			return s.edges[i].at.Before(s.edges[j].at)
		}
		return !s.edges[i].launch && s.edges[j].launch // what ends at a launch's moment has left
	})
	var cpu, mem, n int64
	for _, e := range s.edges {
		cpu, mem, n = cpu+e.cpu, mem+e.mem, n+e.n
		if !e.launch {
			continue
		}
		p := &before
		if !e.at.Before(since.Add(-clockSlack)) {
			p = &after
			judged++
		}
		if cpu > p.cpu || (cpu == p.cpu && mem > p.mem) {
			p.cpu, p.at, p.n = cpu, e.at, n
		}
		p.mem = max(p.mem, mem)
	}
	return before, after, judged
}

// limitPeak is the most capacity a pool held at once, and when.
type limitPeak struct {
	cpu, mem int64 // millicores, bytes
	n        int64 // machines (or NodeClaims) at the CPU peak
	at       time.Time
}

func (p limitPeak) String() string {
	return fmt.Sprintf("%s vCPU / %.0fGi memory", resource.NewMilliQuantity(p.cpu, resource.DecimalSI), float64(p.mem)/(1<<30))
}

// over lists what of the peak exceeds the pool's limits.
func (p limitPeak) over(limits karpv1.Limits) []string {
	var out []string
	if q, ok := limits[corev1.ResourceCPU]; ok && !q.IsZero() && p.cpu > q.MilliValue() {
		out = append(out, fmt.Sprintf("cpu %s over its limit %s", resource.NewMilliQuantity(p.cpu, resource.DecimalSI), q.String()))
	}
	if q, ok := limits[corev1.ResourceMemory]; ok && !q.IsZero() && p.mem > q.Value() {
		out = append(out, fmt.Sprintf("memory %s over its limit %s", resource.NewQuantity(p.mem, resource.BinarySI), q.String()))
	}
	return out
}

// claimCapacity is what Karpenter counts against a pool's limits for each NodeClaim: its
// status.capacity once launched, from the moment it was created (in flight) until it leaves
// the count (claimsLeft).
type claimCapacity struct {
	name        string
	created     time.Time
	deleted     *time.Time // when it left the count
	cpu, memory resource.Quantity
}

func poolClaims(g *Grading, pool string) []claimCapacity {
	left := claimsLeft(g)
	var out []claimCapacity
	for _, v := range g.hist.NodeClaims {
		var c claimCapacity
		for _, nc := range v.States {
			if nc.Labels[karpv1.NodePoolLabelKey] != pool {
				continue
			}
			c.name, c.created = nc.Name, nc.CreationTimestamp.Time
			if q, ok := nc.Status.Capacity[corev1.ResourceCPU]; ok {
				c.cpu, c.memory = q, nc.Status.Capacity[corev1.ResourceMemory]
			}
		}
		if c.name != "" {
			if t, ok := left[c.name]; ok {
				c.deleted = &t
			}
			out = append(out, c)
		}
	}
	return out
}

// limitsHistory is the history line for the capacity the pool's NodeClaims held before its
// current limits took effect at since, with the limits in force then. It counts NodeClaims,
// which the recorder keeps from their creation, not instances (EC2 stops describing a
// terminated one within the hour), so every check that quotes it quotes the same peak.
func (g *Grading) limitsHistory(pool string, since time.Time) []string {
	var span limitSpan
	for _, c := range poolClaims(g, pool) {
		span.add(c.created, c.deleted, c.cpu.MilliValue(), c.memory.Value())
	}
	before, _, _ := span.peaks(since)
	if before.cpu == 0 && before.mem == 0 {
		return nil
	}
	return []string{fmt.Sprintf("before the limits took effect at %s: peak %s in %s (%s), under %s then; not judged",
		stamp(&since), before, nouns(int(before.n), "NodeClaim"), stamp(&before.at), limitsText(g.limitsAt(pool, before.at)))}
}

// limitsAt is the pool's spec.limits in force at t, as recorded.
func (g *Grading) limitsAt(pool string, t time.Time) karpv1.Limits {
	var out karpv1.Limits
	for _, v := range g.hist.NodePools {
		for i, np := range v.States {
			if np.Name == pool && i < len(v.Seen) && !v.Seen[i].After(t) {
				out = np.Spec.Limits
			}
		}
	}
	return out
}

// limitsText renders a pool's limits ("limits cpu 200 / memory 800Gi", or "no limits").
func limitsText(l karpv1.Limits) string {
	if len(l) == 0 {
		return "no limits"
	}
	return fmt.Sprintf("limits cpu %s / memory %s", evidence.Dash(quantity(l, corev1.ResourceCPU)), evidence.Dash(quantity(l, corev1.ResourceMemory)))
}

// checkWithinLimits: since the pool's limits took effect, no launch took its running
// instances past them. What ran before they existed is history, reported as such.
func checkWithinLimits(g *Grading, pool string) Check {
	const id, title = "limits-respected", "The machines stayed within the NodePool's aggregate limits"
	np, ok := g.nodePool(pool)
	if !ok {
		return fail(id, title, "the NodePool sets no limits to respect", "kubectl apply -f nodepool.yaml, with spec.limits (cpu, memory).",
			fmt.Sprintf("no NodePool %s was applied", pool))
	}
	if len(np.Spec.Limits) == 0 {
		return fail(id, title, "the NodePool sets no limits to respect", "Add spec.limits (cpu, memory) to the NodePool and apply it.",
			fmt.Sprintf("NodePool %s has no spec.limits: nothing caps the cpu and memory it may buy", pool))
	}
	// An instance counts until it terminates, or earlier once Karpenter stopped counting its
	// NodeClaim (a disruption replacement overlaps the machine it replaces: claimsLeft).
	left := claimsLeft(g)
	var span limitSpan
	var nowCPU, nowMem int64
	for _, in := range g.Evidence.InstancesOfPool(pool) {
		cpu, mem := instanceCapacity(in.Type)
		end := in.TerminatedAt
		if t, ok := left[in.NodeClaim]; ok && in.NodeClaim != "" && (end == nil || t.Before(*end)) {
			end = &t
		}
		span.add(in.LaunchTime, end, cpu*1000, mem)
		if end == nil {
			nowCPU, nowMem = nowCPU+cpu*1000, nowMem+mem
		}
	}
	since := g.limitsSince(pool)
	_, after, judged := span.peaks(since)
	limits := limitsText(np.Spec.Limits)
	context := g.limitsHistory(pool, since)
	if judged == 0 {
		current := limitPeak{cpu: nowCPU, mem: nowMem}
		reason := fmt.Sprintf("no machine launched since the limits took effect (%s); %s run now against %s", stamp(&since), current, limits)
		if over := current.over(np.Spec.Limits); len(over) > 0 {
			return failWith(id, title, reason,
				"The machines over the limits were launched before these limits took effect; Karpenter launches nothing while the pool is over them, and consolidation removes them once the demand is gone (karplab time skip 5m).",
				over, context)
		}
		return pass(id, title, reason, context...)
	}
	reason := fmt.Sprintf("since the limits took effect (%s): peak %s at %s against %s", stamp(&since), after, stamp(&after.at), limits)
	if over := after.over(np.Spec.Limits); len(over) > 0 {
		return failWith(id, title, reason,
			"Karpenter counts a NodeClaim against the limits when it creates it, so its own launches stay within them: aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values="+pool+" shows what else launched with the pool's tags.",
			over, context)
	}
	return pass(id, title, reason, context...)
}

// quantity is a resource list's entry as text ("" when absent).
func quantity(l karpv1.Limits, name corev1.ResourceName) string {
	if q, ok := l[name]; ok {
		return q.String()
	}
	return ""
}

// gone reports whether an instance no longer runs: history, for the checks of what runs now.
func gone(in evidence.InstanceRow) bool {
	return in.State == "terminated" || in.State == "shutting-down"
}

// replacedBy says when an instance went and what removed it: its NodeClaim's disruption
// (drift, consolidation) or who terminated it.
func replacedBy(ev *evidence.Evidence, in evidence.InstanceRow) string {
	why := "terminated by " + terminator(in.TerminatedBy)
	if nc, ok := ev.NodeClaim(in.NodeClaim); ok && nc.DisruptionReason != "" {
		why = fmt.Sprintf("replaced: Karpenter disrupted NodeClaim %s (%s)", nc.Name, nc.DisruptionReason)
	}
	return fmt.Sprintf("%s at %s", why, hmsPtr(in.TerminatedAt))
}

// checkGoverned: the pool's running instances are IMDSv2-only and their root volumes are
// encrypted. Machines already replaced are history: listed as fixed, not judged.
func checkGoverned(ev *evidence.Evidence, pool string) Check {
	const id, title = "machines-governed", "Every machine is governed: encrypted root volume, IMDSv2 required"
	instances := ev.InstancesOfPool(pool)
	if len(instances) == 0 {
		return fail(id, title, "no instance was launched for NodePool "+pool, "Apply the NodePool and EC2NodeClass and stage the workload.",
			"no instance of NodePool "+pool+" to judge")
	}
	var bad, good, fixed []string
	live := 0
	for _, in := range instances {
		var problems []string
		if in.HTTPTokens != "required" {
			problems = append(problems, fmt.Sprintf("metadata httpTokens %s (IMDSv1 allowed)", evidence.Dash(in.HTTPTokens)))
		}
		for _, v := range in.Volumes {
			switch {
			case v.Encrypted == nil:
				// deleted before grading; the launch call's other volumes still tell
			case !*v.Encrypted:
				problems = append(problems, fmt.Sprintf("volume %s is not encrypted", v.ID))
			case !gone(in):
				good = append(good, fmt.Sprintf("%s: %s %dGiB %s encrypted, httpTokens %s", in.ID, v.ID, v.SizeGiB, v.Type, in.HTTPTokens))
			}
		}
		switch {
		case gone(in) && len(problems) > 0:
			fixed = append(fixed, fmt.Sprintf("fixed: %s (launched %s) had %s; %s", in.ID, stamp(&in.LaunchTime), strings.Join(problems, ", "), replacedBy(ev, in)))
		case !gone(in):
			live++
			for _, p := range problems {
				bad = append(bad, in.ID+": "+p)
			}
		}
	}
	if live == 0 {
		return failWith(id, title, "no instance of NodePool "+pool+" runs now", "Stage the workload: Karpenter launches machines for its Pending pods.",
			[]string{"no instance of NodePool " + pool + " runs now: none to judge"}, first(fixed, 4))
	}
	if len(bad) == 0 {
		return pass(id, title, fmt.Sprintf("%s running, checked on the EC2 side", nouns(live, "instance")), append(first(good, 3), first(fixed, 4)...)...)
	}
	return failWith(id, title, fmt.Sprintf("%d problems on the EC2 side", len(bad)),
		"Set blockDeviceMappings[].ebs.encrypted: true and metadataOptions.httpTokens: required in the EC2NodeClass; Karpenter replaces drifted nodes (kubectl get nodeclaims -w), then check again.",
		first(bad, 6), first(fixed, 4))
}

// checkCostTags: every running instance of the pool, and every volume and network interface
// that still exists, carries the cost-allocation tags. Machines already replaced are history.
func checkCostTags(ev *evidence.Evidence, pool string) Check {
	const id, title = "cost-tags", "Cost tags (application, environment, owner) are on every instance, volume and network interface"
	instances := ev.InstancesOfPool(pool)
	if len(instances) == 0 {
		return fail(id, title, "no instance was launched for NodePool "+pool, "Apply the NodePool and EC2NodeClass and stage the workload.",
			"no instance of NodePool "+pool+" to judge")
	}
	var missing, fixed []string
	resources := 0
	lacks := func(what string, tags map[string]string) string {
		var keys []string
		for _, k := range evidence.CostTagKeys {
			if tags[k] == "" {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return ""
		}
		return fmt.Sprintf("%s lacks %s", what, strings.Join(keys, ", "))
	}
	judge := func(what string, tags map[string]string) {
		resources++
		if l := lacks(what, tags); l != "" {
			missing = append(missing, l)
		}
	}
	for _, in := range instances {
		if gone(in) {
			if l := lacks("instance "+in.ID, in.Tags); l != "" {
				fixed = append(fixed, fmt.Sprintf("fixed: %s (launched %s); %s", l, stamp(&in.LaunchTime), replacedBy(ev, in)))
			}
		} else {
			judge("instance "+in.ID, in.Tags)
		}
		for _, v := range in.Volumes {
			if v.Tags != nil && !v.Deleted {
				judge("volume "+v.ID, v.Tags)
			}
		}
		for _, n := range in.ENIs {
			if !n.Deleted {
				judge("network interface "+n.ID, n.Tags)
			}
		}
	}
	if resources == 0 {
		return failWith(id, title, "no resource of NodePool "+pool+" exists now", "Stage the workload: Karpenter launches machines for its Pending pods.",
			[]string{"no instance, volume or interface of NodePool " + pool + " exists now: none to judge"}, first(fixed, 4))
	}
	if len(missing) == 0 {
		var groups []string
		for _, k := range evidence.CostTagKeys {
			for _, g := range ev.Cost.ByTag[k] {
				groups = append(groups, fmt.Sprintf("%s=%s: $%.6f", k, evidence.OrUntagged(g.Value), g.USD))
			}
		}
		return pass(id, title, fmt.Sprintf("%d resources tagged", resources), append(groups, first(fixed, 4)...)...)
	}
	return failWith(id, title, fmt.Sprintf("%d of %d resources lack cost tags", len(missing), resources),
		"Put application, environment and owner under the EC2NodeClass's spec.tags; Karpenter tags the instances, volumes and interfaces it launches, and replaces the drifted ones (kubectl get nodeclaims -w).",
		first(missing, 6), first(fixed, 4))
}

// checkNoLeaks: every instance tagged for the cluster has a NodeClaim.
func checkNoLeaks(ev *evidence.Evidence) Check {
	const id, title = "no-leaks", "Nothing leaked: every running instance tagged for the cluster has a NodeClaim"
	if len(ev.Leaks) == 0 {
		return pass(id, title, "no running instance without a NodeClaim")
	}
	var ids []string
	for _, l := range ev.Leaks {
		by := ""
		if l.FleetID != "" {
			by = ", launched by " + l.FleetID
		}
		ids = append(ids, fmt.Sprintf("%s (nodeclaim tag %q%s, since %s, $%.6f so far)", l.InstanceID, l.NodeClaim, by, l.Since.Local().Format(time.TimeOnly), l.CostUSD))
	}
	return fail(id, title, fmt.Sprintf("%d instances run with no NodeClaim", len(ev.Leaks)),
		"aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=... and kubectl get nodeclaims: terminate what nothing claims.", ids...)
}

// instanceCapacity is an instance type's vCPUs and memory bytes, from the emulator's catalog.
func instanceCapacity(instanceType string) (cpu, memBytes int64) {
	it, ok := ec2.LookupInstanceType(instanceType)
	if !ok {
		return 0, 0
	}
	return int64(it.VCPUs), it.MemoryMiB << 20
}

func first(list []string, n int) []string {
	if len(list) > n {
		return append(list[:n:n], fmt.Sprintf("... and %d more", len(list)-n))
	}
	return list
}

// claimsLeft is, for each NodeClaim, when Karpenter stopped counting it against its pool's
// limits: when it marked it for disruption (the DisruptionReason condition), asked for its
// deletion or saw it gone, whichever came first. Karpenter's scheduler counts only
// NodeClaims not marked for deletion, so a consolidation or drift replacement launches while
// the NodeClaim it replaces still runs and drains; that overlap is Karpenter's design, not a
// limit that failed.
func claimsLeft(g *Grading) map[string]time.Time {
	out := map[string]time.Time{}
	note := func(name string, t time.Time) {
		if prev, ok := out[name]; !ok || t.Before(prev) {
			out[name] = t
		}
	}
	for _, v := range g.hist.NodeClaims {
		for _, nc := range v.States {
			if nc.DeletionTimestamp != nil {
				note(nc.Name, nc.DeletionTimestamp.Time)
			}
			for _, c := range nc.Status.Conditions {
				if c.Type == karpv1.ConditionTypeDisruptionReason && c.Status == metav1.ConditionTrue {
					note(nc.Name, c.LastTransitionTime.Time)
				}
			}
			if v.Deleted != nil {
				note(nc.Name, *v.Deleted)
			}
		}
	}
	return out
}

// honest reports whether the pod's memory request covers the observed peak.
func honest(p evidence.PodRow, peak int64) bool {
	return p.Usage != nil && peak > 0 && p.Usage.RequestBytes >= peak
}

// terminator names who terminated an instance, from its caller key.
func terminator(caller string) string {
	switch caller {
	case accesskeys.Learner:
		return "you (" + caller + ")"
	case accesskeys.Karpenter:
		return "Karpenter's garbage collection (" + caller + ")"
	}
	return evidence.Dash(caller)
}
