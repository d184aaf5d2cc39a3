package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

// LabTimeSkip is what a skip of lab time did in a running lab: the account's part (cost and
// budget alerts in the span), whether Karpenter's controllers now run on the new time, and
// the NodeClaim decisions that came due in the span.
type LabTimeSkip struct {
	fakeec2.TimeSkip
	KarpenterFollowed bool            `json:"karpenterFollowed"`
	Due               []karpenter.Due `json:"due"`
	// Empty are NodeClaims that were consolidatable before the skip and whose node runs
	// no pod now: nothing about them came due, and Karpenter removes them at its next look.
	Empty []karpenter.Due `json:"empty,omitempty"`
}

func (d *daemon) timeHandlers(mux *http.ServeMux) {
	mux.HandleFunc("POST /time/skip", func(w http.ResponseWriter, r *http.Request) {
		var req fakeec2.TimeSkipRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "decoding the skip: "+err.Error(), http.StatusBadRequest)
			return
		}
		dur, err := time.ParseDuration(req.Duration)
		if err == nil {
			err = fakeec2.CheckSkip(dur)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sk, err := d.skipTime(r.Context(), dur)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(sk)
	})
}

// skipTime moves lab time dur forward: the account's clock first (its ledger, budgets and
// timers walk the span), then Karpenter's, which follows the account's and nudges every
// NodeClaim to re-evaluate on the new time; skipTime returns once Karpenter says so. What
// came due is read off the NodeClaims as they stood before the skip. One at a time, and
// never during a reset.
func (d *daemon) skipTime(ctx context.Context, dur time.Duration) (*LabTimeSkip, error) {
	d.resetMu.Lock()
	defer d.resetMu.Unlock()
	srv := d.ec2()
	if srv == nil {
		return nil, errors.New("the EC2 emulator is not running")
	}
	claims, pools, err := listKarpenter(ctx, d.restConfig())
	if err != nil {
		return nil, err
	}
	// DueBetween reads NodeClaims in lab time, as Karpenter does (karpenter/labview.go).
	skips := fakeec2.LabSkips(srv.Audit(trail.AuditQuery{Service: "karplab", Action: "SkipTime"}))
	if err := karpenter.NodeClaimsInLabTime(claims, skips); err != nil {
		return nil, err
	}
	sk, err := srv.SkipTime(dur)
	if err != nil {
		return nil, err
	}
	out := &LabTimeSkip{TimeSkip: sk, Due: karpenter.DueBetween(claims, pools, sk.From, sk.To)}
	before := karpenter.ConsolidatableBefore(claims, pools)
	for _, due := range [][]karpenter.Due{out.Due, before} {
		if err := podsOnDueNodes(ctx, d.restConfig(), due); err != nil {
			return nil, err
		}
	}
	for _, c := range before {
		if len(c.Pods) == 0 {
			out.Empty = append(out.Empty, c)
		}
	}
	if d.restartKarpenter != nil { // Karpenter runs under this daemon
		if err := waitKarpenterClock(ctx, d.restConfig(), sk.Offset, 30*time.Second); err != nil {
			return nil, fmt.Errorf("lab time moved to %s, but %w", sk.To.Format(time.RFC3339), err)
		}
		out.KarpenterFollowed = true
	}
	return out, nil
}

// podsOnDueNodes names, for each consolidatable decision, the pods still bound to its node
// (DaemonSets' aside, as Karpenter counts emptiness): a learner who scaled a workload down
// sees what keeps the node from being empty.
func podsOnDueNodes(ctx context.Context, cfg *rest.Config, due []karpenter.Due) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for i := range due {
		if due[i].Kind != karpenter.DueConsolidatable || due[i].NodeName == "" {
			continue
		}
		pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + due[i].NodeName})
		if err != nil {
			return fmt.Errorf("listing the pods on %s: %w", due[i].NodeName, err)
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || ownedByDaemonSet(&p) {
				continue
			}
			due[i].Pods = append(due[i].Pods, p.Namespace+"/"+p.Name)
		}
	}
	return nil
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// waitKarpenterClock waits until Karpenter's lab clock ConfigMap says its controllers run
// on offset (written once every NodeClaim was nudged onto it).
func waitKarpenterClock(ctx context.Context, cfg *rest.Config, offset time.Duration, timeout time.Duration) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	want := strconv.FormatInt(int64(offset), 10)
	deadline := time.Now().Add(timeout)
	for {
		cm, err := kube.CoreV1().ConfigMaps(karpenter.LabClockNamespace).Get(ctx, karpenter.LabClockConfigMap, metav1.GetOptions{})
		if err == nil && cm.Data[karpenter.LabClockOffsetKey] == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Karpenter did not take the new lab time within %s (its ConfigMap %s/%s; see karpenter.log)",
				timeout, karpenter.LabClockNamespace, karpenter.LabClockConfigMap)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// listKarpenter reads every NodeClaim and NodePool as Karpenter's own types.
func listKarpenter(ctx context.Context, cfg *rest.Config) ([]karpv1.NodeClaim, []karpv1.NodePool, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	claims, err := listAs[karpv1.NodeClaim](ctx, dyn, nodeClaimsGVR)
	if err != nil {
		return nil, nil, err
	}
	pools, err := listAs[karpv1.NodePool](ctx, dyn, nodePoolsGVR)
	return claims, pools, err
}

func listAs[T any](ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource) ([]T, error) {
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	out := make([]T, len(list.Items))
	for i := range list.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &out[i]); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", gvr.Resource, list.Items[i].GetName(), err)
		}
	}
	return out, nil
}

// SkipTime moves the running lab's clock d forward (the account's, then Karpenter's) and
// says what the span cost and what came due in it.
func SkipTime(ctx context.Context, h Home, d time.Duration) (*LabTimeSkip, error) {
	var out LabTimeSkip
	if err := h.control(ctx, http.MethodPost, "/time/skip", fakeec2.TimeSkipRequest{Duration: d.String()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
