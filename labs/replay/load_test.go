package replay

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// What a load creates of a bundle, before any API server: the EC2 node and its pods, the
// pending pod without status, the NodeClaim marked tagged with its hash versions to migrate,
// a CronJob suspended, the ServiceAccounts the pods name; and what it leaves out, saying why:
// the kind node, its pods and the workload that ran only there, Karpenter's own Deployment.
func TestLoadPlan(t *testing.T) {
	b := objects(t,
		`{apiVersion: v1, kind: Node, metadata: {name: ip-10-0-1-5.ec2.internal, uid: n1}, spec: {providerID: "aws:///us-east-1a/i-0123456789abcdef0"}}`,
		`{apiVersion: v1, kind: Node, metadata: {name: kind-control-plane, uid: n2}, spec: {providerID: "kind://podman/karplab/kind-control-plane"}}`,
		`{apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: {name: default-x, uid: c1, annotations: {karpenter.sh/nodepool-hash-version: v3}}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop, uid: d1}}`,
		`{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web-1, namespace: shop, uid: r1, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d1}]}}`,
		`{apiVersion: v1, kind: Pod, metadata: {name: web-1-a, namespace: shop, uid: p1, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, uid: r1}]}, spec: {nodeName: ip-10-0-1-5.ec2.internal, serviceAccountName: web}, status: {phase: Running}}`,
		`{apiVersion: v1, kind: Pod, metadata: {name: web-1-b, namespace: shop, uid: p2}, spec: {}, status: {phase: Pending, conditions: [{type: PodScheduled, status: "False"}]}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: local, namespace: shop, uid: d2}}`,
		`{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: local-1, namespace: shop, uid: r2, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: local, uid: d2}]}}`,
		`{apiVersion: v1, kind: Pod, metadata: {name: local-1-a, namespace: shop, uid: p3, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: local-1, uid: r2}]}, spec: {nodeName: kind-control-plane}, status: {phase: Running}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: karpenter, namespace: kube-system, uid: k1, labels: {app.kubernetes.io/name: karpenter}}}`,
		`{apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly, namespace: shop, uid: j1}, spec: {schedule: "0 0 * * *"}}`,
	)
	l := &loader{b: b, out: &Loaded{Created: map[string]int{}, UIDs: map[types.UID]types.UID{}}, left: map[string]int{}, captured: map[*unstructured.Unstructured]types.UID{}}
	plan := l.plan()
	names := map[string][]string{}
	for kind, objs := range plan {
		for _, o := range objs {
			names[kind] = append(names[kind], o.GetName())
			if o.GetUID() != "" || o.GetCreationTimestamp().Unix() > 0 {
				t.Errorf("%s %s keeps its UID or creation time", kind, o.GetName())
			}
		}
	}
	for kind, want := range map[string]int{"Node": 1, "Deployment": 1, "ReplicaSet": 1, "Pod": 2, "NodeClaim": 1, "CronJob": 1, "ServiceAccount": 2} {
		if len(names[kind]) != want {
			t.Errorf("the plan's %s: %v, want %d", kind, names[kind], want)
		}
	}
	for _, o := range plan["Pod"] {
		if _, has := o.Object["status"]; o.GetName() == "web-1-b" && has {
			t.Errorf("the pending pod keeps its status: the lab's scheduler must decide anew")
		}
	}
	claim := plan["NodeClaim"][0].GetAnnotations()
	if claim[nodePoolHashVersion] != replayHashVersion || claim["karpenter.k8s.aws/tagged"] != "true" {
		t.Errorf("the NodeClaim's annotations: %v", claim)
	}
	if s, _, _ := unstructured.NestedBool(plan["CronJob"][0].Object, "spec", "suspend"); !s {
		t.Errorf("the CronJob is not suspended")
	}
	left := strings.Join(func() []string {
		var out []string
		for why, n := range l.left {
			out = append(out, why+" "+string(rune('0'+n)))
		}
		return out
	}(), "\n")
	for _, want := range []string{"Nodes that are not EC2 instances", "pods that ran on a node the lab does not run", "Deployments whose pods all ran on nodes", "ReplicaSets whose pods", "Karpenter's own workload"} {
		if !strings.Contains(left, want) {
			t.Errorf("left out:\n%s\nlacks %q", left, want)
		}
	}
}
