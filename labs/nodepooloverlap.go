package labs

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"

	"github.com/karplab/karplab/labs/evidence"
	"github.com/karplab/karplab/labs/lint"
)

// The nodepool-overlap lab: two teams' NodePools, each sound alone, both admit the render
// workers (which select no tier) at equal weight, so Karpenter buys them the realtime team's
// on-demand machines only because "ziba-realtime" sorts after "ziba-general".
const (
	overlapLab = "nodepool-overlap"
	// realtimePool is the costlier pool: on-demand only, for the preview API.
	realtimePool = "ziba-realtime"
	// realtimeTaint is the taint the preview API tolerates: the fix that holds.
	realtimeTaint         = "workload.ziba.dev/tier=realtime:NoSchedule"
	previewAPI            = "ziba-preview-api"
	overlapRenderReplicas = 4
	previewReplicas       = 2
)

// overlapWorkload is each Deployment of the lab with the pool it belongs on.
var overlapWorkload = []struct {
	deploy, pool string
	replicas     int
}{
	{renderWorker, generalPool, overlapRenderReplicas},
	{previewAPI, realtimePool, previewReplicas},
}

func init() {
	register(&Lab{
		Name:     overlapLab,
		Position: 9,
		Title:    "Two teams' NodePools overlap by accident; each pod must land on its own pool",
		Summary: `The course's ziba-general pool and the realtime team's on-demand ziba-realtime pool both admit
the render workers, at equal weight: Karpenter buys them the costlier machines because of
how the pools' names sort. Find the overlap (karplab lint nodepools) and fix it with a taint,
a weight or requirements; check proves each pod runs on its own pool, the first Karpenter
tries for it, no workload fits two pools at equal weight, and the costlier pool holds only
its own workload.`,
		Checklist: []string{
			"NodePools are mutually understandable, bounded, and do not overlap accidentally.",
		},
		Stage: stageOverlap,
		Grade: gradeOverlap,
	})
}

func gradeOverlap(g *Grading) []Check {
	ev := g.Evidence
	preview := checkRunning(ev, zibaNamespace, previewAPI, previewReplicas)
	preview.ID, preview.Title = "preview-api-running", "The realtime team's preview API runs: every replica is Running"
	return []Check{
		checkRunning(ev, zibaNamespace, renderWorker, overlapRenderReplicas),
		preview,
		checkPlacedByIntendedPool(g),
		checkNoAccidentalOverlap(g),
		checkLintClean(g),
		checkCostlierPoolOwnWorkload(g),
		checkNoLeaks(ev),
	}
}

// workloadPod is a running pod of the lab's workload, its spec, and where it runs.
type workloadPod struct {
	row             evidence.PodRow
	pod             corev1.Pod
	deploy, pool    string // its Deployment and the pool it belongs on
	nodePool        string // the pool of the node it runs on
	admitted        []karpv1.NodePool
	refusedByIntent string // why its intended pool refuses it, when it does
}

// workloadPods lists the workload's running pods against the live NodePools, in the order
// Karpenter's provisioner tries them.
func (g *Grading) workloadPods() []workloadPod {
	pools := orderedPools(g.liveNodePools())
	nodePool := map[string]string{}
	for _, n := range g.Evidence.Nodes {
		if n.Deleted == nil {
			nodePool[n.Name] = n.NodePool
		}
	}
	var out []workloadPod
	for _, w := range overlapWorkload {
		for _, r := range g.Evidence.PodsOf(zibaNamespace, w.deploy) {
			v := g.hist.Pods[r.UID]
			if r.Phase != "Running" || r.DeletedAt != nil || !isReplicaOf(r, w.deploy) || v == nil {
				continue
			}
			p := workloadPod{row: r, pod: v.Last(), deploy: w.deploy, pool: w.pool, nodePool: nodePool[r.Node]}
			for _, np := range pools {
				why := poolRefuses(np, &p.pod)
				if why == "" {
					p.admitted = append(p.admitted, np)
				} else if np.Name == w.pool {
					p.refusedByIntent = why
				}
			}
			out = append(out, p)
		}
	}
	return out
}

// orderedPools sorts with core's comparator: weight, then name descending.
func orderedPools(pools []karpv1.NodePool) []karpv1.NodePool {
	ptrs := make([]*karpv1.NodePool, len(pools))
	for i := range pools {
		ptrs[i] = &pools[i]
	}
	nodepoolutils.OrderByWeight(ptrs)
	out := make([]karpv1.NodePool, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
	}
	return out
}

// poolRefuses says why np can never take pod (its requirements, limits or taints), or "".
func poolRefuses(np karpv1.NodePool, pod *corev1.Pod) string {
	if why := nodePoolRefuses(np, pod); why != "" {
		return why
	}
	if err := scheduling.Taints(np.Spec.Template.Spec.Taints).ToleratesPod(pod); err != nil {
		return err.Error()
	}
	return ""
}

func poolWeight(np karpv1.NodePool) int32 {
	if np.Spec.Weight == nil {
		return 0
	}
	return *np.Spec.Weight
}

func poolNames(pools []karpv1.NodePool) string {
	var names []string
	for _, np := range pools {
		names = append(names, fmt.Sprintf("%s (weight %d)", np.Name, poolWeight(np)))
	}
	return strings.Join(names, ", ")
}

// checkPlacedByIntendedPool: each running pod is on a node of its own pool, and that pool is
// the first one Karpenter tries for it under the NodePools as they are now.
func checkPlacedByIntendedPool(g *Grading) Check {
	const id, title = "placed-by-intended-pool", "Each pod runs on its intended pool, the first pool Karpenter tries for it"
	pods := g.workloadPods()
	if len(pods) == 0 {
		return fail(id, title, "no pod of the workload runs", "Stage the lab: karplab lab run "+overlapLab, noWorkloadRuns)
	}
	var wrong, right []string
	for _, p := range pods {
		switch {
		case p.nodePool != p.pool && p.refusedByIntent != "":
			wrong = append(wrong, fmt.Sprintf("%s runs on node %s of NodePool %s; it belongs on %s, which refuses it now: %s", p.row.Name, p.row.Node, evidence.Dash(p.nodePool), p.pool, p.refusedByIntent))
		case p.nodePool != p.pool:
			wrong = append(wrong, fmt.Sprintf("%s runs on node %s of NodePool %s; it belongs on %s", p.row.Name, p.row.Node, evidence.Dash(p.nodePool), p.pool))
		case len(p.admitted) == 0 || p.admitted[0].Name != p.pool:
			why := p.refusedByIntent
			if why == "" && len(p.admitted) > 0 {
				why = "Karpenter tries " + p.admitted[0].Name + " first"
			}
			wrong = append(wrong, fmt.Sprintf("%s runs on %s, but a new pod like it would not get %s: %s", p.row.Name, p.nodePool, p.pool, why))
		default:
			right = append(right, fmt.Sprintf("%s on node %s (%s)", p.row.Name, p.row.Node, p.nodePool))
		}
	}
	if len(wrong) == 0 {
		return pass(id, title, fmt.Sprintf("%d pods, each on its own pool", len(right)), first(right, 6)...)
	}
	return fail(id, title, fmt.Sprintf("%d of %d pods are not on their own pool", len(wrong), len(pods)),
		"kubectl get nodes -L karpenter.sh/nodepool shows which pool bought each node. Taint "+realtimePool+" with the taint its own pods tolerate ("+realtimeTaint+
			"): the taint change drifts its nodes and Karpenter moves the others off. A higher weight for "+generalPool+" alone does not hold: it orders the pools only for new machines, and Karpenter still packs render workers into spare room on "+realtimePool+"'s.",
		first(wrong, 6)...)
}

// noWorkloadRuns is the ✗ line of a placement check with nothing to place.
const noWorkloadRuns = "no pod of " + renderWorker + " or " + previewAPI + " runs: no placement to judge"

// checkNoAccidentalOverlap: no Deployment's pods fit two pools of equal weight, where only
// the pools' names would choose. A pod that fits two pools of different weights states a
// preference (the lower pool is its fallback), and is reported as such.
func checkNoAccidentalOverlap(g *Grading) Check {
	const id, title = "no-accidental-overlap", "No pod's requirements match two NodePools unintentionally"
	pods := g.workloadPods()
	if len(pods) == 0 {
		return fail(id, title, "no pod of the workload runs", "Stage the lab: karplab lab run "+overlapLab, noWorkloadRuns)
	}
	seen := map[string]bool{}
	var ambiguous, fallback, single []string
	for _, p := range pods {
		key := p.deploy + "/" + p.pod.Labels["pod-template-hash"]
		if seen[key] {
			continue
		}
		seen[key] = true
		switch a := p.admitted; {
		case len(a) >= 2 && poolWeight(a[0]) == poolWeight(a[1]):
			ambiguous = append(ambiguous, fmt.Sprintf("%s's pods (e.g. %s) fit %s: equal weights, so Karpenter takes %s only because its name sorts later",
				p.deploy, p.row.Name, poolNames(a), a[0].Name))
		case len(a) >= 2:
			fallback = append(fallback, fmt.Sprintf("%s's pods fit %s: %s is preferred by weight, the rest take them only when it cannot (its limits reached)",
				p.deploy, poolNames(a), a[0].Name))
		case len(a) == 1:
			single = append(single, fmt.Sprintf("%s's pods fit %s only", p.deploy, a[0].Name))
		}
	}
	if len(ambiguous) > 0 {
		return failWith(id, title, fmt.Sprintf("%d of the workload's pod specs fit two pools at equal weight", len(ambiguous)),
			"karplab lint nodepools names the overlap: taint the pool that is meant for some workloads only ("+realtimeTaint+" on "+realtimePool+"); a weight only states a preference for new machines.",
			ambiguous, fallback)
	}
	return pass(id, title, fmt.Sprintf("%d pod specs: %d fit one pool only, %d prefer one pool by weight", len(seen), len(single), len(fallback)),
		append(single, fallback...)...)
}

// checkLintClean: the live NodePools pass karplab lint nodepools (warnings allowed).
func checkLintClean(g *Grading) Check {
	const id, title = "nodepools-lint-clean", "The NodePools are bounded and no two overlap by accident (karplab lint nodepools)"
	live := g.liveNodePools()
	if len(live) == 0 {
		return fail(id, title, "no NodePool is applied", "kubectl apply -f "+overlapLab+"/nodepools.yaml", "no NodePool is applied: nothing to lint")
	}
	pools := make([]lint.Pool, len(live))
	for i := range live {
		pools[i] = lint.Pool{NodePool: &live[i], Source: "cluster"}
	}
	r := lint.Lint(pools)
	var errs, warns []string
	for _, f := range r.Findings {
		line := fmt.Sprintf("%s: %s: %s", strings.Join(f.NodePools, " and "), f.Rule, f.Message)
		if f.Severity == lint.SeverityError {
			errs = append(errs, line+"; fix: "+f.Fix)
		} else {
			warns = append(warns, "warning: "+line)
		}
	}
	if len(errs) == 0 {
		return pass(id, title, fmt.Sprintf("%s: no error, %s", nouns(len(live), "NodePool"), nouns(len(warns), "warning")), warns...)
	}
	return failWith(id, title, fmt.Sprintf("%s: %s", nouns(len(live), "NodePool"), nouns(len(errs), "error")),
		"Run karplab lint nodepools (or -f nodepools.yaml before you apply) and fix what it names.", errs, warns)
}

// checkCostlierPoolOwnWorkload: the realtime pool's live nodes run only the preview API.
func checkCostlierPoolOwnWorkload(g *Grading) Check {
	const id, title = "costlier-pool-own-workload", "The costlier pool (ziba-realtime, on-demand) holds only its own workload"
	ev := g.Evidence
	onPool := map[string]bool{}
	for _, n := range ev.Nodes {
		if n.Deleted == nil && n.NodePool == realtimePool {
			onPool[n.Name] = true
		}
	}
	var foreign []string
	own := 0
	for _, p := range ev.Pods {
		if !onPool[p.Node] || p.DeletedAt != nil || p.Phase == "Succeeded" || p.Phase == "Failed" {
			continue
		}
		if isReplicaOf(p, previewAPI) {
			own++
			continue
		}
		foreign = append(foreign, fmt.Sprintf("%s/%s runs on %s node %s", p.Namespace, p.Name, realtimePool, p.Node))
	}
	sort.Strings(foreign)
	costs := poolCosts(ev)
	if len(foreign) == 0 {
		return pass(id, title, fmt.Sprintf("%s of %s run %s and nothing else", nouns(len(onPool), "node"), realtimePool, nouns(own, "preview API pod")), costs...)
	}
	return failWith(id, title, fmt.Sprintf("%d pods of other workloads run on %s's on-demand nodes", len(foreign), realtimePool),
		"Keep them off the pool, then move those already there: kubectl get pods -n ziba -o wide; kubectl get nodeclaims -l karpenter.sh/nodepool="+realtimePool,
		first(foreign, 6), costs)
}

// poolCosts prices each pool's running instances per hour.
func poolCosts(ev *evidence.Evidence) []string {
	type sum struct {
		n     int
		price float64
		types map[string]bool
	}
	by := map[string]*sum{}
	for _, in := range ev.Instances {
		if in.State != "running" && in.State != "pending" || in.NodePool == "" {
			continue
		}
		s := by[in.NodePool]
		if s == nil {
			s = &sum{types: map[string]bool{}}
			by[in.NodePool] = s
		}
		s.n++
		s.price += in.PricePerHour
		s.types[in.Type+" "+in.CapacityType] = true
	}
	var out []string
	for _, pool := range []string{realtimePool, generalPool} {
		if s := by[pool]; s != nil {
			types := make([]string, 0, len(s.types))
			for t := range s.types {
				types = append(types, t)
			}
			sort.Strings(types)
			out = append(out, fmt.Sprintf("%s: %s, $%.4f/h (%s)", pool, nouns(s.n, "instance"), s.price, strings.Join(types, ", ")))
		}
	}
	return out
}

func stageOverlap(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	for _, f := range []string{"workload.yaml", "nodepools.yaml"} {
		if err := e.ApplyExercise(ctx, overlapLab, f, out); err != nil {
			return err
		}
	}
	for _, w := range overlapWorkload {
		if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, "app.kubernetes.io/name="+w.deploy, w.replicas, "Running"); err != nil {
			return err
		}
	}
	if !opts.Solution {
		fmt.Fprintf(out, "\nEverything runs, on whose machines? kubectl get nodes -L karpenter.sh/nodepool,karpenter.sh/capacity-type; karplab lint nodepools.\nYour task: karplab lab get %s, fix nodepools.yaml, apply it, then karplab check %s\n", overlapLab, overlapLab)
		return nil
	}
	if err := e.ApplySolution(ctx, overlapLab, out); err != nil {
		return err
	}
	// The taint drifts the realtime pool's nodes; Karpenter replaces them one budget at a time.
	if err := e.waitChecks(ctx, out, max(opts.Wait, 4*time.Minute), overlapLab, "workload-running", "preview-api-running", "placed-by-intended-pool", "costlier-pool-own-workload"); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nEach pod runs on its own pool. Grade it: karplab check %s; read it: karplab evidence\n", overlapLab)
	return nil
}
