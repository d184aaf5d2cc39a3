package evidence

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karplab/karplab/cluster/recorder"
)

// TestReplayedObjectsKeepProductionsTimes: objects karplab replay loaded are dated by their
// creation in production, not by the load (the API server's creationTimestamp); the record
// says when the load was, and dates production's times before it and the lab's after.
func TestReplayedObjectsKeepProductionsTimes(t *testing.T) {
	captured := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	prodCreated := captured.Add(-72 * time.Hour)
	loaded := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	replayed := map[string]any{
		recorder.ReplayedAnnotation:        captured.Format(time.RFC3339),
		recorder.CapturedCreatedAnnotation: prodCreated.Format(time.RFC3339),
	}
	obj := func(kind, apiVersion, name string, ann map[string]any, created time.Time, extra map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": name, "uid": name + "-uid", "resourceVersion": "1", "creationTimestamp": created.Format(time.RFC3339)}
		if kind == "Pod" {
			meta["namespace"] = "ziba"
		}
		if ann != nil {
			meta["annotations"] = ann
		}
		o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
		for k, v := range extra {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	launched := []any{map[string]any{"type": "Launched", "status": "True", "lastTransitionTime": prodCreated.Add(20 * time.Second).Format(time.RFC3339), "reason": "Launched", "message": ""}}
	s := &Snapshot{
		TakenAt: loaded.Add(10 * time.Minute),
		History: []recorder.Record{
			{Time: loaded, Kind: "NodeClaim", Type: recorder.Added, Object: obj("NodeClaim", "karpenter.sh/v1", "general-abcde", replayed, loaded, map[string]any{
				"status": map[string]any{"providerID": "aws:///us-east-1a/i-0123456789abcdef0", "conditions": launched}})},
			{Time: loaded.Add(time.Second), Kind: "Pod", Type: recorder.Added, Object: obj("Pod", "v1", "render-old", replayed, loaded.Add(time.Second), nil)},
			{Time: loaded.Add(5 * time.Minute), Kind: "Pod", Type: recorder.Added, Object: obj("Pod", "v1", "render-new", nil, loaded.Add(5*time.Minute), nil)},
		},
	}
	ev := Correlate(s)
	if ev.Replay == nil || !ev.Replay.CapturedAt.Equal(captured) || !ev.Replay.LoadedAt.Equal(loaded) {
		t.Fatalf("replay %+v, want captured %s, loaded %s", ev.Replay, captured, loaded)
	}
	if len(ev.NodeClaims) != 1 || !ev.NodeClaims[0].Created.Equal(prodCreated) {
		t.Fatalf("NodeClaim rows %+v: want one created %s, in production", ev.NodeClaims, prodCreated)
	}
	created := map[string]time.Time{}
	for _, p := range ev.Pods {
		created[p.Name] = p.Created
	}
	if !created["render-old"].Equal(prodCreated) || !created["render-new"].Equal(loaded.Add(5*time.Minute)) {
		t.Errorf("pods created %v: want render-old at %s (production), render-new at %s (the lab)", created, prodCreated, loaded.Add(5*time.Minute))
	}
	var b bytes.Buffer
	if err := ev.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	// The NodeClaim was created 236h before the load and launched 20s later.
	for _, want := range []string{"when karplab replay loaded a capture of", "earlier times (-) are production's", "-236h0m0s", "-235h59m40s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the record lacks %q:\n%s", want, b.String())
		}
	}
	var page bytes.Buffer
	if err := ev.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "loaded a capture of") {
		t.Errorf("the page does not say the times before the load are production's")
	}
}
