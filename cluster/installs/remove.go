package installs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/karplab/karplab/cluster/deletion"
)

// Removal is what Remove did.
type Removal struct {
	Deleted []Entry // objects that existed with the recorded UID and were deleted
	Gone    int     // entries whose object was already gone or is now someone else's
}

// Remove deletes every recorded object that still exists with its recorded UID (an object of
// the same name made since by someone else is left alone): first the rest, then namespaces,
// then CRDs, so nothing waits on a definition or namespace being removed under it. No lab
// controller runs any more, so finalizers are removed first. It reads each resource with
// one list (a record holds thousands of Events, most long gone) and waits until every
// deleted object is gone (up to timeout).
func Remove(ctx context.Context, dyn dynamic.Interface, entries []Entry, status io.Writer, timeout time.Duration) (Removal, error) {
	live, err := existing(ctx, dyn, entries)
	if err != nil {
		return Removal{}, err
	}
	var out Removal
	var stages [3][]*unstructured.Unstructured
	var stageEntries [3][]Entry
	for _, e := range entries {
		obj := live[e.key()]
		if obj == nil {
			out.Gone++
			continue
		}
		r := rank(e)
		stages[r] = append(stages[r], obj)
		stageEntries[r] = append(stageEntries[r], e)
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	for r := range stages {
		// Every object is tried and every failure reported, so the call itself never fails.
		deletion.Each(ctx, len(stages[r]), func(ctx context.Context, i int) error {
			err := removeOne(ctx, dyn, stageEntries[r][i], stages[r][i])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			out.Deleted = append(out.Deleted, stageEntries[r][i])
			return nil
		})
	}
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	fmt.Fprintf(status, " - deleted %d objects the lab created (%d were already gone)\n", len(out.Deleted), out.Gone)
	return out, waitGone(ctx, dyn, out.Deleted, timeout)
}

// rank orders removal: namespaces after what is in them, CRDs last.
func rank(e Entry) int {
	switch e.Resource {
	case "customresourcedefinitions":
		return 2
	case "namespaces":
		return 1
	}
	return 0
}

func (e Entry) key() string { return e.String() + " " + e.UID }

// existing lists each recorded resource once and returns the recorded objects that still
// exist with their recorded UID, by key.
func existing(ctx context.Context, dyn dynamic.Interface, entries []Entry) (map[string]*unstructured.Unstructured, error) {
	resources := map[schema.GroupVersionResource]bool{}
	for _, e := range entries {
		resources[e.GVR()] = true
	}
	out := map[string]*unstructured.Unstructured{}
	for gvr := range resources {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue // its CRD is gone, and its objects with it
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		for i := range list.Items {
			it := &list.Items[i]
			e := Entry{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Namespace: it.GetNamespace(), Name: it.GetName(), UID: string(it.GetUID())}
			out[e.key()] = it
		}
	}
	return out, nil
}

// removeOne deletes the recorded object obj, finalizers first (no lab controller runs any
// more), only while it is the one recorded: the UID it had and, for the finalizers, the
// version read.
func removeOne(ctx context.Context, dyn dynamic.Interface, e Entry, obj *unstructured.Unstructured) error {
	pre := deletion.Precondition{UID: types.UID(e.UID), ResourceVersion: obj.GetResourceVersion()}
	return deletion.Delete(ctx, dyn, e.object(), len(obj.GetFinalizers()) > 0, pre)
}

// waitGone waits until none of es exists with its recorded UID.
func waitGone(ctx context.Context, dyn dynamic.Interface, es []Entry, timeout time.Duration) error {
	return deletion.WaitGone(ctx, timeout, func(ctx context.Context) ([]string, error) {
		live, err := existing(ctx, dyn, es)
		if err != nil {
			return nil, err
		}
		var left []string
		for _, e := range es {
			if live[e.key()] != nil {
				left = append(left, e.String())
			}
		}
		return left, nil
	})
}
