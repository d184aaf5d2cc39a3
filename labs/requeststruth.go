package labs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/karplab/karplab/cluster/metrics"
	"github.com/karplab/karplab/exercises"
	"github.com/karplab/karplab/labs/evidence"
)

// The requests-truth lab is the course's own example: render workers that request 1 GiB and
// peak at 4 GiB. Karpenter sizes machines from the requests, so it packs the workers onto
// machines too small for what they use; the kubelet evicts them under memory pressure.
const (
	truthLab      = "requests-truth"
	truthReplicas = 6
	// truthPeak is what a render worker really holds while it renders (the usage profile).
	truthPeak = "4Gi"
	// overRequest is how many times its observed peak a worker may request: past it, the
	// request lies the other way, and Karpenter buys memory nothing uses.
	overRequest = 2
)

func init() {
	register(&Lab{
		Name:     truthLab,
		Position: 10,
		Title:    "Requests that lie: a 1 GiB request, a 4 GiB peak, evictions",
		Summary: `Six render workers request 1 GiB and peak at 4 GiB. Karpenter sized their machines from
the requests, and the kubelet evicts them under memory pressure. Read the observed peaks
(kubectl top pods, karplab evidence), set truthful requests and limits, and let Karpenter
size the machines again; check proves the requests cover the peaks, the machines hold
them, no worker was evicted or OOM-killed since, and the NodePool was not widened.`,
		Checklist: []string{
			"Pending reasons and resource requests are justified by observed workload evidence.",
		},
		Stage: stageTruth,
		Grade: gradeTruth,
	})
}

func gradeTruth(g *Grading) []Check {
	ev := g.Evidence
	return []Check{
		checkRunning(ev, zibaNamespace, renderWorker, truthReplicas),
		checkRequestsCoverPeaks(g),
		checkMachinesHoldPeaks(g),
		checkNoEvictionSinceFix(g),
		checkNodePoolNotWidened(g, truthLab, "nodepool.yaml"),
		checkNoLeaks(ev),
	}
}

// observedPeak is the highest memory any render worker was seen to use, and which one.
func observedPeak(ev *evidence.Evidence) (int64, evidence.PodRow) {
	var peak int64
	var at evidence.PodRow
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if p.Usage != nil && p.Usage.PeakBytes > peak {
			peak, at = p.Usage.PeakBytes, p
		}
	}
	return peak, at
}

// fixedSince is when the first render worker with an honest request was created: the fix's
// time (zero before it).
func fixedSince(ev *evidence.Evidence, peak int64) time.Time {
	var t time.Time
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if isReplicaOf(p, renderWorker) && honest(p, peak) && (t.IsZero() || p.Created.Before(t)) {
			t = p.Created
		}
	}
	return t
}

// checkRequestsCoverPeaks: every running worker requests at least the highest memory any
// worker was observed to use, and its limit (if any) is no lower than its request.
func checkRequestsCoverPeaks(g *Grading) Check {
	const id, title = "requests-cover-peaks", "The workers' memory requests cover their observed peak, and reserve no more than twice it"
	ev := g.Evidence
	if g.Snapshot.Usage == nil {
		return fail(id, title, "no usage was observed: the lab's metrics API is not running", "karplab status lists metrics-server; it runs on the embedded backend.", noMetrics)
	}
	peak, who := observedPeak(ev)
	if peak == 0 {
		return fail(id, title, "no render worker has been observed using memory yet", "Stage the lab (karplab lab run "+truthLab+") and wait for kubectl top pods -n ziba to show them.",
			"the metrics-server has no sample of a render worker: there is no peak to cover")
	}
	seen := fmt.Sprintf("observed peak %s (%s at %s)", evidence.MemoryString(peak), who.Name, stamp(who.Usage.PeakMemoryAt))
	var short, over, ok []string
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if p.Phase != "Running" || p.DeletedAt != nil || !isReplicaOf(p, renderWorker) || p.Usage == nil {
			continue
		}
		line := fmt.Sprintf("%s requests %s (limit %s), peaked at %s", p.Name, p.Usage.MemoryRequest, evidence.Dash(p.Usage.MemoryLimit), p.Usage.PeakMemory)
		switch {
		case !honest(p, peak):
			short = append(short, line)
		case p.Usage.RequestBytes > overRequest*peak:
			over = append(over, fmt.Sprintf("%s, %.0f times the observed peak: Karpenter buys machines for memory nothing uses", line, float64(p.Usage.RequestBytes)/float64(peak)))
		default:
			ok = append(ok, line)
		}
	}
	if len(short) == 0 && len(over) > 0 {
		return failWith(id, title, fmt.Sprintf("%d running workers request more than %d times the %s", len(over), overRequest, seen),
			"A request far above the peak lies too: Karpenter sizes and bills machines from it. Request the observed peak (kubectl top pods -n ziba) with a limit a little above it, then kubectl apply -f workload.yaml.",
			first(over, 6), first(ok, 3))
	}
	if len(short) == 0 && len(ok) > 0 {
		return pass(id, title, fmt.Sprintf("%d running workers request at least the %s", len(ok), seen), first(ok, 6)...)
	}
	if len(short) == 0 {
		short = []string{"no render worker is Running to judge: kubectl get pods -n ziba"}
	}
	return fail(id, title, fmt.Sprintf("%d running workers request less than the %s", len(short), seen),
		"Karpenter and the scheduler reserve what pods request, not what they use: set resources.requests.memory (and a limit above it) from kubectl top pods -n ziba, then kubectl apply -f workload.yaml.",
		first(short, 6)...)
}

// checkMachinesHoldPeaks: on every node the workers run on, the observed peaks of its pods
// fit its allocatable memory, and no node is under memory pressure now.
func checkMachinesHoldPeaks(g *Grading) Check {
	const id, title = "machines-hold-peaks", "Every machine running the workers holds their observed peaks: no memory pressure"
	ev := g.Evidence
	rep := g.Snapshot.Usage
	if rep == nil {
		return fail(id, title, "no usage was observed: the lab's metrics API is not running", "karplab status lists metrics-server.", noMetrics)
	}
	peaks := map[string]int64{}
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if p.Phase == "Running" && p.DeletedAt == nil && p.Usage != nil {
			peaks[p.Node] += p.Usage.PeakBytes
		}
	}
	var bad, ok []string
	over, lingering := 0, 0 // machines the peaks overflow; whose MemoryPressure outlasts the pressure
	for _, n := range rep.Nodes {
		sum, runs := peaks[n.Name]
		if !runs {
			continue
		}
		alloc := n.Allocatable.Memory.Value()
		line := fmt.Sprintf("%s: workers' peaks %s of %s allocatable (requests reserve %s)", n.Name, evidence.MemoryString(sum), evidence.MemoryString(alloc), evidence.MemoryString(requestedOn(ev, n.Name)))
		switch {
		case sum > alloc:
			over++
			bad = append(bad, line)
		case n.MemoryPressure:
			if n.Pods.Memory.Value() <= alloc {
				lingering++
			}
			bad = append(bad, pressureLine(n, sum, alloc))
		default:
			ok = append(ok, line)
		}
	}
	sort.Strings(bad)
	sort.Strings(ok)
	if len(bad) == 0 && len(ok) > 0 {
		return pass(id, title, fmt.Sprintf("%s hold their workers' peaks", nouns(len(ok), "machine")), first(ok, 6)...)
	}
	if len(bad) == 0 {
		return fail(id, title, "no worker runs on a machine the metrics-server samples", "kubectl top nodes; kubectl get pods -n ziba -o wide",
			"no running render worker is on a Ready node the metrics-server samples")
	}
	if lingering == len(bad) {
		return failWith(id, title, fmt.Sprintf("the workers' peaks fit, but %s still report MemoryPressure", nouns(len(bad), "machine")),
			fmt.Sprintf("The pressure is over: the kubelet clears MemoryPressure (and the node's memory-pressure taint) once it has been gone for %s. Watch it: kubectl describe nodes | grep -E 'Name:|MemoryPressure', then check again.", metrics.DefaultPressureTransitionPeriod),
			first(bad, 6), first(ok, 3))
	}
	reason := fmt.Sprintf("the workers' peaks exceed the memory of %s", nouns(over, "machine"))
	if over == 0 {
		reason = fmt.Sprintf("%s under memory pressure from what their pods use", nouns(len(bad)-lingering, "machine"))
	}
	return failWith(id, title, reason,
		"A machine sized from dishonest requests cannot hold what its pods use: fix the requests, and Karpenter sizes the next machines from them (the old ones drain as the workers move).",
		first(bad, 6), first(ok, 3))
}

// noMetrics is the ✗ line of a usage check without the lab's metrics-server.
const noMetrics = "the lab's metrics-server recorded nothing: no peak, no machine's usage"

// pressureLine says what holds on a node that reports MemoryPressure although the peaks of
// the workers it runs now fit: what its pods use now, and what keeps the condition up.
func pressureLine(n metrics.NodeUsage, peaks, alloc int64) string {
	now := n.Pods.Memory.Value()
	why := fmt.Sprintf("the pressure has passed; the kubelet keeps the condition for %s after it ends", metrics.DefaultPressureTransitionPeriod)
	if now > alloc {
		why = "its pods (not only the workers) use more than its allocatable memory"
	}
	return fmt.Sprintf("%s: MemoryPressure=True, though the workers' peaks %s fit its %s allocatable; its pods use %s now: %s",
		n.Name, evidence.MemoryString(peaks), evidence.MemoryString(alloc), evidence.MemoryString(now), why)
}

// requestedOn sums the memory the running workers on node request.
func requestedOn(ev *evidence.Evidence, node string) int64 {
	var sum int64
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if p.Node == node && p.Phase == "Running" && p.DeletedAt == nil && p.Usage != nil {
			sum += p.Usage.RequestBytes
		}
	}
	return sum
}

// checkNoEvictionSinceFix: no worker with an honest request was evicted or OOM-killed, and
// the NodeClaims Karpenter made since the fix were sized for honest workers.
func checkNoEvictionSinceFix(g *Grading) Check {
	const id, title = "no-eviction-since-fix", "Since the fix no worker was evicted or OOM-killed, and Karpenter sized new NodeClaims from the honest requests"
	ev := g.Evidence
	peak, _ := observedPeak(ev)
	since := fixedSince(ev, peak)
	if since.IsZero() {
		return fail(id, title, "no worker with an honest memory request has run yet", "Fix the requests in workload.yaml and apply it.",
			dishonestWorkers(ev, peak)...)
	}
	var killed, sized []string
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if u := p.Usage; u != nil && honest(p, peak) && (u.Evicted != "" || u.OOMKills > 0) {
			killed = append(killed, fmt.Sprintf("%s (requests %s, limit %s): %s", p.Name, u.MemoryRequest, evidence.Dash(u.MemoryLimit), evidence.Dash(u.Evicted+oomText(u.OOMKills))))
		}
	}
	// A NodeClaim made while a dishonest worker still waited may be for that worker: only
	// those made after the last one was gone must be sized for honest workers.
	lastDishonest := since
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if isReplicaOf(p, renderWorker) && !honest(p, peak) {
			switch {
			case p.DeletedAt == nil:
				lastDishonest = ev.TakenAt
			case p.DeletedAt.After(lastDishonest):
				lastDishonest = *p.DeletedAt
			}
		}
	}
	for _, v := range g.hist.NodeClaims {
		nc := v.Last()
		if nc.CreationTimestamp.Time.Before(since) || nc.Labels[karpv1.NodePoolLabelKey] != generalPool {
			continue
		}
		q := nc.Spec.Resources.Requests[corev1.ResourceMemory]
		if q.Value() < peak && !nc.CreationTimestamp.Time.After(lastDishonest) {
			continue // for a worker of the old ReplicaSet
		}
		line := fmt.Sprintf("NodeClaim %s (created %s) was sized for %s of requests", nc.Name, stamp(&nc.CreationTimestamp.Time), q.String())
		if q.Value() < peak {
			killed = append(killed, line+", less than one honest worker")
		} else {
			sized = append(sized, line)
		}
	}
	sort.Strings(sized)
	evidence := append([]string{"fixed since " + stamp(&since) + " (the first worker with an honest request)"}, first(sized, 5)...)
	if len(killed) == 0 {
		return pass(id, title, fmt.Sprintf("no honest worker evicted or OOM-killed; %s since the fix", nouns(len(sized), "NodeClaim")), evidence...)
	}
	return failWith(id, title, fmt.Sprintf("%d problems since the fix", len(killed)),
		"A request below the peak still invites eviction, a limit below it OOM-kills: request the observed peak and limit above it.",
		first(killed, 6), evidence)
}

// dishonestWorkers are the ✗ lines before any worker requested the peak: what each
// requests now.
func dishonestWorkers(ev *evidence.Evidence, peak int64) []string {
	var lines []string
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if !isReplicaOf(p, renderWorker) || p.DeletedAt != nil || p.Usage == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s requests %s, below the observed peak %s", p.Name, p.Usage.MemoryRequest, evidence.MemoryString(peak)))
	}
	if len(lines) == 0 {
		return []string{"no render worker with a memory request was observed"}
	}
	sort.Strings(lines)
	return first(lines, 6)
}

func oomText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("OOMKilled x%d", n)
}

// checkNodePoolNotWidened: the live NodePool still has the lab's requirements and limits:
// the fix was the requests, not a broader pool.
func checkNodePoolNotWidened(g *Grading, lab, file string) Check {
	const id, title = "nodepool-not-widened", "The NodePool was not widened to compensate: its requirements and limits are the lab's"
	want, err := stagedNodePool(lab, file)
	if err != nil {
		return fail(id, title, "reading the lab's NodePool: "+err.Error(), "This is the lab's own error; report it.", err.Error())
	}
	np, ok := g.nodePool(want.Name)
	if !ok {
		return fail(id, title, "NodePool "+want.Name+" is gone", "kubectl apply -f "+file, "NodePool "+want.Name+" does not exist")
	}
	var changes []string
	have := requirementStrings(np.Spec.Template.Spec.Requirements)
	for _, r := range requirementStrings(want.Spec.Template.Spec.Requirements) {
		if !slices.Contains(have, r) {
			changes = append(changes, "requirement changed or removed: "+r)
		}
	}
	for name, q := range want.Spec.Limits {
		if got, ok := np.Spec.Limits[name]; !ok || got.Cmp(q) > 0 {
			changes = append(changes, fmt.Sprintf("limits.%s %s, the lab's is %s", name, evidence.Dash(got.String()), q.String()))
		}
	}
	if len(changes) == 0 {
		return pass(id, title, fmt.Sprintf("NodePool %s keeps its %d requirements and its limits", np.Name, len(have)))
	}
	return fail(id, title, fmt.Sprintf("NodePool %s was changed: %d differences", np.Name, len(changes)),
		"Recover from the earliest failing boundary, the requests: kubectl apply -f "+file+" restores the pool.", first(changes, 6)...)
}

func requirementStrings(reqs []karpv1.NodeSelectorRequirementWithMinValues) []string {
	var out []string
	for _, r := range reqs {
		vals := slices.Clone(r.Values)
		sort.Strings(vals)
		out = append(out, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(vals, ",")))
	}
	return out
}

// stagedNodePool is the NodePool the lab's exercise file declares.
func stagedNodePool(lab, file string) (*karpv1.NodePool, error) {
	b, err := exercises.FS.ReadFile(lab + "/" + file)
	if err != nil {
		return nil, err
	}
	for _, doc := range strings.Split(string(b), "\n---") {
		var np karpv1.NodePool
		if err := yaml.Unmarshal([]byte(doc), &np); err == nil && np.Kind == "NodePool" {
			return &np, nil
		}
	}
	return nil, fmt.Errorf("%s/%s declares no NodePool", lab, file)
}

func stageTruth(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	fmt.Fprintf(out, " the render workers' real behaviour: memory climbs to %s as they render (a kwok ClusterResourceUsage)\n", truthPeak)
	objs, err := DecodeManifests("the render workers' usage profile", []byte(truthUsageProfile))
	if err != nil {
		return err
	}
	if err := e.Apply(ctx, objs, out); err != nil {
		return err
	}
	for _, f := range []string{"nodepool.yaml", "workload.yaml"} {
		if err := e.ApplyExercise(ctx, truthLab, f, out); err != nil {
			return err
		}
	}
	// The incident is the eviction: wait until the kubelet has evicted a worker.
	if err := waitFor(ctx, out, max(opts.Wait, 3*time.Minute), "a worker evicted under memory pressure", func(ctx context.Context) (bool, string, error) {
		g, err := e.grading(ctx)
		if err != nil {
			return false, "", err
		}
		n := 0
		for _, p := range g.Evidence.PodsOf(zibaNamespace, renderWorker) {
			if p.Usage != nil && (p.Usage.Evicted != "" || p.Usage.OOMKills > 0) {
				n++
			}
		}
		return n > 0, nouns(n, "worker") + " evicted", nil
	}); err != nil {
		return err
	}
	if !opts.Solution {
		fmt.Fprintf(out, "\nThe workers are evicted (kubectl get events -n ziba --field-selector reason=Evicted). How much do they use? kubectl top pods -n ziba.\nYour task: karplab lab get %s, make the requests in workload.yaml true, apply it, then karplab check %s\n", truthLab, truthLab)
		return nil
	}
	if err := e.ApplySolution(ctx, truthLab, out); err != nil {
		return err
	}
	if err := e.waitChecks(ctx, out, max(opts.Wait, 4*time.Minute), truthLab, "workload-running", "requests-cover-peaks", "machines-hold-peaks"); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe workers request what they use, and their machines hold it. Grade it: karplab check %s; read it: karplab evidence\n", truthLab)
	return nil
}

// truthUsageProfile is how a render worker really uses memory: it starts at 1 GiB and
// climbs to its 4 GiB peak within its first 10 seconds of rendering, so the first sample
// (every 15 s) already sees the peak. The lab owns it (the
// learner observes it; it is not among the exercise's files).
const truthUsageProfile = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata:
  name: ziba-render-worker
spec:
  selector:
    matchNamespaces: [ziba]
  usages:
  - containers: [render]
    usage:
      cpu:
        value: 400m
      memory:
        expression: |
          pod.SinceSecond() < 10.0
          ? Quantity("1Gi") + Quantity("3Gi") * (pod.SinceSecond() / 10.0)
          : Quantity("` + truthPeak + `")
`
