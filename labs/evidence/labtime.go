package evidence

import (
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2"
)

// Lab time: the account's clock and Karpenter's run ahead of the wall clock by what
// karplab time skip added, while Kubernetes dates what it sets (creationTimestamp, pod and
// node conditions, events) and the recorder dates what it saw on the wall clock. The
// graders reason in lab time, so a snapshot puts every wall-clock time into lab time once,
// when it is taken; the skips it did that with are kept beside it.

// LabSkip is one skip of lab time (fakeec2.LabSkips reads them off the audit trail).
type LabSkip = fakeec2.LabSkip

// wallTimeKeys are the fields in which Kubernetes (the API server, the scheduler, the
// controller manager, the kubelet, event recorders) writes wall-clock times.
var wallTimeKeys = map[string]bool{
	"creationTimestamp": true, "deletionTimestamp": true, "lastTransitionTime": true,
	"lastHeartbeatTime": true, "lastProbeTime": true, "startTime": true, "startedAt": true,
	"finishedAt": true, "firstTimestamp": true, "lastTimestamp": true, "eventTime": true,
	"lastObservedTime": true,
}

// karpenterKinds are Karpenter's own objects: their status is dated by Karpenter's clock,
// which is lab time already, so only their metadata is the API server's.
var karpenterKinds = map[string]bool{"NodeClaim": true, "NodePool": true, "EC2NodeClass": true}

// toLabTime puts the snapshot's wall-clock times into lab time: when it was taken, when
// the recorder saw each change, and every time Kubernetes wrote into the recorded objects.
// Taken snapshots only: a saved one is in lab time already.
func (s *Snapshot) toLabTime() {
	s.WallTakenAt = s.TakenAt
	s.LabSkips = fakeec2.LabSkips(s.Audit)
	if len(s.LabSkips) == 0 {
		return
	}
	shift := func(t time.Time) time.Time { return t.Add(fakeec2.LeadAt(s.LabSkips, t)) }
	s.TakenAt = shift(s.TakenAt)
	for i := range s.History {
		r := &s.History[i]
		r.Time = shift(r.Time)
		if r.Object == nil {
			continue
		}
		if karpenterKinds[r.Kind] {
			if meta, ok := r.Object.Object["metadata"].(map[string]any); ok {
				shiftTimes(meta, shift, false)
			}
			continue
		}
		shiftTimes(r.Object.Object, shift, true)
	}
}

// shiftTimes rewrites the wall-time fields of an unstructured object (deeply, or only at
// its top level), keeping each value's layout.
func shiftTimes(v any, shift func(time.Time) time.Time, deep bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			if s, ok := val.(string); ok && wallTimeKeys[k] {
				t, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					continue
				}
				layout := time.RFC3339
				if strings.Contains(s, ".") {
					layout = "2006-01-02T15:04:05.000000Z07:00" // metav1.MicroTime
				}
				v[k] = shift(t).UTC().Format(layout)
				continue
			}
			if deep {
				shiftTimes(val, shift, true)
			}
		}
	case []any:
		for _, val := range v {
			shiftTimes(val, shift, deep)
		}
	}
}
