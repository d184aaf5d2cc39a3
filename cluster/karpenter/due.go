package karpenter

import (
	"fmt"
	"sort"
	"time"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
)

// What a skip of lab time can bring due: core's time-driven NodeClaim decisions.
const (
	DueExpiry              = "expiry"               // nodeclaim.expiration: creation + spec.expireAfter
	DueConsolidatable      = "consolidatable"       // nodeclaim.disruption: last pod event + consolidateAfter
	DueRegistrationTimeout = "registration-timeout" // nodeclaim.lifecycle liveness: 15m without a Node
	DueLaunchTimeout       = "launch-timeout"       // nodeclaim.lifecycle liveness: LaunchTimeout without an instance
)

// registrationTimeout is core's unexported liveness constant
// (pkg/controllers/nodeclaim/lifecycle/liveness.go).
const registrationTimeout = 15 * time.Minute

// Due is one decision that came due in a span of lab time.
type Due struct {
	Kind      string    `json:"kind"`
	NodeClaim string    `json:"nodeClaim"`
	NodePool  string    `json:"nodePool,omitempty"`
	NodeName  string    `json:"nodeName,omitempty"`
	At        time.Time `json:"at"` // lab time
	What      string    `json:"what"`
	// Pods are the pods (not DaemonSets') still bound to a consolidatable NodeClaim's node:
	// with any, the node is not empty, and Karpenter removes it only if they fit elsewhere.
	Pods []string `json:"pods,omitempty"`
}

// DueBetween lists the decisions that come due in (from, to] for the NodeClaims, with the
// arithmetic of the core controllers that take them, so a skip over that span triggers
// exactly these: expiry (creationTimestamp + expireAfter; pass creation times in lab time,
// as Karpenter reads them), consolidatable (lastPodEventTime, or the Initialized
// transition, + the pool's consolidateAfter, unless the claim is consolidatable since),
// and the liveness timeouts.
// A NodeClaim being deleted has nothing more to come due.
func DueBetween(claims []karpv1.NodeClaim, pools []karpv1.NodePool, from, to time.Time) []Due {
	poolByName := map[string]*karpv1.NodePool{}
	for i := range pools {
		poolByName[pools[i].Name] = &pools[i]
	}
	var out []Due
	for i := range claims {
		nc := &claims[i]
		if nc.DeletionTimestamp != nil {
			continue
		}
		add := func(kind string, at time.Time, what string) {
			if at.After(from) && !at.After(to) {
				out = append(out, Due{Kind: kind, NodeClaim: nc.Name, NodePool: nc.Labels[karpv1.NodePoolLabelKey],
					NodeName: nc.Status.NodeName, At: at, What: what})
			}
		}
		if d := nc.Spec.ExpireAfter.Duration; d != nil {
			add(DueExpiry, nc.CreationTimestamp.Add(*d), fmt.Sprintf("expireAfter %s reached: Karpenter deletes it and replaces its capacity", d))
		}
		conds := nc.StatusConditions()
		if pool := poolByName[nc.Labels[karpv1.NodePoolLabelKey]]; pool != nil && pool.Spec.Disruption.ConsolidateAfter.Duration != nil {
			if since, ok := consolidateAfterFrom(nc); ok {
				add(DueConsolidatable, since.Add(*pool.Spec.Disruption.ConsolidateAfter.Duration),
					fmt.Sprintf("consolidateAfter %s since its last pod event: a %s candidate", pool.Spec.Disruption.ConsolidateAfter.Duration, pool.Spec.Disruption.ConsolidationPolicy))
			}
		}
		if conds.Get(karpv1.ConditionTypeRegistered).IsTrue() {
			continue
		}
		if launched := conds.Get(karpv1.ConditionTypeLaunched); launched != nil && !launched.IsTrue() {
			add(DueLaunchTimeout, launched.LastTransitionTime.Add(lifecycle.LaunchTimeout),
				fmt.Sprintf("not launched within %s: Karpenter deletes it and tries again", lifecycle.LaunchTimeout))
		} else if registered := conds.Get(karpv1.ConditionTypeRegistered); launched.IsTrue() && registered != nil {
			add(DueRegistrationTimeout, registered.LastTransitionTime.Add(registrationTimeout),
				fmt.Sprintf("no Node registered within %s: Karpenter deletes it and tries again", registrationTimeout))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].NodeClaim+out[i].Kind < out[j].NodeClaim+out[j].Kind
	})
	return out
}

// consolidateAfterFrom is when an initialized NodeClaim's consolidateAfter window opened,
// as core's disruption controller reads it: its last pod event, or its initialization.
// ok is false when the claim is not initialized, or is consolidatable since then. A
// Consolidatable condition older than the last pod event is stale: core's podevents
// controller recorded a pod's going that the disruption controller has not yet acted on.
func consolidateAfterFrom(nc *karpv1.NodeClaim) (since time.Time, ok bool) {
	conds := nc.StatusConditions()
	init := conds.Get(karpv1.ConditionTypeInitialized)
	if !init.IsTrue() {
		return time.Time{}, false
	}
	since = init.LastTransitionTime.Time
	if !nc.Status.LastPodEventTime.IsZero() {
		since = nc.Status.LastPodEventTime.Time
	}
	if cc := conds.Get(karpv1.ConditionTypeConsolidatable); cc.IsTrue() && !cc.LastTransitionTime.Time.Before(since) {
		return time.Time{}, false
	}
	return since, true
}

// ConsolidatableBefore lists the NodeClaims that were consolidatable already when a skip
// began, dated when they became so: nothing about them comes due in the span, and
// Karpenter acts on them at its next look. A learner who deletes a node's last pod may
// see one here rather than in DueBetween: core's podevents controller misses a pod that
// has left its cache before it looks, and then the claim never stops being consolidatable.
func ConsolidatableBefore(claims []karpv1.NodeClaim, pools []karpv1.NodePool) []Due {
	var out []Due
	for i := range claims {
		nc := &claims[i]
		pool := poolNamed(pools, nc.Labels[karpv1.NodePoolLabelKey])
		if nc.DeletionTimestamp != nil || pool == nil || pool.Spec.Disruption.ConsolidateAfter.Duration == nil {
			continue
		}
		cc := nc.StatusConditions().Get(karpv1.ConditionTypeConsolidatable)
		if _, comes := consolidateAfterFrom(nc); comes || !cc.IsTrue() {
			continue
		}
		out = append(out, Due{Kind: DueConsolidatable, NodeClaim: nc.Name, NodePool: pool.Name, NodeName: nc.Status.NodeName,
			At: cc.LastTransitionTime.Time, What: fmt.Sprintf("consolidatable since before the skip: a %s candidate", pool.Spec.Disruption.ConsolidationPolicy)})
	}
	return out
}

func poolNamed(pools []karpv1.NodePool, name string) *karpv1.NodePool {
	for i := range pools {
		if pools[i].Name == name {
			return &pools[i]
		}
	}
	return nil
}
