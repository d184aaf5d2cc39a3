package labs

import (
	"testing"

	"github.com/awslabs/operatorpkg/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The one condition reader quotes the NodePool's Ready message and its class's failing
// condition, and says nothing of a Ready pool.
func TestPoolNotReady(t *testing.T) {
	np := karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "ziba-general"}}
	np.StatusConditions().SetFalse(karpv1.ConditionTypeNodeClassReady, "NodeClassNotReady", "NodeClass not ready")
	msg := np.StatusConditions().Get(status.ConditionReady).Message
	class := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "ziba-general"},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "ValidationSucceededFalse", "message": "x"},
			map[string]any{"type": "ValidationSucceeded", "status": "False", "reason": "CreateFleetAuthCheckFailed", "message": "not authorized to ec2:CreateFleet"},
		}},
	}}
	want := "NodePool ziba-general is not Ready (" + msg + "); EC2NodeClass ziba-general ValidationSucceeded=False, CreateFleetAuthCheckFailed: not authorized to ec2:CreateFleet"
	if got := poolNotReady(np, class); got != want {
		t.Errorf("poolNotReady:\n got %s\nwant %s", got, want)
	}
	if got := poolNotReady(np, nil); got != "NodePool ziba-general is not Ready ("+msg+")" {
		t.Errorf("without its class: %s", got)
	}
	for _, c := range np.Status.Conditions {
		np.StatusConditions().SetTrue(c.Type)
	}
	if got := poolNotReady(np, class); got != "" {
		t.Errorf("a Ready pool: %q, want nothing", got)
	}
}
