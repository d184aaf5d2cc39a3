package installs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Removal is what Remove did.
type Removal struct {
	Deleted []Entry // objects that existed with the recorded UID and were deleted
	Gone    int     // entries whose object was already gone or is now someone else's
}

// Remove deletes every recorded object that still exists with its recorded UID (an object of
// the same name made since by someone else is left alone), newest first, then namespaces,
// then CRDs, so nothing waits on a definition or namespace being removed under it. No lab
// controller runs any more, so finalizers are removed first. It waits until every deleted
// object is gone (up to timeout).
func Remove(ctx context.Context, dyn dynamic.Interface, entries []Entry, status io.Writer, timeout time.Duration) (Removal, error) {
	ordered := slices.Clone(entries)
	slices.Reverse(ordered)
	rank := func(e Entry) int {
		switch e.Resource {
		case "customresourcedefinitions":
			return 2
		case "namespaces":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(ordered, func(a, b Entry) int { return rank(a) - rank(b) })

	var (
		mu   sync.Mutex
		out  Removal
		errs []error
	)
	for _, group := range [][]Entry{filter(ordered, 0, rank), filter(ordered, 1, rank), filter(ordered, 2, rank)} {
		parallel(group, 8, func(e Entry) {
			deleted, err := removeOne(ctx, dyn, e)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case deleted:
				out.Deleted = append(out.Deleted, e)
			default:
				out.Gone++
			}
		})
	}
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	fmt.Fprintf(status, " - deleted %d objects the lab created (%d were already gone)\n", len(out.Deleted), out.Gone)
	return out, waitGone(ctx, dyn, out.Deleted, timeout)
}

func filter(es []Entry, r int, rank func(Entry) int) []Entry {
	var out []Entry
	for _, e := range es {
		if rank(e) == r {
			out = append(out, e)
		}
	}
	return out
}

func parallel(es []Entry, n int, fn func(Entry)) {
	work := make(chan Entry)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range work {
				fn(e)
			}
		}()
	}
	for _, e := range es {
		work <- e
	}
	close(work)
	wg.Wait()
}

func removeOne(ctx context.Context, dyn dynamic.Interface, e Entry) (bool, error) {
	client := dyn.Resource(e.GVR()).Namespace(e.Namespace)
	obj, err := client.Get(ctx, e.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && string(obj.GetUID()) != e.UID) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", e, err)
	}
	if len(obj.GetFinalizers()) > 0 {
		patch := fmt.Appendf(nil, `{"metadata":{"finalizers":null,"resourceVersion":%q}}`, obj.GetResourceVersion())
		if _, err := client.Patch(ctx, e.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return false, fmt.Errorf("removing the finalizers of %s: %w", e, err)
		}
	}
	uid := types.UID(e.UID)
	err = client.Delete(ctx, e.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("deleting %s: %w", e, err)
	}
	return true, nil
}

func waitGone(ctx context.Context, dyn dynamic.Interface, es []Entry, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var left []string
		for _, e := range es {
			obj, err := dyn.Resource(e.GVR()).Namespace(e.Namespace).Get(ctx, e.Name, metav1.GetOptions{})
			if err == nil && string(obj.GetUID()) == e.UID {
				left = append(left, e.String())
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still being deleted after %s: %v", timeout, left)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
