package existingtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Snapshot is every API object of the cluster, by "resource.group namespace/name", as JSON
// without what the cluster's own machinery rewrites on its own: status, resource versions,
// managed fields, a Lease's renewals. Events are kept apart (Diff judges them by subject).
type Snapshot struct {
	Objects map[string]string
	Events  []Event
	// UIDs and NodeNames are the subjects the cluster's own events may be about.
	UIDs      map[string]bool
	NodeNames map[string]bool
}

// Event is one Event's key and subject.
type Event struct {
	Key, SubjectUID, SubjectKind, SubjectName string
}

// Snapshot reads every listable resource of the cluster.
func (c *Cluster) Snapshot(ctx context.Context) (*Snapshot, error) {
	return TakeSnapshot(ctx, c.cp.RESTConfig())
}

// TakeSnapshot reads every listable resource of the cluster cfg reaches.
func TakeSnapshot(ctx context.Context, cfg *rest.Config) (*Snapshot, error) {
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := disco.ServerPreferredResources()
	if err != nil {
		return nil, fmt.Errorf("discovering resources: %w", err)
	}
	s := &Snapshot{Objects: map[string]string{}, UIDs: map[string]bool{}, NodeNames: map[string]bool{}}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			items, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", gvr, err)
			}
			for _, it := range items.Items {
				s.add(gvr, it)
			}
		}
	}
	return s, nil
}

func (s *Snapshot) add(gvr schema.GroupVersionResource, it unstructured.Unstructured) {
	key := gvr.Resource
	if gvr.Group != "" {
		key += "." + gvr.Group
	}
	key += " " + it.GetNamespace() + "/" + it.GetName()
	s.UIDs[string(it.GetUID())] = true
	if gvr.Group == "" && gvr.Resource == "nodes" {
		s.NodeNames[it.GetName()] = true
	}
	if gvr.Resource == "events" {
		if gvr.Group == "" { // events.k8s.io serves the same Events again
			kind, _, _ := unstructured.NestedString(it.Object, "involvedObject", "kind")
			name, _, _ := unstructured.NestedString(it.Object, "involvedObject", "name")
			uid, _, _ := unstructured.NestedString(it.Object, "involvedObject", "uid")
			s.Events = append(s.Events, Event{Key: key, SubjectUID: uid, SubjectKind: kind, SubjectName: name})
		}
		return
	}
	obj := it.DeepCopy().Object
	unstructured.RemoveNestedField(obj, "status")
	for _, f := range []string{"resourceVersion", "managedFields", "generation"} {
		unstructured.RemoveNestedField(obj, "metadata", f)
	}
	if gvr.Resource == "leases" {
		unstructured.RemoveNestedField(obj, "spec")
	}
	b, _ := json.Marshal(obj)
	s.Objects[key] = string(b)
}

// Diff lists what differs between before and after: objects added, removed or changed, and
// events about anything the cluster did not hold before.
func Diff(before, after *Snapshot) []string {
	var out []string
	for k, v := range after.Objects {
		switch old, ok := before.Objects[k]; {
		case !ok:
			out = append(out, "added: "+k)
		case old != v:
			out = append(out, fmt.Sprintf("changed: %s\n    before %s\n    after  %s", k, old, v))
		}
	}
	for k := range before.Objects {
		if _, ok := after.Objects[k]; !ok {
			out = append(out, "removed: "+k)
		}
	}
	for _, e := range after.Events {
		if !before.UIDs[e.SubjectUID] && !(e.SubjectKind == "Node" && before.NodeNames[e.SubjectName]) {
			out = append(out, fmt.Sprintf("added: %s (about %s %s, which the cluster did not hold)", e.Key, e.SubjectKind, e.SubjectName))
		}
	}
	slices.Sort(out)
	return out
}
