package deletion

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Object names one object: its resource, namespace (empty when cluster-scoped) and name.
type Object struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

// String is the object as kubectl names it: resource[.group] [namespace/]name.
func (o Object) String() string {
	r := o.GVR.Resource
	if o.GVR.Group != "" {
		r += "." + o.GVR.Group
	}
	if o.Namespace != "" {
		return r + " " + o.Namespace + "/" + o.Name
	}
	return r + " " + o.Name
}

// Precondition ties a deletion to the object the caller read; the zero value deletes
// whatever object has the name.
type Precondition struct {
	// UID: only the object with this UID is deleted (one of the same name made since, by
	// someone else, is left alone).
	UID types.UID
	// ResourceVersion: the finalizers are removed only from this version of the object,
	// the one whose finalizers the caller read.
	ResourceVersion string
}

// Delete deletes o; with stripFinalizers it first removes o's finalizers, since no
// controller will. An object already gone is no error, nor is one whose precondition
// fails (the API server answers Conflict): it is not the object meant any more.
func Delete(ctx context.Context, dyn dynamic.Interface, o Object, stripFinalizers bool, pre Precondition) error {
	client := dyn.Resource(o.GVR).Namespace(o.Namespace)
	ignored := func(err error) bool {
		return apierrors.IsNotFound(err) || (pre != Precondition{} && apierrors.IsConflict(err))
	}
	if stripFinalizers {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if pre.ResourceVersion != "" {
			patch = fmt.Appendf(nil, `{"metadata":{"finalizers":null,"resourceVersion":%q}}`, pre.ResourceVersion)
		}
		if _, err := client.Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !ignored(err) {
			return fmt.Errorf("removing the finalizers of %s: %w", o, err)
		}
	}
	var opts metav1.DeleteOptions
	if pre.UID != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &pre.UID}
	}
	if err := client.Delete(ctx, o.Name, opts); err != nil && !ignored(err) {
		return fmt.Errorf("deleting %s: %w", o, err)
	}
	return nil
}

// InFlight is how many calls Each has in flight at once: a reset or an uninstall deletes
// dozens of objects, one round trip each, and the API server serves them side by side.
const InFlight = 8

// Each calls call for i in [0, n), up to InFlight at once, and returns the first error (the
// calls not yet started then see ctx ended).
func Each(ctx context.Context, n int, call func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(InFlight)
	for i := range n {
		g.Go(func() error { return call(ctx, i) })
	}
	return g.Wait()
}

// DeleteAll deletes every object of objs as Delete does (stripFinalizers, no precondition),
// side by side (Each).
func DeleteAll(ctx context.Context, dyn dynamic.Interface, objs []Object, stripFinalizers bool) error {
	return Each(ctx, len(objs), func(ctx context.Context, i int) error {
		return Delete(ctx, dyn, objs[i], stripFinalizers, Precondition{})
	})
}

// WaitGone asks left what is still there every half second until it answers nothing,
// and fails naming what is left once timeout has passed. An error of left, or the end of
// ctx, ends the wait with that error.
func WaitGone(ctx context.Context, timeout time.Duration, left func(context.Context) ([]string, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		names, err := left(ctx)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still being deleted after %s: %v", timeout, names)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
