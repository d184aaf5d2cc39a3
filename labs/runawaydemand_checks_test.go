package labs

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/labs/evidence"
)

var runawayT0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func claimAt(name string, createdS int, deletedS int, cpu string) *evidence.Versions[karpv1.NodeClaim] {
	nc := karpv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(runawayT0.Add(time.Duration(createdS) * time.Second)),
		Labels:            map[string]string{karpv1.NodePoolLabelKey: generalPool}}}
	inFlight := nc
	nc.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Gi")}
	v := &evidence.Versions[karpv1.NodeClaim]{UID: string(nc.UID), States: []karpv1.NodeClaim{inFlight, nc}}
	if deletedS >= 0 {
		d := runawayT0.Add(time.Duration(deletedS) * time.Second)
		v.Deleted = &d
	}
	return v
}

func limitedPool(cpu string) *evidence.Versions[karpv1.NodePool] {
	np := karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: generalPool, UID: "pool"}}
	if cpu != "" {
		np.Spec.Limits = karpv1.Limits{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("800Gi")}
	}
	return &evidence.Versions[karpv1.NodePool]{UID: "pool", States: []karpv1.NodePool{np}}
}

// A NodeClaim counts against the limits from its creation, while it is still launching:
// two claims in flight together over the limit fail, the same claims one after the other pass.
// Limits far from the course's fail even when the peak kept to them: ten times the course's
// let the surge buy 328 vCPU (it bounded nothing), a tenth starves the pool.
func TestPeakWithinLimitsCountsClaimsInFlight(t *testing.T) {
	for _, tt := range []struct {
		name    string
		limit   string
		claims  []*evidence.Versions[karpv1.NodeClaim]
		pass    bool
		reason  string
		problem string // a ✗ line of a failing check
	}{
		{"overlapping claims over the limit", "200", []*evidence.Versions[karpv1.NodeClaim]{
			claimAt("a", 0, -1, "128"), claimAt("b", 2, -1, "96")}, false, "peak 224 vCPU", "cpu 224 over its limit 200"},
		{"one after the other", "200", []*evidence.Versions[karpv1.NodeClaim]{
			claimAt("a", 0, 10, "128"), claimAt("b", 20, -1, "96")}, true, "peak 128 vCPU", ""},
		{"no limits", "", []*evidence.Versions[karpv1.NodeClaim]{claimAt("a", 0, -1, "8")}, false, "sets no limits", "NodePool ziba-general sets no spec.limits (the course's: limits cpu 200 / memory 800Gi)"},
		{"ten times the course's: the surge went beyond its bound", "2000", []*evidence.Versions[karpv1.NodeClaim]{
			claimAt("a", 0, -1, "128"), claimAt("b", 2, -1, "128"), claimAt("c", 3, -1, "72")}, false, "peak 328 vCPU",
			"the surge bought 328 vCPU, beyond the course's bound of 200: limits cpu 2k / memory 800Gi bounded nothing"},
		{"a tenth of the course's", "20", []*evidence.Versions[karpv1.NodeClaim]{claimAt("a", 0, -1, "16")}, false, "peak 16 vCPU",
			"limits.cpu 20 is 10% of the course's 200: the pool cannot grow for honest demand"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := evidence.DecodeHistory(nil)
			h.NodePools["pool"] = limitedPool(tt.limit)
			for _, c := range tt.claims {
				h.NodeClaims[c.UID] = c
			}
			g := &Grading{Evidence: &evidence.Evidence{}, hist: h}
			c := checkPeakWithinLimits(g, generalPool)
			if c.Passed != tt.pass || !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("passed %v, reason %q; want %v and %q", c.Passed, c.Reason, tt.pass, tt.reason)
			}
			if tt.problem != "" && !slices.Contains(c.Problems, tt.problem) {
				t.Errorf("want the ✗ line %q among %q", tt.problem, c.Problems)
			}
			if x := c.contradictions(); len(x) > 0 {
				t.Error(x)
			}
		})
	}
}

// One window, one peak: the history before the limits took effect counts NodeClaims in both
// limit checks (EC2 no longer describes the surge's terminated instances), and names the
// limits in force then instead of claiming none bound it.
func TestLimitsHistoryIsOneWindow(t *testing.T) {
	h := evidence.DecodeHistory(nil)
	broad, course := limitedPool("2000"), limitedPool("200")
	np := course.States[0]
	h.NodePools["pool"] = &evidence.Versions[karpv1.NodePool]{UID: "pool", States: []karpv1.NodePool{broad.States[0], np},
		Seen: []time.Time{runawayT0.Add(-time.Minute), runawayT0.Add(100 * time.Second)}}
	for _, c := range []*evidence.Versions[karpv1.NodeClaim]{claimAt("a", 0, 90, "128"), claimAt("b", 2, 90, "128"), claimAt("c", 3, 90, "72"), claimAt("d", 120, -1, "8")} {
		h.NodeClaims[c.UID] = c
	}
	g := &Grading{Evidence: &evidence.Evidence{}, hist: h}
	want := "before the limits took effect at " + stamp(&h.NodePools["pool"].Seen[1]) + ": peak 328 vCPU / 192Gi memory in 3 NodeClaims (" +
		stamp(&h.NodeClaims["uid-c"].States[0].CreationTimestamp.Time) + "), under limits cpu 2k / memory 800Gi then; not judged"
	for _, c := range []Check{checkPeakWithinLimits(g, generalPool), checkWithinLimits(g, generalPool)} {
		if !slices.Contains(c.Evidence, want) {
			t.Errorf("%s: want %q among %q", c.ID, want, c.Evidence)
		}
	}
}

// The alert must count the pool's spend and fire while the spend is under the budget.
func TestCostAlertBeforeThreshold(t *testing.T) {
	poolFilter := map[string][]string{budgets.FilterTagKeyValue: {"user:karpenter.sh/nodepool$" + generalPool}}
	alert := func(actual float64) budgets.Alert {
		return budgets.Alert{Time: runawayT0, Budget: generalPool, NotificationType: budgets.Actual, ComparisonOperator: budgets.GreaterThan,
			Threshold: 50, ThresholdType: budgets.Percentage, ThresholdUSD: 2.5, LimitUSD: 5, ActualUSD: actual}
	}
	for _, tt := range []struct {
		name    string
		budgets []budgets.Budget
		pass    bool
		reason  string
	}{
		{"no budget", nil, false, "no budget"},
		{"another pool's budget", []budgets.Budget{{Name: "realtime", LimitUSD: 5,
			CostFilters: map[string][]string{budgets.FilterTagKeyValue: {"user:karpenter.sh/nodepool$ziba-realtime"}},
			Alerts:      []budgets.Alert{alert(2.6)}}}, false, "no alert fired"},
		{"no alert yet", []budgets.Budget{{Name: generalPool, LimitUSD: 5, CostFilters: poolFilter}}, false, "no alert fired"},
		{"alert after the spend crossed the budget", []budgets.Budget{{Name: generalPool, LimitUSD: 5, CostFilters: poolFilter,
			Alerts: []budgets.Alert{alert(5.4)}}}, false, "no alert fired"},
		{"alert under budget", []budgets.Budget{{Name: generalPool, LimitUSD: 5, CostFilters: poolFilter,
			Alerts: []budgets.Alert{alert(2.51)}}}, true, "$2.5100 of $5.00 spent"},
		{"an unfiltered budget counts every machine", []budgets.Budget{{Name: "account", LimitUSD: 5,
			Alerts: []budgets.Alert{alert(2.51)}}}, true, "budget account alerted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &Grading{Snapshot: &evidence.Snapshot{Budgets: tt.budgets}, Evidence: &evidence.Evidence{}, hist: evidence.DecodeHistory(nil)}
			c := checkAlertBeforeThreshold(g, generalPool)
			if c.Passed != tt.pass || !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("passed %v, reason %q; want %v and %q\n%v", c.Passed, c.Reason, tt.pass, tt.reason, c.Evidence)
			}
		})
	}
}
