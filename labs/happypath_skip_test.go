package labs

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/labs/evidence"
)

// TestIntegrationHappyPathScaledToZeroGoesAfterSkip is a learner's walk with the course's
// NodePool verbatim (happy-path's solution: consolidationPolicy WhenEmptyOrUnderutilized,
// consolidateAfter 5m, budget 20%), through the CLI: lab run happy-path --solution; scale
// the render workers to 0; karplab time skip 6m. The course's example pod is a bare pod the
// Deployment does not own, so the node is not yet empty: the skip names it. Once the
// learner deletes it too and kubectl get pods -n ziba shows none, a skip of 6m makes
// Karpenter remove the empty node: its NodeClaim, Node and instance go within a bounded time
// and the evidence dates the disruption in lab time.
func TestIntegrationHappyPathScaledToZeroGoesAfterSkip(t *testing.T) {
	e := freshLab(t)
	ctx := t.Context()
	karplab := func(args string) string {
		t.Helper()
		out, err := runShell(t, "/usr/bin", "karplab "+args)
		if err != nil {
			t.Fatalf("karplab %s: %v\n%s", args, err, out)
		}
		return out
	}
	waitFor := func(what string, within time.Duration, cond func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > within {
				t.Fatalf("timed out after %s waiting for %s\n%s", within, what, karpenterTail(t, 20))
			}
			time.Sleep(500 * time.Millisecond)
		}
		return time.Since(start)
	}
	podsLeft := func() []string {
		pods, err := e.Kube.CoreV1().Pods(zibaNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		return names
	}

	karplab("lab run happy-path --solution")
	claims, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
	if err != nil || len(claims.Items) != 1 {
		t.Fatalf("the happy path's NodeClaims: %d, %v (want the one machine the course's workload fits)", len(claims.Items), err)
	}
	claim := claims.Items[0].GetName()
	nodeName, _, _ := unstructured.NestedString(claims.Items[0].Object, "status", "nodeName")
	providerID, _, _ := unstructured.NestedString(claims.Items[0].Object, "status", "providerID")
	instanceID := evidence.InstanceIDFromProviderID(providerID)
	if nodeName == "" || instanceID == "" {
		t.Fatalf("NodeClaim %s has node %q and providerID %q", claim, nodeName, providerID)
	}

	karplab("kubectl scale deploy -n ziba ziba-render-worker --replicas=0")
	waitFor("only the course's example pod left in ziba", 2*time.Minute, func() bool {
		return fmt.Sprint(podsLeft()) == "["+courseExample+"]"
	})
	out := karplab("time skip 6m")
	if !strings.Contains(out, claim) || !strings.Contains(out, "consolidatable") ||
		!strings.Contains(out, "not empty, its node still runs 1 pod: ziba/"+courseExample) {
		t.Errorf("the first skip does not say the example pod keeps %s from being empty:\n%s", claim, out)
	}

	karplab("kubectl delete pod -n ziba " + courseExample)
	waitFor("kubectl get pods -n ziba to show none", time.Minute, func() bool { return len(podsLeft()) == 0 })
	missed, stamps := podGoingUnrecorded(t, e, claim)
	sk, err := cluster.SkipTime(ctx, labOf(t).home, 6*time.Minute) // karplab time skip 6m, read as JSON
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case len(sk.Due) == 1 && sk.Due[0].NodeClaim == claim && sk.Due[0].Kind == "consolidatable" && len(sk.Due[0].Pods) == 0:
	case len(sk.Due) == 0 && missed:
		t.Logf("Karpenter never recorded the example pod's going (%s): %s was consolidatable already, so nothing came due", stamps, claim)
		if len(sk.Empty) != 1 || sk.Empty[0].NodeClaim != claim {
			t.Errorf("the second skip names %+v as consolidatable before it with an empty node, want %s", sk.Empty, claim)
		}
	default:
		t.Errorf("the second skip brought due %+v, want %s consolidatable with no pods (%s)", sk.Due, claim, stamps)
	}
	gone := waitFor("the empty node's NodeClaim, Node and instance to go", 2*time.Minute, func() bool {
		_, ncErr := e.Dynamic.Resource(nodeClaimsGVR).Get(ctx, claim, metav1.GetOptions{})
		_, nodeErr := e.Kube.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		state, err := instanceState(ctx, e.EC2, instanceID)
		if err != nil {
			t.Fatal(err)
		}
		return apierrors.IsNotFound(ncErr) && apierrors.IsNotFound(nodeErr) && state == string(ec2types.InstanceStateNameTerminated)
	})
	t.Logf("the empty node went %s after the skip (wall clock)", gone.Round(time.Second))

	// The recorder trails the API server a little under load: read until it saw the end.
	var ev *evidence.Evidence
	var row *evidence.NodeClaimRow
	waitFor("the evidence to record the NodeClaim's end", 30*time.Second, func() bool {
		ev, row = evidence.Correlate(takeSnapshot(t, e)), nil
		for i := range ev.NodeClaims {
			if ev.NodeClaims[i].Name == claim {
				row = &ev.NodeClaims[i]
			}
		}
		return row != nil && row.Deleted != nil
	})
	// Lab time: the skip's end is 12m ahead of the wall clock's start of this span.
	if row.DisruptionReason != "Empty" || row.DeletionRequested == nil || row.Deleted == nil ||
		row.DeletionRequested.Before(sk.To) || row.Deleted.After(sk.To.Add(gone+time.Minute)) {
		t.Errorf("evidence for %s: reason %q, deletion requested %v, deleted %v; want Empty, between the skip's end %s and %s after",
			claim, row.DisruptionReason, row.DeletionRequested, row.Deleted, sk.To, gone+time.Minute)
	}
	for _, in := range ev.Instances {
		if in.ID == instanceID && (in.TerminatedAt == nil || in.TerminatedAt.Before(sk.To)) {
			t.Errorf("evidence for instance %s: terminated at %v, want after the skip's end %s (lab time)", in.ID, in.TerminatedAt, sk.To)
		}
	}
}

func takeSnapshot(t *testing.T, e *Env) *evidence.Snapshot {
	t.Helper()
	snap, err := e.TakeSnapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// podGoingUnrecorded says whether Karpenter has not recorded a pod's going since claim
// became consolidatable. Core's podevents controller stamps lastPodEventTime when it sees a
// pod terminating, but one already gone from its cache when it looks is never stamped: then
// the node stays consolidatable, and a skip has nothing to bring due.
func podGoingUnrecorded(t *testing.T, e *Env, claim string) (bool, string) {
	t.Helper()
	u, err := e.Dynamic.Resource(nodeClaimsGVR).Get(t.Context(), claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nc karpv1.NodeClaim
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &nc); err != nil {
		t.Fatal(err)
	}
	cc := nc.StatusConditions().Get(karpv1.ConditionTypeConsolidatable)
	if !cc.IsTrue() {
		return false, "not consolidatable before the skip"
	}
	stamps := fmt.Sprintf("lastPodEventTime %s, consolidatable since %s", nc.Status.LastPodEventTime.Format(time.RFC3339), cc.LastTransitionTime.Format(time.RFC3339))
	return !nc.Status.LastPodEventTime.After(cc.LastTransitionTime.Time), stamps
}
