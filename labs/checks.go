package labs

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
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
	var evidence []string
	for _, p := range waiting {
		msg := p.KarpenterMessage
		if msg == "" {
			msg = p.PendingReason
		}
		evidence = append(evidence, fmt.Sprintf("%s Pending: %s", p.Name, dash(msg)))
	}
	return fail(id, title, reason+fmt.Sprintf(", %d Pending", len(pending)),
		"Is a NodePool applied and Ready (kubectl get nodepools,nodeclaims)? kubectl describe pod shows why a pod waits.", first(evidence, 5)...)
}

// isReplicaOf tells the Deployment's pods (made by one of its ReplicaSets) from a pod that
// only shares their name prefix.
func isReplicaOf(p evidence.PodRow, deploy string) bool {
	return strings.HasPrefix(p.Owner, "ReplicaSet/"+deploy+"-")
}

// checkChains: each running pod's chain pod UID -> NodeClaim -> instance -> Node is complete
// and consistent, with timestamps in causal order.
func checkChains(ev *evidence.Evidence, pods []evidence.PodRow) (chain, order Check) {
	const cid, ctitle = "chain-complete", "Each pod's chain is complete: Pending pod UID -> NodeClaim -> EC2 instance -> Node -> started pod"
	const oid, otitle = "timestamps-ordered", "Timestamps run in causal order: pending, NodeClaim, launch, registration, initialization, scheduling, start"
	var broken, outOfOrder, inFlight, proofs []string
	complete := 0
	for _, p := range pods {
		if p.Phase != "Running" {
			continue
		}
		nc, ok := ev.NodeClaim(p.NodeClaim)
		in, inOK := ev.Instance(p.InstanceID)
		node, nodeOK := ev.Node(p.Node)
		switch {
		case p.PendingSince == nil:
			broken = append(broken, p.Name+": never recorded as Pending/Unschedulable (was it created before the lab's history started?)")
		case p.NodeClaim == "" || !ok:
			broken = append(broken, p.Name+": its node "+dash(p.Node)+" has no NodeClaim")
		case !inOK:
			broken = append(broken, fmt.Sprintf("%s: NodeClaim %s names instance %q, which EC2 does not know", p.Name, nc.Name, p.InstanceID))
		case in.NodeClaim != nc.Name:
			broken = append(broken, fmt.Sprintf("%s: instance %s is tagged karpenter.sh/nodeclaim=%q, not %s", p.Name, in.ID, in.NodeClaim, nc.Name))
		case !nodeOK || node.ProviderID != nc.ProviderID:
			broken = append(broken, fmt.Sprintf("%s: node %s's providerID does not match NodeClaim %s", p.Name, p.Node, nc.Name))
		case p.StartedAt == nil:
			broken = append(broken, p.Name+": no container start recorded")
		default:
			complete++
			if len(proofs) < 3 {
				proofs = append(proofs, fmt.Sprintf("pod %s (uid %s) -> %s -> %s (%s %s %s) -> %s", p.Name, p.UID, nc.Name, in.ID, in.Type, in.Zone, in.CapacityType, node.Name))
			}
			ooo, flying := chainOrder(p, nc, in, node)
			outOfOrder = append(outOfOrder, ooo...)
			inFlight = append(inFlight, flying...)
			if in.LaunchTime.Add(clockSlack).Before(nc.Created) {
				outOfOrder = append(outOfOrder, fmt.Sprintf("%s: instance %s launched before NodeClaim %s existed", p.Name, in.ID, nc.Name))
			}
		}
	}
	running := 0
	for _, p := range pods {
		if p.Phase == "Running" {
			running++
		}
	}
	if running == 0 {
		chain = fail(cid, ctitle, "no running pod to trace", "Stage the lab and apply a NodePool first.")
		order = fail(oid, otitle, "no running pod to trace", "Stage the lab and apply a NodePool first.")
		return
	}
	if len(broken) == 0 {
		chain = pass(cid, ctitle, fmt.Sprintf("%d of %d running pods traced end to end", complete, running), proofs...)
	} else {
		chain = fail(cid, ctitle, fmt.Sprintf("%d of %d running pods have a broken chain", len(broken), running),
			"Compare kubectl get nodeclaims -o wide with aws ec2 describe-instances: every NodeClaim's providerID must name a tagged instance whose Node registered.", first(broken, 5)...)
	}
	if len(outOfOrder) == 0 && len(broken) == 0 && len(inFlight) > 0 {
		order = fail(oid, otitle, fmt.Sprintf("still in flight: the NodeClaims of %s are not initialized yet", nouns(len(inFlight), "pod")),
			"Karpenter has not finished with them: check again in a few seconds (kubectl get nodeclaims).", first(inFlight, 5)...)
	} else if len(outOfOrder) == 0 && len(broken) == 0 {
		order = pass(oid, otitle, fmt.Sprintf("all %d chains in order", complete))
	} else if len(outOfOrder) == 0 {
		order = fail(oid, otitle, "cannot order what is not traced", "Fix the broken chains first.")
	} else {
		order = fail(oid, otitle, fmt.Sprintf("%d chains out of order", len(outOfOrder)),
			"A pod that started before its node registered was not placed by this NodeClaim: look for a second NodePool or a static node.", first(outOfOrder, 5)...)
	}
	return
}

// chainOrder checks one traced pod's timestamps against what causality orders: the machine's
// launch, registration and initialization follow one another; the pod is scheduled after it
// was pending and after its node registered (the scheduler binds to a Ready node whether or
// not Karpenter has marked its NodeClaim initialized yet), and starts after it is scheduled.
// A NodeClaim not initialized yet is in flight, not out of order.
func chainOrder(p evidence.PodRow, nc evidence.NodeClaimRow, in evidence.InstanceRow, node evidence.NodeRow) (outOfOrder, inFlight []string) {
	type step struct {
		name string
		at   *time.Time
	}
	launched, registered := in.LaunchTime, node.Registered
	var (
		instance    = step{"instance launched", &launched}
		claimLaunch = step{"nodeclaim launched", nc.Launched}
		nodeReg     = step{"node registered", &registered}
		claimReg    = step{"nodeclaim registered", nc.Registered}
		claimInit   = step{"nodeclaim initialized", nc.Initialized}
		pending     = step{"pending", p.PendingSince}
		scheduled   = step{"pod scheduled", p.ScheduledAt}
		started     = step{"pod started", p.StartedAt}
	)
	for _, pair := range [][2]step{
		{instance, claimLaunch}, {claimLaunch, nodeReg}, {nodeReg, claimReg}, {claimReg, claimInit},
		{pending, scheduled}, {nodeReg, scheduled}, {scheduled, started},
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
		return fail(id, title, fmt.Sprintf("no NodePool %q was ever applied", pool), "kubectl apply -f nodepool.yaml")
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

// checkWithinLimits: the capacity launched for the pool never exceeded its limits.
func checkWithinLimits(g *Grading, pool string) Check {
	const id, title = "limits-respected", "The machines stayed within the NodePool's aggregate limits"
	np, ok := g.nodePool(pool)
	if !ok || len(np.Spec.Limits) == 0 {
		return fail(id, title, "the NodePool sets no limits to respect", "Add spec.limits (cpu, memory) to the NodePool.")
	}
	// The peak of concurrently running capacity, from launch and termination times.
	type edge struct {
		at        time.Time
		cpu, mem  int64
		instances int
	}
	// An instance counts until it terminates, or earlier once Karpenter stopped counting its
	// NodeClaim (a disruption replacement overlaps the machine it replaces: claimsLeft).
	left := claimsLeft(g)
	var edges []edge
	for _, in := range g.Evidence.InstancesOfPool(pool) {
		cpu, mem := instanceCapacity(in.Type)
		edges = append(edges, edge{in.LaunchTime, cpu, mem, 1})
		end := in.TerminatedAt
		if t, ok := left[in.NodeClaim]; ok && in.NodeClaim != "" && (end == nil || t.Before(*end)) {
			end = &t
		}
		if end != nil {
			edges = append(edges, edge{*end, -cpu, -mem, -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].at.Before(edges[j].at) })
	var cpu, mem, peakCPU, peakMem int64
	for _, e := range edges {
		cpu, mem = cpu+e.cpu, mem+e.mem
		peakCPU, peakMem = max(peakCPU, cpu), max(peakMem, mem)
	}
	limitCPU, limitMem := np.Spec.Limits[corev1.ResourceCPU], np.Spec.Limits[corev1.ResourceMemory]
	reason := fmt.Sprintf("peak %d vCPU / %s memory against limits cpu %s / memory %s",
		peakCPU, resource.NewQuantity(peakMem, resource.BinarySI).String(), limitCPU.String(), limitMem.String())
	if (limitCPU.IsZero() || peakCPU <= limitCPU.Value()) && (limitMem.IsZero() || peakMem <= limitMem.Value()) {
		return pass(id, title, reason)
	}
	return fail(id, title, reason, "Karpenter counts a NodeClaim against the limits once it launches; over-limit capacity means another actor launched into this pool.")
}

// checkGoverned: instances run IMDSv2-only, and their root volumes are encrypted.
func checkGoverned(ev *evidence.Evidence, pool string) Check {
	const id, title = "machines-governed", "Every machine is governed: encrypted root volume, IMDSv2 required"
	instances := ev.InstancesOfPool(pool)
	if len(instances) == 0 {
		return fail(id, title, "no instance was launched for NodePool "+pool, "Apply the NodePool and EC2NodeClass and stage the workload.")
	}
	var bad, good []string
	for _, in := range instances {
		if in.HTTPTokens != "required" && in.State != "terminated" {
			bad = append(bad, fmt.Sprintf("%s: metadata httpTokens %s (IMDSv1 allowed)", in.ID, dash(in.HTTPTokens)))
		}
		for _, v := range in.Volumes {
			switch {
			case v.Encrypted == nil:
				// deleted before grading; the launch call's other volumes still tell
			case !*v.Encrypted:
				bad = append(bad, fmt.Sprintf("%s: volume %s is not encrypted", in.ID, v.ID))
			default:
				good = append(good, fmt.Sprintf("%s: %s %dGiB %s encrypted, httpTokens %s", in.ID, v.ID, v.SizeGiB, v.Type, in.HTTPTokens))
			}
		}
	}
	if len(bad) == 0 {
		return pass(id, title, fmt.Sprintf("%d instances checked on the EC2 side", len(instances)), first(good, 3)...)
	}
	return fail(id, title, fmt.Sprintf("%d problems on the EC2 side", len(bad)),
		"Set blockDeviceMappings[].ebs.encrypted: true and metadataOptions.httpTokens: required in the EC2NodeClass; Karpenter replaces drifted nodes.", first(bad, 6)...)
}

// checkCostTags: every instance, volume and ENI of the pool carries the cost-allocation tags.
func checkCostTags(ev *evidence.Evidence, pool string) Check {
	const id, title = "cost-tags", "Cost tags (application, environment, owner) are on every instance, volume and network interface"
	instances := ev.InstancesOfPool(pool)
	if len(instances) == 0 {
		return fail(id, title, "no instance was launched for NodePool "+pool, "Apply the NodePool and EC2NodeClass and stage the workload.")
	}
	var missing []string
	resources := 0
	lacks := func(what string, tags map[string]string) {
		var keys []string
		for _, k := range evidence.CostTagKeys {
			if tags[k] == "" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			missing = append(missing, fmt.Sprintf("%s lacks %s", what, strings.Join(keys, ", ")))
		}
	}
	for _, in := range instances {
		resources++
		lacks("instance "+in.ID, in.Tags)
		for _, v := range in.Volumes {
			if v.Tags != nil {
				resources++
				lacks("volume "+v.ID, v.Tags)
			}
		}
		for _, n := range in.ENIs {
			if !n.Deleted {
				resources++
				lacks("network interface "+n.ID, n.Tags)
			}
		}
	}
	if len(missing) == 0 {
		var groups []string
		for _, k := range evidence.CostTagKeys {
			for _, g := range ev.Cost.ByTag[k] {
				groups = append(groups, fmt.Sprintf("%s=%s: $%.6f", k, orNone(g.Value), g.USD))
			}
		}
		return pass(id, title, fmt.Sprintf("%d resources tagged", resources), groups...)
	}
	return fail(id, title, fmt.Sprintf("%d of %d resources lack cost tags", len(missing), resources),
		"Put application, environment and owner under the EC2NodeClass's spec.tags; Karpenter tags instances, volumes and interfaces with them.", first(missing, 6)...)
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
	case cluster.LearnerAccessKeyID:
		return "you (" + caller + ")"
	case cluster.KarpenterAccessKeyID:
		return "Karpenter's garbage collection (" + caller + ")"
	}
	return dash(caller)
}
