package labs

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/labs/evidence"
)

// The bootstrap-failure lab: an EC2NodeClass's userData carries a debug hook that exits
// before nodeadm runs, so instances launch and run but their Nodes never register. Karpenter
// waits 15 minutes (a constant) before it gives up on a NodeClaim; the learner finds the
// earliest failing boundary from evidence, fixes the userData and removes the stuck
// NodeClaims, so new machines boot and the pods run.
const (
	bootstrapLab      = "bootstrap-failure"
	bootstrapReplicas = 2
	// registrationGrace is how long a launched NodeClaim may go without a Node before the lab
	// calls it stuck: the lab's machines register within seconds (Karpenter itself waits 15m).
	registrationGrace = 20 * time.Second
	// registrationTimeout is how long Karpenter waits for a launched NodeClaim's Node before
	// it deletes the NodeClaim itself (core's nodeclaim liveness).
	registrationTimeout = 15 * time.Minute
)

func init() {
	register(&Lab{
		Name:     bootstrapLab,
		Position: 5,
		Title:    "Instances run but no Node registers: recover from the earliest failing boundary",
		Summary: `The render workers wait Pending although Karpenter launched machines for them: the
EC2NodeClass's userData exits before nodeadm joins the node. Find the failing boundary
(instance running, no Node) from the evidence, fix the userData and remove the stuck
NodeClaims; check proves the boundary was shown, the fix, the stuck NodeClaims and their
instances gone, and every pod's chain complete.`,
		Checklist: []string{
			"Node bootstrap, leaked-instance detection, interruption, consolidation, and rollback are rehearsed.",
			"A successful test correlates pod, NodeClaim, instance, Node, workload, and customer outcome.",
		},
		Stage: stageBootstrap,
		Grade: gradeBootstrap,
	})
}

func gradeBootstrap(g *Grading) []Check {
	ev := g.Evidence
	stuck := stuckNodeClaims(g)
	chain, order := checkChains(g, ev.PodsOf(zibaNamespace, renderWorker))
	return []Check{
		checkFailingBoundary(g, stuck),
		checkUserDataFixed(g),
		checkStuckGone(ev, stuck),
		checkRunning(ev, zibaNamespace, renderWorker, bootstrapReplicas),
		chain,
		order,
	}
}

// stuckClaim is a NodeClaim that launched an instance whose Node never registered.
type stuckClaim struct {
	evidence.NodeClaimRow
	// Registration is Karpenter's last word on its Registered condition.
	Registration string
}

// stuckNodeClaims returns the NodeClaims that launched but never registered, and no Node ever
// named their instance: deleted so, or waiting longer than registrationGrace.
func stuckNodeClaims(g *Grading) []stuckClaim {
	nodes := map[string]bool{}
	for _, n := range g.Evidence.Nodes {
		nodes[n.ProviderID] = true
	}
	var out []stuckClaim
	for _, nc := range g.Evidence.NodeClaims {
		if nc.Launched == nil || nc.Registered != nil || nc.ProviderID == "" || nodes[nc.ProviderID] {
			continue
		}
		if nc.Deleted == nil && g.Snapshot.TakenAt.Sub(*nc.Launched) < registrationGrace {
			continue // still booting
		}
		s := stuckClaim{NodeClaimRow: nc}
		if v := g.hist.NodeClaims[nc.UID]; v != nil {
			for _, c := range v.Last().Status.Conditions {
				if c.Type == karpv1.ConditionTypeRegistered {
					s.Registration = fmt.Sprintf("Registered=%s %s: %s", c.Status, c.Reason, c.Message)
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// checkFailingBoundary: the evidence shows the earliest failing boundary — a NodeClaim
// Launched, its instance running, and no Node.
func checkFailingBoundary(g *Grading, stuck []stuckClaim) Check {
	const id, title = "failing-boundary", "The earliest failing boundary is shown: NodeClaim Launched, instance running, no Node registered"
	if len(stuck) == 0 {
		return fail(id, title, "no NodeClaim in the evidence launched without its Node registering",
			"Stage the lab (karplab lab run "+bootstrapLab+") and let the broken machines boot.",
			fmt.Sprintf("every launched NodeClaim's Node registered within %s: no machine failed to bootstrap", registrationGrace))
	}
	var lines []string
	for _, s := range stuck {
		in, ok := g.Evidence.Instance(s.InstanceID)
		if !ok {
			continue // the EC2 side of the boundary is not in the evidence
		}
		state := fmt.Sprintf("%s %s in %s, %s", in.ID, in.Type, in.Zone, in.State)
		waited := g.Snapshot.TakenAt.Sub(*s.Launched)
		if s.Deleted != nil {
			waited = s.Deleted.Sub(*s.Launched)
		}
		lines = append(lines, fmt.Sprintf("NodeClaim %s launched at %s -> instance %s -> no Node for %s; %s",
			s.Name, s.Launched.Local().Format("15:04:05"), state, waited.Round(time.Second), evidence.Dash(s.Registration)))
	}
	if len(lines) == 0 {
		var unknown []string
		for _, s := range stuck {
			unknown = append(unknown, fmt.Sprintf("NodeClaim %s names instance %s, which EC2 does not know", s.Name, evidence.Dash(s.InstanceID)))
		}
		return fail(id, title, fmt.Sprintf("%d NodeClaims never registered, but EC2 knows none of their instances", len(stuck)),
			"The boundary needs both sides: the instance running in EC2 and no Node in Kubernetes.", first(unknown, 4)...)
	}
	return pass(id, title, fmt.Sprintf("%d NodeClaims launched machines that never registered: bootstrap (user data -> nodeadm -> kubelet) is the failing boundary", len(lines)),
		first(lines, 4)...)
}

// checkUserDataFixed: every EC2NodeClass a NodePool uses now has user data that lets
// bootstrap finish, as the kubelet judges it.
func checkUserDataFixed(g *Grading) Check {
	const id, title = "userdata-fixed", "The EC2NodeClass's userData no longer breaks bootstrap"
	used := map[string]bool{}
	for _, np := range g.liveNodePools() {
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
			used[ref.Name] = true
		}
	}
	if len(used) == 0 {
		return fail(id, title, "no NodePool references an EC2NodeClass", "Stage the lab: karplab lab run "+bootstrapLab,
			"no live NodePool names an EC2NodeClass in spec.template.spec.nodeClassRef")
	}
	var broken, fine []string
	for _, v := range g.hist.NodeClasses {
		obj := v.Last()
		if v.Deleted != nil || !used[obj.GetName()] {
			continue
		}
		script, _, _ := unstructured.NestedString(obj.Object, "spec", "userData")
		if status, line := kubelet.ScriptFailure(script); status != 0 {
			broken = append(broken, fmt.Sprintf("EC2NodeClass %s: its userData exits with status %d at line %d (%q), before nodeadm joins the node",
				obj.GetName(), status, line, scriptLine(script, line)))
		} else {
			line := fmt.Sprintf("EC2NodeClass %s: userData of %d lines runs to its end", obj.GetName(), strings.Count(strings.TrimRight(script, "\n"), "\n")+1)
			if strings.TrimSpace(script) == "" {
				line = fmt.Sprintf("EC2NodeClass %s: no userData, nothing runs before nodeadm", obj.GetName())
			}
			fine = append(fine, line)
		}
	}
	sort.Strings(broken)
	if len(broken) == 0 && len(fine) > 0 {
		return pass(id, title, fmt.Sprintf("%d EC2NodeClass(es) checked", len(fine)), fine...)
	}
	if len(broken) == 0 {
		var missing []string
		for name := range used {
			missing = append(missing, "EC2NodeClass "+name+" does not exist, and a NodePool uses it")
		}
		sort.Strings(missing)
		return fail(id, title, "no EC2NodeClass a NodePool uses exists", "kubectl apply -f nodeclass.yaml", missing...)
	}
	return fail(id, title, fmt.Sprintf("%d EC2NodeClass(es) still break bootstrap", len(broken)),
		"Read what the instance runs at boot (aws ec2 describe-instance-attribute --attribute userData, base64-decoded), fix spec.userData and kubectl apply -f nodeclass.yaml. "+
			"If you deleted the field from the file instead, kubectl apply kept the lab's value (the lab applied it server-side): edit the script, or kubectl edit ec2nodeclass.",
		broken...)
}

func scriptLine(script string, line int) string {
	lines := strings.Split(script, "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[line-1])
}

// checkStuckGone: every stuck NodeClaim is deleted and its instance terminated, by
// Karpenter's 15-minute registration timeout or by hand.
func checkStuckGone(ev *evidence.Evidence, stuck []stuckClaim) Check {
	const id, title = "stuck-nodeclaims-gone", "The stuck NodeClaims are gone and their instances terminated"
	if len(stuck) == 0 {
		return fail(id, title, "no stuck NodeClaim in the evidence to remove", "Stage the lab: karplab lab run "+bootstrapLab,
			"no NodeClaim ever launched a machine that failed to register: the incident was not staged")
	}
	var left, gone []string
	for _, s := range stuck {
		in, ok := ev.Instance(s.InstanceID)
		switch {
		case s.Deleted == nil:
			left = append(left, fmt.Sprintf("NodeClaim %s still exists (instance %s, no Node)", s.Name, s.InstanceID))
		case ok && in.State != "terminated" && in.State != "shutting-down":
			left = append(left, fmt.Sprintf("NodeClaim %s is gone but instance %s is %s", s.Name, in.ID, in.State))
		default:
			by := ""
			if ok && in.TerminatedBy != "" {
				by = " by " + in.TerminatedBy
			}
			gone = append(gone, fmt.Sprintf("NodeClaim %s deleted at %s; instance %s terminated%s", s.Name, s.Deleted.Local().Format("15:04:05"), s.InstanceID, by))
		}
	}
	if len(left) == 0 {
		return pass(id, title, fmt.Sprintf("%d stuck NodeClaims removed with their instances", len(gone)), first(gone, 4)...)
	}
	return fail(id, title, fmt.Sprintf("%d of %d stuck NodeClaims remain", len(left), len(stuck)),
		"Karpenter gives up on an unregistered NodeClaim only after 15 minutes (its registration timeout), and drift does not replace one that never initialized: after the fix, let the timeout pass (karplab time skip 15m), or kubectl delete nodeclaim NAME for each one with no NODE.",
		first(left, 5)...)
}

func stageBootstrap(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if err := e.ApplyExercise(ctx, bootstrapLab, "workload.yaml", out); err != nil {
		return err
	}
	err := waitFor(ctx, out, opts.Wait, "a NodeClaim stuck without its Node", func(ctx context.Context) (bool, string, error) {
		stuck, booting, err := e.unregisteredNodeClaims(ctx)
		if err != nil {
			return false, "", err
		}
		if len(stuck) > 0 {
			return true, fmt.Sprintf("NodeClaims launched %s ago or more with no Node: %s", registrationGrace, strings.Join(stuck, ", ")), nil
		}
		return false, fmt.Sprintf("%d NodeClaims launched and waiting for their Node", len(booting)), nil
	})
	if err != nil {
		return err
	}
	if !opts.Solution {
		fmt.Fprintf(out, "\nKarpenter launched machines, yet the render workers wait. Your task: karplab lab get %s, find the failing boundary, fix nodeclass.yaml, then karplab check %s\n", bootstrapLab, bootstrapLab)
		return nil
	}
	if err := e.ApplySolution(ctx, bootstrapLab, out); err != nil {
		return err
	}
	// Karpenter's own registration timeout (15m) removes the stuck NodeClaims.
	if err := e.skipTime(ctx, out, registrationTimeout); err != nil {
		return err
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, bootstrapReplicas, "Running"); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe render workers run on machines that bootstrapped. Grade it: karplab check %s; read it: karplab evidence\n", bootstrapLab)
	return nil
}

// unregisteredNodeClaims lists the NodeClaims Launched but without a Node: stuck (launched
// longer than registrationGrace ago) and still booting.
func (e *Env) unregisteredNodeClaims(ctx context.Context) (stuck, booting []string, err error) {
	list, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	for _, u := range list.Items {
		var nc karpv1.NodeClaim
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &nc); err != nil {
			return nil, nil, err
		}
		launched := nc.StatusConditions().Get(karpv1.ConditionTypeLaunched)
		if nc.Status.NodeName != "" || launched == nil || !launched.IsTrue() || !nc.DeletionTimestamp.IsZero() {
			continue
		}
		if time.Since(launched.LastTransitionTime.Time) >= registrationGrace {
			stuck = append(stuck, nc.Name+" ("+evidence.InstanceIDFromProviderID(nc.Status.ProviderID)+")")
		} else {
			booting = append(booting, nc.Name)
		}
	}
	return stuck, booting, nil
}
