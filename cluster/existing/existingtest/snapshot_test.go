package existingtest

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	before := &Snapshot{
		Objects:   map[string]string{"namespaces /team-a": `{"a":1}`, "nodes /team-a-node-1": `{"n":1}`, "deployments.apps default/hello": `{"d":1}`},
		Events:    []Event{{Key: "events team-a/e1", SubjectUID: "u-dep", SubjectKind: "Deployment"}},
		UIDs:      map[string]bool{"u-dep": true},
		NodeNames: map[string]bool{"team-a-node-1": true},
	}
	same := &Snapshot{Objects: map[string]string{"namespaces /team-a": `{"a":1}`, "nodes /team-a-node-1": `{"n":1}`, "deployments.apps default/hello": `{"d":1}`},
		Events: []Event{
			{Key: "events team-a/e2", SubjectUID: "u-dep", SubjectKind: "Deployment"},                                  // about the cluster's own object
			{Key: "events default/e3", SubjectUID: "team-a-node-1", SubjectKind: "Node", SubjectName: "team-a-node-1"}, // a kubelet names nodes by name
		}}
	if d := Diff(before, same); len(d) != 0 {
		t.Errorf("Diff of an untouched cluster = %v, want none", d)
	}
	touched := &Snapshot{Objects: map[string]string{"namespaces /team-a": `{"a":1}`, "nodes /team-a-node-1": `{"n":2}`, "customresourcedefinitions.apiextensions.k8s.io /nodepools.karpenter.sh": `{}`},
		Events: []Event{{Key: "events default/e4", SubjectUID: "u-lab-node", SubjectKind: "Node", SubjectName: "ip-10-0-0-1"}}}
	d := strings.Join(Diff(before, touched), "\n")
	for _, want := range []string{
		"added: customresourcedefinitions.apiextensions.k8s.io /nodepools.karpenter.sh",
		"changed: nodes /team-a-node-1",
		"removed: deployments.apps default/hello",
		"added: events default/e4 (about Node ip-10-0-0-1",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("Diff lacks %q:\n%s", want, d)
		}
	}
}
