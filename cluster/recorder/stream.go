package recorder

import (
	"encoding/json"
	"maps"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// stream is a reflector's store that writes every change to the history as it arrives and
// keeps no object, only each live object's last recorded JSON: a relist that misses one can
// still record it deleted as it last was. An informer's cache held every object twice over
// (decoded, and as unstructured JSON maps): 150 MB for a replayed cluster of 5,000 pods.
// Its reflector calls it from one goroutine.
type stream struct {
	r    *Recorder
	kind string

	last map[string][]byte // namespace/name -> the object's last recorded JSON
	// synced is set by the first Replace: the initial list is recorded.
	synced atomic.Bool
}

func newStream(r *Recorder, kind string) *stream {
	return &stream{r: r, kind: kind, last: map[string][]byte{}}
}

func (s *stream) Add(obj any) error    { return s.change(Added, obj) }
func (s *stream) Update(obj any) error { return s.change(Modified, obj) }
func (s *stream) Delete(obj any) error { return s.change(Deleted, obj) }
func (s *stream) Resync() error        { return nil }

// Replace records a (re)list: each object added or modified, and each one it no longer
// holds deleted, as last recorded.
func (s *stream) Replace(list []any, _ string) error {
	listed := make(map[string]bool, len(list))
	for _, obj := range list {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			continue
		}
		listed[key] = true
		typ := Added
		if _, ok := s.last[key]; ok {
			typ = Modified
		}
		if err := s.change(typ, obj); err != nil {
			return err
		}
	}
	for key, raw := range s.last {
		if !listed[key] {
			s.r.write(s.kind, Deleted, raw)
			delete(s.last, key)
		}
	}
	s.synced.Store(true)
	return nil
}

func (s *stream) change(typ string, obj any) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	key, err := cache.MetaNamespaceKeyFunc(u)
	if err != nil {
		return nil
	}
	raw, err := json.Marshal(withoutManagedFields(u).Object)
	if err != nil {
		s.r.opts.Logger.Warn("recording", "kind", s.kind, "err", err)
		return nil
	}
	s.r.write(s.kind, typ, raw)
	if typ == Deleted {
		delete(s.last, key)
	} else {
		s.last[key] = raw
	}
	return nil
}

// withoutManagedFields is u without metadata.managedFields, sharing the rest: the reflector
// still reads u after the store has it.
func withoutManagedFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	meta, ok := u.Object["metadata"].(map[string]any)
	if !ok || meta["managedFields"] == nil {
		return u
	}
	out := maps.Clone(u.Object)
	m := maps.Clone(meta)
	delete(m, "managedFields")
	out["metadata"] = m
	return &unstructured.Unstructured{Object: out}
}
