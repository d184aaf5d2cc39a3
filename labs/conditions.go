package labs

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// One reader of NodePool and EC2NodeClass conditions, for the live cluster (staging's
// progress) and for the recorded history (the graders): both say why Karpenter ignores a
// NodePool in the words kubectl describe shows.

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
