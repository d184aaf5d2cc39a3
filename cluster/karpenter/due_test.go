package karpenter

import (
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

var t0 = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

func dur(d time.Duration) karpv1.NillableDuration { return karpv1.NillableDuration{Duration: &d} }

// claim is a NodeClaim of pool "general" created at t0, with conditions set at the given
// offsets from t0 (true unless the name is in unknown).
func claim(name string, conds map[string]time.Duration, unknown ...string) karpv1.NodeClaim {
	nc := karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0),
		Labels: map[string]string{karpv1.NodePoolLabelKey: "general"}}}
	nc.Spec.ExpireAfter = dur(720 * time.Hour)
	for typ, at := range conds {
		st := metav1.ConditionTrue
		for _, u := range unknown {
			if u == typ {
				st = metav1.ConditionUnknown
			}
		}
		nc.Status.Conditions = append(nc.Status.Conditions, status.Condition{Type: typ, Status: st,
			LastTransitionTime: metav1.NewTime(t0.Add(at)), Reason: typ, Message: ""})
	}
	return nc
}

// generalPool is pool "general" with consolidateAfter 5m and policy.
func generalPool(policy karpv1.ConsolidationPolicy) karpv1.NodePool {
	pool := karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general"}}
	pool.Spec.Disruption.ConsolidateAfter = dur(5 * time.Minute)
	pool.Spec.Disruption.ConsolidationPolicy = policy
	return pool
}

func TestDueBetween(t *testing.T) {
	pool := generalPool(karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized)
	ready := map[string]time.Duration{karpv1.ConditionTypeLaunched: 10 * time.Second,
		karpv1.ConditionTypeRegistered: 20 * time.Second, karpv1.ConditionTypeInitialized: 30 * time.Second}
	podEvent := claim("pod-event", ready)
	podEvent.Status.LastPodEventTime = metav1.NewTime(t0.Add(3 * time.Minute))
	consolidatable := claim("already", map[string]time.Duration{karpv1.ConditionTypeInitialized: 30 * time.Second,
		karpv1.ConditionTypeRegistered: 20 * time.Second, karpv1.ConditionTypeConsolidatable: 6 * time.Minute})
	// Consolidatable since 6m, then a pod went at 7m, which Karpenter's disruption controller
	// has not yet seen: the condition is stale, and the window runs from the pod event.
	stale := claim("stale", map[string]time.Duration{karpv1.ConditionTypeInitialized: 30 * time.Second,
		karpv1.ConditionTypeRegistered: 20 * time.Second, karpv1.ConditionTypeConsolidatable: 6 * time.Minute})
	stale.Status.LastPodEventTime = metav1.NewTime(t0.Add(7 * time.Minute))
	deleting := claim("deleting", ready)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Minute)}
	noNode := claim("no-node", map[string]time.Duration{karpv1.ConditionTypeLaunched: 5 * time.Second,
		karpv1.ConditionTypeRegistered: 0}, karpv1.ConditionTypeRegistered)
	noInstance := claim("no-instance", map[string]time.Duration{karpv1.ConditionTypeLaunched: 0}, karpv1.ConditionTypeLaunched)
	claims := []karpv1.NodeClaim{claim("idle", ready), podEvent, consolidatable, stale, deleting, noNode, noInstance}

	names := func(ds []Due) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.NodeClaim+" "+d.Kind+" "+d.At.Sub(t0).String())
		}
		return out
	}
	tests := []struct {
		name     string
		from, to time.Duration // from t0
		want     []string
	}{
		{name: "nothing before consolidateAfter", from: time.Minute, to: 4 * time.Minute, want: nil},
		{name: "idle claim's window ends", from: 4 * time.Minute, to: 6 * time.Minute,
			want: []string{"no-instance launch-timeout 5m0s", "idle consolidatable 5m30s"}},
		{name: "the window counts from the last pod event", from: 6 * time.Minute, to: 8 * time.Minute,
			want: []string{"pod-event consolidatable 8m0s"}},
		{name: "a stale condition: the window counts from the pod event after it", from: 9 * time.Minute, to: 13 * time.Minute,
			want: []string{"stale consolidatable 12m0s"}},
		{name: "registration timeout at 15m", from: 14 * time.Minute, to: 16 * time.Minute,
			want: []string{"no-node registration-timeout 15m0s"}},
		{name: "a month expires every live claim", from: 16 * time.Minute, to: 721 * time.Hour,
			want: []string{"already expiry 720h0m0s", "idle expiry 720h0m0s", "no-instance expiry 720h0m0s",
				"no-node expiry 720h0m0s", "pod-event expiry 720h0m0s", "stale expiry 720h0m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(DueBetween(claims, []karpv1.NodePool{pool}, t0.Add(tt.from), t0.Add(tt.to)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("due in (%s, %s] (-want +got):\n%s", tt.from, tt.to, diff)
			}
		})
	}
}

// TestConsolidatableBefore: a claim consolidatable since its last pod event is listed
// with the time it became so; one whose condition is stale (a pod event after it), one
// never consolidatable and one being deleted are not.
func TestConsolidatableBefore(t *testing.T) {
	pool := generalPool(karpv1.ConsolidationPolicyWhenEmpty)
	conds := map[string]time.Duration{karpv1.ConditionTypeInitialized: 30 * time.Second,
		karpv1.ConditionTypeRegistered: 20 * time.Second, karpv1.ConditionTypeConsolidatable: 6 * time.Minute}
	already := claim("already", conds)
	already.Status.LastPodEventTime = metav1.NewTime(t0.Add(time.Minute))
	stale := claim("stale", conds)
	stale.Status.LastPodEventTime = metav1.NewTime(t0.Add(7 * time.Minute))
	deleting := claim("deleting", conds)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0.Add(8 * time.Minute)}
	idle := claim("idle", map[string]time.Duration{karpv1.ConditionTypeInitialized: 30 * time.Second})
	got := ConsolidatableBefore([]karpv1.NodeClaim{already, stale, deleting, idle}, []karpv1.NodePool{pool})
	want := []Due{{Kind: DueConsolidatable, NodeClaim: "already", NodePool: "general", At: t0.Add(6 * time.Minute),
		What: "consolidatable since before the skip: a WhenEmpty candidate"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("consolidatable before the skip (-want +got):\n%s", diff)
	}
}

func TestDueBetweenWithoutConsolidateAfter(t *testing.T) {
	pool := karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general"}} // consolidateAfter: Never
	nc := claim("idle", map[string]time.Duration{karpv1.ConditionTypeInitialized: 0, karpv1.ConditionTypeRegistered: 0})
	if got := DueBetween([]karpv1.NodeClaim{nc}, []karpv1.NodePool{pool}, t0, t0.Add(time.Hour)); len(got) != 0 {
		t.Errorf("consolidateAfter Never brought due: %+v", got)
	}
}

func TestLabClockRunsAheadByItsOffset(t *testing.T) {
	c := &labClock{}
	c.offset.Store(int64(720 * time.Hour))
	if lead := c.Now().Sub(time.Now()); lead < 720*time.Hour-time.Second || lead > 720*time.Hour+time.Second {
		t.Errorf("lab clock leads the wall clock by %s, want 720h", lead)
	}
	if since := c.Since(time.Now()); since < 720*time.Hour-time.Second {
		t.Errorf("Since(wall now) = %s, want about 720h", since)
	}
	start := time.Now()
	<-c.After(50 * time.Millisecond) // durations are the wall clock's
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("After(50ms) took %s", el)
	}
}
