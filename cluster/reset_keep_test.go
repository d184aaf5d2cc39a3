package cluster

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestResetKeepsTheClustersOwn: in namespace default, a reset deletes the learner's
// workloads and keeps the cluster's: those in the baseline, and what they own since (a
// Deployment's new ReplicaSet and its pods).
func TestResetKeepsTheClustersOwn(t *testing.T) {
	objs := []namespacedObject{
		{name: "theirs", uid: "d1"},
		{name: "learners", uid: "d2"},
		{name: "theirs-rs-new", uid: "r1", owners: []types.UID{"d1"}},
		{name: "learners-rs", uid: "r2", owners: []types.UID{"d2"}},
		{name: "theirs-pod", uid: "p1", owners: []types.UID{"r1"}},
		{name: "learners-pod", uid: "p2", owners: []types.UID{"r2"}},
		{name: "bare-pod", uid: "p3"},
	}
	var names []string
	for _, o := range (&resetter{keep: &baseline{Default: []types.UID{"d1"}}}).labsOwn(objs) {
		names = append(names, o.name)
	}
	if want := []string{"learners", "learners-rs", "learners-pod", "bare-pod"}; !slices.Equal(names, want) {
		t.Errorf("reset deletes %v, want %v", names, want)
	}
	all := (&resetter{}).labsOwn(objs)
	if len(all) != len(objs) {
		t.Errorf("without a baseline (the lab's own cluster) reset deletes %d of %d", len(all), len(objs))
	}
}
