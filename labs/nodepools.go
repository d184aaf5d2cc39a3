package labs

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// The NodePool readers the labs share. One reader of NodePool and EC2NodeClass conditions,
// for the live cluster (staging's progress) and for the recorded history (the graders): both
// say why Karpenter ignores a NodePool in the words kubectl describe shows. The NodePools
// the history holds now, and what one refuses a pod for.

// poolNotReady says why Karpenter ignores the NodePool np: its Ready condition and, when
// its EC2NodeClass (class; nil when unknown) is the cause, the class's first False
// condition other than Ready (the provider's DryRun validation names the refused call).
// It is "" while np is Ready.
func poolNotReady(np karpv1.NodePool, class *unstructured.Unstructured) string {
	ready := np.StatusConditions().Get("Ready")
	if ready != nil && ready.Status == metav1.ConditionTrue {
		return ""
	}
	why := fmt.Sprintf("NodePool %s is not Ready (no Ready condition yet)", np.Name)
	if ready != nil {
		why = fmt.Sprintf("NodePool %s is not Ready (%s)", np.Name, ready.Message)
	}
	if class == nil {
		return why
	}
	conds, _, _ := unstructured.NestedSlice(class.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["status"] == "False" && m["type"] != "Ready" {
			return why + fmt.Sprintf("; EC2NodeClass %s %s=False, %s: %s", class.GetName(), m["type"], m["reason"], m["message"])
		}
	}
	return why
}

// poolClassName is the name of the EC2NodeClass a NodePool's nodes use ("" when none).
func poolClassName(np karpv1.NodePool) string {
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		return ref.Name
	}
	return ""
}

// typedNodePool converts a NodePool read through the dynamic client.
func typedNodePool(u unstructured.Unstructured) (karpv1.NodePool, error) {
	var np karpv1.NodePool
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &np)
	return np, err
}

// condition returns an object's status condition's status and message.
func condition(u unstructured.Unstructured, typ string) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["message"])
		}
	}
	return "", ""
}

func (g *Grading) liveNodePools() []karpv1.NodePool {
	var out []karpv1.NodePool
	for _, v := range g.hist.NodePools {
		if v.Deleted == nil {
			out = append(out, v.Last())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// nodePoolRefuses says why np can never take pod, or "" when it could.
func nodePoolRefuses(np karpv1.NodePool, pod *corev1.Pod) string {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	reqs.Add(scheduling.NewLabelRequirements(np.Spec.Template.Labels).Values()...)
	if err := reqs.Compatible(scheduling.NewPodRequirements(pod), scheduling.AllowUndefinedWellKnownLabels); err != nil {
		return err.Error()
	}
	for _, c := range pod.Spec.Containers {
		for name, q := range c.Resources.Requests {
			if limit, ok := np.Spec.Limits[name]; ok && q.Cmp(limit) > 0 {
				return fmt.Sprintf("its %s request %s exceeds limits.%s %s", name, q.String(), name, limit.String())
			}
		}
	}
	return ""
}

// withinCourseLimits fails a nodepool-bounded check whose pool sets spec.limits more than
// twice the course's (cpu 200, memory 800Gi): a limit ten times the course's bounds nothing
// the lab's pods could buy, and teaches nothing.
func (g *Grading) withinCourseLimits(c Check, pool string) Check {
	np, ok := g.nodePool(pool)
	if !ok {
		return c
	}
	var over []string
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := np.Spec.Limits[res]
		want := courseLimits[res]
		if ratio := q.AsApproximateFloat64() / want.AsApproximateFloat64(); ok && ratio > 2 {
			over = append(over, fmt.Sprintf("limits.%s %s is %.0f times the course's %s: it bounds nothing these pods could buy", res, q.String(), ratio, want.String()))
		}
	}
	if len(over) == 0 {
		return c
	}
	if c.Passed {
		c.Reason = fmt.Sprintf("NodePool %s sets its limits far above the course's", pool)
		c.Hint = "Set the course's spec.limits (cpu \"200\", memory 800Gi) and apply the NodePool again."
	}
	c.Passed, c.Problems = false, append(c.Problems, over...)
	return c
}

// withRoomInLimits adds to a failed workload-running check the line that names a pool whose
// spec.limits cannot hold the Deployment's replicas at all (a limit far too narrow), which
// Karpenter's Pending message may not say for minutes (it explains a pod once per 5m).
func (g *Grading) withRoomInLimits(c Check, pool, deploy string, replicas int) Check {
	np, ok := g.nodePool(pool)
	if c.Passed || !ok || len(np.Spec.Limits) == 0 {
		return c
	}
	var pod *corev1.Pod
	for _, v := range g.hist.Pods {
		if p := v.Last(); v.Deleted == nil && p.Namespace == zibaNamespace && len(p.OwnerReferences) > 0 &&
			p.OwnerReferences[0].Kind == "ReplicaSet" && strings.HasPrefix(p.OwnerReferences[0].Name, deploy+"-") {
			pod = &p
			break
		}
	}
	if pod == nil {
		return c
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		limit, ok := np.Spec.Limits[name]
		if !ok {
			continue
		}
		need := resource.Quantity{}
		for _, ctr := range pod.Spec.Containers {
			if q, ok := ctr.Resources.Requests[name]; ok {
				need.Add(q)
			}
		}
		need.Mul(int64(replicas))
		if need.Cmp(limit) > 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("NodePool %s's limits.%s %s cannot hold the %d replicas, which request %s in all: Karpenter buys nothing past it", pool, name, limit.String(), replicas, need.String()))
			c.Hint = "Set the course's spec.limits (cpu \"200\", memory 800Gi) and apply the NodePool again; " + c.Hint
			return c
		}
	}
	return c
}
