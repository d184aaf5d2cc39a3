package labs

import (
	"context"
	"fmt"
	"io"

	"github.com/karplab/karplab/labs/evidence"
)

// The happy path is the seed's incident: ten render workers Pending because their memory
// requests fit no node, until a bounded NodePool lets Karpenter buy exactly what they ask.
const (
	renderReplicas = 10
	// exampleSelector finds courseExample: its name label differs from the replicas' (see workload.yaml).
	exampleSelector = "app.kubernetes.io/name=ziba-render-worker-example"
	// courseExample is the pod the course describes by name; workload.yaml creates it
	// beside the Deployment, with the same spec. Graders trace its chain with the replicas'
	// and require it to run, but do not count it as a replica.
	courseExample = "ziba-render-worker-example"
)

func init() {
	register(&Lab{
		Name:     "happy-path",
		Position: 1,
		Title:    "From Pending pods to running workers, through a bounded NodePool",
		Summary: `Ten ziba-render-worker pods wait Pending: their 6 GiB memory requests fit no node.
Write a bounded NodePool and a governed EC2NodeClass; check proves every pod's chain,
Pending pod UID -> NodeClaim -> EC2 instance -> Node -> started pod, in time order, with
encrypted disks, IMDSv2 and cost tags on the EC2 side.`,
		Checklist: []string{
			"A successful test correlates pod, NodeClaim, instance, Node, workload, and customer outcome.",
			"EC2NodeClass resolves only approved subnets, security groups, IAM role, immutable AMI, encrypted storage, and tags.",
			"NodePools are mutually understandable, bounded, and do not overlap accidentally.",
		},
		Stage: stageHappy,
		Grade: func(g *Grading) []Check {
			ev := g.Evidence
			pods := ev.PodsOf(zibaNamespace, renderWorker)
			chain, order := checkChains(g, pods)
			return []Check{
				g.withRoomInLimits(exampleRuns(ev, checkRunning(ev, zibaNamespace, renderWorker, renderReplicas, courseExample)), generalPool, renderWorker, renderReplicas),
				chain,
				order,
				g.withinCourseLimits(checkBounded(g, generalPool), generalPool),
				checkWithinLimits(g, generalPool),
				checkGoverned(ev, generalPool),
				checkCostTags(ev, generalPool),
				checkNoLeaks(ev),
			}
		},
	})
}

func stageHappy(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if err := e.ApplyExercise(ctx, "happy-path", "workload.yaml", out); err != nil {
		return err
	}
	if !opts.Solution {
		if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, renderReplicas, "Pending (Unschedulable)", "Running"); err != nil {
			return err
		}
		if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, exampleSelector, 1, "Pending (Unschedulable)", "Running"); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nThe render workers are Pending (kubectl describe pod -n %s %s shows why). Your task: karplab lab get happy-path, complete nodepool.yaml, apply it, then karplab check happy-path\n", zibaNamespace, courseExample)
		return nil
	}
	if err := e.ApplySolution(ctx, "happy-path", out); err != nil {
		return err
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, renderReplicas, "Running"); err != nil {
		return err
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, exampleSelector, 1, "Running"); err != nil {
		return err
	}
	// Running pods are not yet the whole record: wait until the chains the grader traces
	// are complete, so check right after this passes.
	if err := e.waitChecks(ctx, out, opts.Wait, "happy-path", "chain-complete", "timestamps-ordered"); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nAll %d render workers run. Grade it: karplab check happy-path; read it: karplab evidence\n", renderReplicas)
	return nil
}

// exampleRuns holds workload-running to the course's example pod too: a bare pod, so once a
// disruption evicts it (drift replacing its machine) or someone deletes it, nothing makes it
// again. Runs saved before staging made it have no such pod, and are not judged on it.
func exampleRuns(ev *evidence.Evidence, c Check) Check {
	var last *evidence.PodRow
	for i, p := range ev.Pods {
		if p.Namespace == zibaNamespace && p.Name == courseExample && (last == nil || !p.Created.Before(last.Created)) {
			last = &ev.Pods[i]
		}
	}
	if last == nil || last.Phase == "Running" || last.Phase == "Pending" {
		return c
	}
	line := fmt.Sprintf("%s is %s (it ran on node %s): a bare pod, so nothing creates it again", courseExample, last.Phase, evidence.Dash(last.Node))
	if last.Phase == "Deleted" {
		line = fmt.Sprintf("%s is gone: deleted at %s (it ran on node %s), and a bare pod is not recreated", courseExample, hmsPtr(last.DeletedAt), evidence.Dash(last.Node))
	}
	hint := "Create the course's example pod again: kubectl apply -f happy-path/workload.yaml (the Deployment in it is unchanged)"
	if !c.Passed {
		hint = c.Hint + " " + hint
	}
	return failWith(c.ID, c.Title, c.Reason+", and the course's example pod does not run", hint, append(c.Problems, line), c.Evidence)
}
