package karpenter

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/fakeec2"
)

// Where Karpenter says which lab time it runs on: a ConfigMap a learner can read and the
// daemon waits on after a skip.
const (
	// LabNamespace is the lab's own namespace on the cluster: the daemon installs it (so
	// stop --uninstall removes it), reset keeps it.
	LabNamespace      = "karplab"
	LabClockNamespace = LabNamespace
	LabClockConfigMap = "karplab-lab-clock"
	// LabClockOffsetKey holds the lead Karpenter's controllers run on, in nanoseconds; it
	// is written once every NodeClaim was nudged to re-evaluate on it.
	LabClockOffsetKey = "offsetNanos"
	// NudgeAnnotation marks a NodeClaim with the lab time at which it was nudged: writing it
	// is what makes core's NodeClaim controllers reconcile at once instead of when their
	// wall-clock requeue comes round.
	NudgeAnnotation = "karplab.dev/lab-time"
)

// labClock is the clock Karpenter's controllers get through the operator's Clock, the seam
// Karpenter's own tests inject a fake through: the wall clock plus the lab account's lead.
// The lead moves live when the account's clock is skipped; waits already begun (After,
// Sleep, timers) keep their real length, which is right for core's short waits (a 15 s
// validation, a 1 s sleep): long waits are workqueue requeues, which the nudge ends.
type labClock struct {
	clock.RealClock
	offset atomic.Int64 // nanoseconds
}

func (c *labClock) Now() time.Time { return c.RealClock.Now().Add(c.Offset()) }

func (c *labClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Offset is how far the lab's time runs ahead of the wall clock.
func (c *labClock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// readLabClock asks the lab account at endpoint how far its clock runs ahead.
func readLabClock(ctx context.Context, endpoint string) (*labClock, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lt, err := fakeec2.NewAdminClient(endpoint).Time(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the lab clock from %s: %w", endpoint, err)
	}
	c := &labClock{}
	c.offset.Store(int64(lt.Offset))
	return c, nil
}

// follow keeps c (and view's skips) on the account's lead until ctx ends: it publishes the
// lead Karpenter runs on, then long-polls the account; on every move it takes the new skips
// and lead, nudges every NodeClaim and publishes again. kube must be a started manager's
// client.
func (c *labClock) follow(ctx context.Context, endpoint string, kube client.Client, view *labView, log *slog.Logger) error {
	admin := fakeec2.NewAdminClient(endpoint)
	published := false
	for ctx.Err() == nil {
		if !published {
			if err := c.publish(ctx, kube); err != nil {
				log.Warn("publishing the lab clock", "error", err)
				sleepCtx(ctx, time.Second)
				continue
			}
			published = true
		}
		lt, err := admin.WaitTimeChange(ctx, c.Offset())
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("following the lab clock", "error", err)
				sleepCtx(ctx, time.Second)
			}
			continue
		}
		if lt.Offset == c.Offset() {
			continue
		}
		// The skips first, so NodeClaims read from now on carry lab creation times.
		if err := view.refresh(ctx, admin, lt.Offset); err != nil {
			log.Warn("following the lab clock", "error", err)
		}
		c.offset.Store(int64(lt.Offset))
		log.Info("lab clock moved", "offset", lt.Offset.String(), "labTime", lt.Now.UTC().Format(time.RFC3339))
		n, err := c.nudge(ctx, kube)
		if err != nil {
			log.Warn("nudging NodeClaims onto the new lab time", "error", err)
		}
		log.Info("nudged NodeClaims onto the new lab time", "count", n)
		published = false
	}
	return nil
}

// nudge annotates every NodeClaim not being deleted with the lab time, so each
// time-driven NodeClaim controller (expiration, consolidatable, liveness) reconciles it on
// the new time now.
func (c *labClock) nudge(ctx context.Context, kube client.Client) (int, error) {
	var list karpv1.NodeClaimList
	if err := kube.List(ctx, &list); err != nil {
		return 0, fmt.Errorf("listing NodeClaims: %w", err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		NudgeAnnotation: c.Now().UTC().Format(time.RFC3339)}}})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		nc := &list.Items[i]
		if nc.DeletionTimestamp != nil {
			continue
		}
		if err := kube.Patch(ctx, nc, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
			return n, fmt.Errorf("annotating NodeClaim %s: %w", nc.Name, err)
		}
		n++
	}
	return n, nil
}

// publish writes the lead Karpenter runs on into the lab clock ConfigMap.
func (c *labClock) publish(ctx context.Context, kube client.Client) error {
	off := c.Offset()
	data := map[string]string{
		LabClockOffsetKey: strconv.FormatInt(int64(off), 10),
		"offset":          off.String(),
		"labTime":         c.Now().UTC().Format(time.RFC3339),
		"note":            "Karpenter's controllers run on the lab clock: the wall clock plus offset (karplab time skip moves it)",
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: LabClockNamespace, Name: LabClockConfigMap}, Data: data}
	err := kube.Create(ctx, cm)
	if apierrors.IsNotFound(err) { // no lab namespace: a Karpenter run without the daemon
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: LabClockNamespace}}
		if err = kube.Create(ctx, ns); err == nil || apierrors.IsAlreadyExists(err) {
			err = kube.Create(ctx, cm)
		}
	}
	if apierrors.IsAlreadyExists(err) {
		cm.Data = nil
		if err = kube.Get(ctx, client.ObjectKeyFromObject(cm), cm); err == nil {
			cm.Data = data
			err = kube.Update(ctx, cm)
		}
	}
	return err
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
