package labs

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/recorder"
)

// versions is one object's recorded life: every state seen, first to last.
type versions[T any] struct {
	UID     string
	States  []T
	Seen    []time.Time // when each state was recorded
	Deleted *time.Time  // when the deletion was seen
}

func (v *versions[T]) last() T { return v.States[len(v.States)-1] }

// history is the recorder's history decoded into typed objects, indexed by UID.
type history struct {
	pods       map[string]*versions[corev1.Pod]
	nodes      map[string]*versions[corev1.Node]
	nodeClaims map[string]*versions[karpv1.NodeClaim]
	nodePools  map[string]*versions[karpv1.NodePool]
	nodeClass  map[string]*versions[*unstructured.Unstructured]
	// events by the UID of the object they are about, oldest first.
	events map[string][]corev1.Event
}

func decodeHistory(recs []recorder.Record) *history {
	h := &history{
		pods:       map[string]*versions[corev1.Pod]{},
		nodes:      map[string]*versions[corev1.Node]{},
		nodeClaims: map[string]*versions[karpv1.NodeClaim]{},
		nodePools:  map[string]*versions[karpv1.NodePool]{},
		nodeClass:  map[string]*versions[*unstructured.Unstructured]{},
		events:     map[string][]corev1.Event{},
	}
	seenEvent := map[string]corev1.Event{}
	for _, r := range recs {
		switch r.Kind {
		case "Pod":
			add(h.pods, r)
		case "Node":
			add(h.nodes, r)
		case "NodeClaim":
			add(h.nodeClaims, r)
		case "NodePool":
			add(h.nodePools, r)
		case "EC2NodeClass":
			v := h.nodeClass[string(r.Object.GetUID())]
			if v == nil {
				v = &versions[*unstructured.Unstructured]{UID: string(r.Object.GetUID())}
				h.nodeClass[v.UID] = v
			}
			if r.Type == recorder.Deleted {
				t := r.Time
				v.Deleted = &t
			}
			v.States = append(v.States, r.Object)
			v.Seen = append(v.Seen, r.Time)
		case "Event":
			var ev corev1.Event
			if runtime.DefaultUnstructuredConverter.FromUnstructured(r.Object.Object, &ev) == nil && r.Type != recorder.Deleted {
				seenEvent[string(ev.UID)] = ev // the latest count/lastTimestamp wins
			}
		}
	}
	for _, ev := range seenEvent {
		uid := string(ev.InvolvedObject.UID)
		h.events[uid] = append(h.events[uid], ev)
	}
	for uid := range h.events {
		evs := h.events[uid]
		sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	}
	return h
}

func add[T any](m map[string]*versions[T], r recorder.Record) {
	var obj T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Object.Object, &obj); err != nil {
		return
	}
	uid := string(r.Object.GetUID())
	v := m[uid]
	if v == nil {
		v = &versions[T]{UID: uid}
		m[uid] = v
	}
	if r.Type == recorder.Deleted {
		t := r.Time
		v.Deleted = &t
	}
	v.States = append(v.States, obj)
	v.Seen = append(v.Seen, r.Time)
}

// eventTime is when an event last happened.
func eventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}

// firstEventTime is when an event first happened.
func firstEventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// sortedKeys returns the keys of m in an order stable across runs (by the order function).
func sortedVersions[T any](m map[string]*versions[T], less func(a, b T) bool) []*versions[T] {
	out := make([]*versions[T], 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].States[0], out[j].States[0]
		if less(a, b) {
			return true
		}
		if less(b, a) {
			return false
		}
		return out[i].UID < out[j].UID
	})
	return out
}
