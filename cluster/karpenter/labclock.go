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
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	disruptionutils "sigs.k8s.io/karpenter/pkg/utils/disruption"

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
	// state is Karpenter's cluster state, set once its controllers are built: after a
	// nudge the clock marks it unconsolidated (reconsider).
	state atomic.Pointer[state.Cluster]
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
		nudged, stamp, err := c.nudge(ctx, kube)
		if err != nil {
			log.Warn("nudging NodeClaims onto the new lab time", "error", err)
		}
		log.Info("nudged NodeClaims onto the new lab time", "count", len(nudged))
		if settled, ok := c.reconsider(ctx, kube, nudged, stamp); ok {
			log.Info("Karpenter's disruption controller reconsiders consolidation on the new lab time", "settled", settled)
		}
		published = false
	}
	return nil
}

// nudge annotates every NodeClaim not being deleted with the lab time (stamp), so each
// time-driven NodeClaim controller (expiration, consolidatable, liveness) reconciles it on
// the new time now. It returns the names it annotated.
func (c *labClock) nudge(ctx context.Context, kube client.Client) (nudged map[string]bool, stamp string, err error) {
	var list karpv1.NodeClaimList
	if err := kube.List(ctx, &list); err != nil {
		return nil, "", fmt.Errorf("listing NodeClaims: %w", err)
	}
	stamp = c.Now().UTC().Format(time.RFC3339)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{NudgeAnnotation: stamp}}})
	if err != nil {
		return nil, "", err
	}
	nudged = map[string]bool{}
	for i := range list.Items {
		nc := &list.Items[i]
		if nc.DeletionTimestamp != nil {
			continue
		}
		if err := kube.Patch(ctx, nc, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
			return nudged, stamp, fmt.Errorf("annotating NodeClaim %s: %w", nc.Name, err)
		}
		nudged[nc.Name] = true
	}
	return nudged, stamp, nil
}

// reconsiderWithin bounds how long the clock waits for the nudged NodeClaims' conditions.
const reconsiderWithin = 10 * time.Second

// reconsider waits (within reconsiderWithin) until Karpenter's cluster state holds every
// nudged NodeClaim as nudged, with the Consolidatable condition core's rule gives at the new
// time, then marks the state unconsolidated; it says whether the conditions settled, and
// false for ok when the clock has no state to mark. Core marks the state unconsolidated on
// pod, node and NodeClaim lifecycle changes, not when a NodeClaim turns Consolidatable (on
// AWS that comes as time passes, and the state's own 5-minute reset covers it). After a
// skip, a disruption pass that ran before the new condition landed found only the other
// candidates, recorded the cluster as consolidated and left the newly consolidatable node
// alone until that reset: five more real minutes, the lead no longer moving.
func (c *labClock) reconsider(ctx context.Context, kube client.Client, nudged map[string]bool, stamp string) (settled, ok bool) {
	cluster := c.state.Load()
	if cluster == nil {
		return false, false
	}
	deadline := time.Now().Add(reconsiderWithin)
	for ctx.Err() == nil {
		if settled = c.settled(ctx, kube, cluster, nudged, stamp); settled || time.Now().After(deadline) {
			break
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	cluster.MarkUnconsolidated()
	return settled, true
}

// settled says whether cluster holds every nudged NodeClaim with the nudge's stamp and the
// Consolidatable condition nodeclaim.disruption sets on this clock.
func (c *labClock) settled(ctx context.Context, kube client.Client, cluster *state.Cluster, nudged map[string]bool, stamp string) bool {
	var pools karpv1.NodePoolList
	if err := kube.List(ctx, &pools); err != nil {
		return false
	}
	byName := map[string]*karpv1.NodePool{}
	for i := range pools.Items {
		byName[pools.Items[i].Name] = &pools.Items[i]
	}
	for _, n := range cluster.DeepCopyNodes() {
		nc := n.NodeClaim
		if nc == nil || !nudged[nc.Name] || nc.DeletionTimestamp != nil {
			continue
		}
		if nc.Annotations[NudgeAnnotation] != stamp {
			return false
		}
		np := byName[nc.Labels[karpv1.NodePoolLabelKey]]
		if np == nil || np.Spec.Replicas != nil { // static pools are never consolidated
			continue
		}
		want := np.Spec.Disruption.ConsolidateAfter.Duration != nil && nc.StatusConditions().IsTrue(karpv1.ConditionTypeInitialized) &&
			!disruptionutils.IsUnderConsolidateAfter(np, nc, c)
		if nc.StatusConditions().IsTrue(karpv1.ConditionTypeConsolidatable) != want {
			return false
		}
	}
	return true
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
