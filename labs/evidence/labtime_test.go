package evidence

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestSnapshotToLabTime: two skips (5m at 10:00 wall, then 1h at 10:10 wall) put what
// Kubernetes and the recorder dated on the wall clock into lab time, each by the lead in
// force when it was dated; Karpenter's conditions, dated on its lab clock, stay as they are.
func TestSnapshotToLabTime(t *testing.T) {
	wall := func(hm string) time.Time { t, _ := time.Parse("15:04:05", hm); return t.AddDate(2026, 11, 3) }
	skip := func(from, to time.Time) trail.AuditEvent {
		return trail.AuditEvent{Service: "karplab", Action: "SkipTime", Time: from,
			Parameters: map[string]string{"from": from.Format(time.RFC3339Nano), "to": to.Format(time.RFC3339Nano)}}
	}
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	pod := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "w", "creationTimestamp": stamp(wall("09:59:00")), "deletionTimestamp": stamp(wall("10:20:00"))},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "PodScheduled", "lastTransitionTime": stamp(wall("10:05:00"))}},
			"containerStatuses": []any{map[string]any{"state": map[string]any{"running": map[string]any{"startedAt": stamp(wall("10:11:00"))}}}}},
	}}
	claim := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "c", "creationTimestamp": stamp(wall("10:06:00"))},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Launched", "lastTransitionTime": stamp(wall("10:11:07"))}}},
	}}
	event := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "e"},
		"eventTime": wall("10:30:00").UTC().Format("2006-01-02T15:04:05.000000Z07:00"), "lastTimestamp": stamp(wall("09:00:00"))}}
	s := &Snapshot{
		TakenAt: wall("10:30:00"),
		Audit: []trail.AuditEvent{{Service: "ec2", Action: "RunInstances"},
			skip(wall("10:00:00"), wall("10:05:00")), skip(wall("10:15:00"), wall("11:15:00"))},
		History: []recorder.Record{{Time: wall("10:01:00"), Kind: "Pod", Object: pod}, {Time: wall("10:12:00"), Kind: "NodeClaim", Object: claim},
			{Time: wall("10:30:00"), Kind: "Event", Object: event}},
	}
	s.toLabTime()

	if want := []LabSkip{{Wall: wall("10:00:00"), From: wall("10:00:00"), To: wall("10:05:00")},
		{Wall: wall("10:10:00"), From: wall("10:15:00"), To: wall("11:15:00")}}; !cmp.Equal(want, s.LabSkips) {
		t.Errorf("skips (-want +got):\n%s", cmp.Diff(want, s.LabSkips))
	}
	if !s.TakenAt.Equal(wall("11:35:00")) || !s.WallTakenAt.Equal(wall("10:30:00")) {
		t.Errorf("taken at %s (wall %s), want 11:35 lab, 10:30 wall", s.TakenAt, s.WallTakenAt)
	}
	got := map[string]string{
		"pod seen":         s.History[0].Time.Format(time.TimeOnly),
		"pod created":      pod.GetCreationTimestamp().UTC().Format(time.TimeOnly),
		"pod deleted":      pod.GetDeletionTimestamp().UTC().Format(time.TimeOnly),
		"pod scheduled":    nested(t, pod, "status", "conditions", 0, "lastTransitionTime"),
		"pod started":      nested(t, pod, "status", "containerStatuses", 0, "state", "running", "startedAt"),
		"claim seen":       s.History[1].Time.Format(time.TimeOnly),
		"claim created":    claim.GetCreationTimestamp().UTC().Format(time.TimeOnly),
		"claim launched":   nested(t, claim, "status", "conditions", 0, "lastTransitionTime"),
		"event time":       nested(t, event, "eventTime"),
		"event last stamp": nested(t, event, "lastTimestamp"),
	}
	want := map[string]string{
		"pod seen": "10:06:00", "pod created": "09:59:00", "pod deleted": "11:25:00", "pod scheduled": "10:10:00",
		"pod started": "11:16:00", "claim seen": "11:17:00", "claim created": "10:11:00",
		"claim launched": "10:11:07", // Karpenter's own clock: lab time already
		"event time":     "11:35:00.000000", "event last stamp": "09:00:00",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("times after the conversion (-want +got):\n%s", diff)
	}
}

func nested(t *testing.T, u *unstructured.Unstructured, path ...any) string {
	t.Helper()
	var v any = u.Object
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	ts, err := time.Parse(time.RFC3339Nano, v.(string))
	if err != nil {
		t.Fatalf("%v: %v", path, err)
	}
	if len(v.(string)) > len(time.RFC3339) {
		return ts.UTC().Format("15:04:05.000000")
	}
	return ts.UTC().Format(time.TimeOnly)
}
