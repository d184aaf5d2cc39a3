package fakeec2_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/karplab/karplab/fakeec2"
	labbudgets "github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestSkipTimeFiresBudgetsOnTheWay skips 10h of lab time over a launched node whose burn
// rate crosses an ACTUAL 80% alert after about 4.8h and the whole limit after 6h: the alert
// fires once, dated at its crossing with the spend then (not the 10h total), the skip's
// cost is the ledger's rate times 10h, old launch times stay and new ones are 10h later.
func TestSkipTimeFiresBudgetsOnTheWay(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.BootDelay, o.StateDir = -1, t.TempDir() })
	subnets, _, amd64, _ := e.discover()
	first := e.launch("m6i.large", amd64, subnets[0], 1, map[string]string{"karpenter.sh/nodepool": "ziba-general"})[0]

	bill, err := e.admin.Billing(e.ctx)
	e.must(err)
	var rate, nodeRate float64
	for _, en := range bill.Entries {
		rate += en.PricePerHour
		if en.ResourceType == "instance" {
			nodeRate += en.PricePerHour
		}
	}
	limit := math.Round(rate*6*100) / 100 // crossed after about 6h
	_, err = e.admin.SetBudget(e.ctx, labbudgets.Spec{Name: "account", LimitUSD: limit, TimeUnit: labbudgets.Monthly,
		Notifications: []labbudgets.NotificationSpec{{Type: labbudgets.Actual, Threshold: 80}}})
	e.must(err)

	sk, err := e.admin.SkipTime(e.ctx, 10*time.Hour)
	e.must(err)
	if !sk.From.Equal(t0) || !sk.To.Equal(t0.Add(10*time.Hour)) || sk.Offset != 10*time.Hour || sk.OffsetText != "10h0m0s" {
		t.Errorf("skip %s -> %s, offset %s (%q); want %s -> %s, 10h", sk.From, sk.To, sk.Offset, sk.OffsetText, t0, t0.Add(10*time.Hour))
	}
	if want := rate * 10; math.Abs(sk.CostUSD-want) > 1e-5 {
		t.Errorf("cost of the skip %v, want %v (%v $/h x 10h)", sk.CostUSD, want, rate)
	}
	if got := sk.CostByNodePool["ziba-general"]; math.Abs(got-nodeRate*10) > 1e-5 {
		t.Errorf("cost of ziba-general %v, want %v; by node pool %v", got, nodeRate*10, sk.CostByNodePool)
	}
	if len(sk.Alerts) != 1 {
		t.Fatalf("alerts of the skip %+v, want the ACTUAL 80%% one", sk.Alerts)
	}
	a := sk.Alerts[0]
	if a.ActualUSD < 0.8*limit || a.ActualUSD >= limit || !a.Time.After(sk.From) || !a.Time.Before(sk.To) {
		t.Errorf("alert at %s with actual %v of limit %v; want between 80%% and 100%%, within the skip", a.Time, a.ActualUSD, limit)
	}
	if crossing := t0.Add(time.Duration(0.8 * limit / rate * float64(time.Hour))); a.Time.Sub(crossing) > time.Minute || a.Time.Before(crossing) {
		t.Errorf("alert at %s, want the first minute after the crossing at %s", a.Time, crossing)
	}
	fired, err := e.admin.Audit(e.ctx, trail.AuditQuery{Service: "budgets", Action: labbudgets.ActionAlert})
	e.must(err)
	skips, err := e.admin.Audit(e.ctx, trail.AuditQuery{Service: "karplab", Action: "SkipTime"})
	e.must(err)
	if len(fired) != 1 || !fired[0].Time.Equal(a.Time) || len(skips) != 1 || skips[0].Parameters["duration"] != "10h0m0s" {
		t.Errorf("audit: alerts %+v, skips %+v; want one of each", fired, skips)
	}

	if got := aws.ToTime(e.describe(first)[0].LaunchTime); !got.Equal(t0) {
		t.Errorf("first instance's LaunchTime %s after the skip, want %s", got, t0)
	}
	second := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	if got := aws.ToTime(e.describe(second)[0].LaunchTime); !got.Equal(t0.Add(10 * time.Hour)) {
		t.Errorf("an instance launched after the skip: LaunchTime %s, want %s", got, t0.Add(10*time.Hour))
	}
	lt, err := e.admin.Time(e.ctx)
	e.must(err)
	if !lt.Now.Equal(t0.Add(10*time.Hour)) || !lt.Wall.Equal(t0) || lt.Offset != 10*time.Hour {
		t.Errorf("lab time %+v, want now %s, wall %s", lt, t0.Add(10*time.Hour), t0)
	}
}

// TestSkipTimeRefusesBadDurations answers 400 with the fix for a skip that is no skip.
func TestSkipTimeRefusesBadDurations(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		name string
		d    time.Duration
		want string
	}{
		{name: "zero", d: 0, want: "duration 0s: skip at least 1s (e.g. 5m, 2h, 720h) (HTTP 400)"},
		{name: "backwards", d: -5 * time.Minute, want: "duration -5m0s: skip at least 1s"},
		{name: "too far", d: 401 * 24 * time.Hour, want: "skip at most 9600h"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.admin.SkipTime(e.ctx, tt.d)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SkipTime(%s): %v, want %q", tt.d, err, tt.want)
			}
		})
	}
	resp, err := http.Post(e.url+"/_karplab/time/skip", "application/json", bytes.NewReader([]byte(`{"duration":"soon"}`)))
	e.must(err)
	var body struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body.Error, "want a Go duration") {
		t.Errorf("duration soon: HTTP %d %q, want 400 asking for a Go duration", resp.StatusCode, body.Error)
	}
	if lt, err := e.admin.Time(e.ctx); err != nil || lt.Offset != 0 {
		t.Errorf("after refused skips: %+v, %v; want no offset", lt, err)
	}
}

// TestSkipTimeSurvivesRestartUntilReset keeps lab time across a daemon restart on the
// same state; an account reset puts the clock back to the base clock.
func TestSkipTimeSurvivesRestartUntilReset(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	_, err := e.admin.SkipTime(e.ctx, 2*time.Hour)
	e.must(err)
	_, err = e.admin.SkipTime(e.ctx, 30*time.Minute)
	e.must(err)
	e.restart()
	lt, err := e.admin.Time(e.ctx)
	e.must(err)
	if lt.Offset != 150*time.Minute || !lt.Now.Equal(t0.Add(150*time.Minute)) {
		t.Errorf("after a restart: %+v, want offset 2h30m", lt)
	}
	e.must(e.admin.Reset(e.ctx))
	e.restart()
	lt, err = e.admin.Time(e.ctx)
	e.must(err)
	if lt.Offset != 0 || !lt.Now.Equal(lt.Wall) || lt.OffsetText != "0s" {
		t.Errorf("after a reset and a restart: %+v, want lab time = wall time", lt)
	}
}

// TestWaitTimeChangeFollowsSkips: the long poll Karpenter's lab clock follows answers at
// once when the caller's offset is stale, waits while it is current, and wakes with the new
// offset when a skip moves the clock.
func TestWaitTimeChangeFollowsSkips(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.BootDelay = -1 })
	lt, err := e.admin.WaitTimeChange(e.ctx, time.Hour) // stale: the clock has no lead
	e.must(err)
	if lt.Offset != 0 {
		t.Fatalf("stale wait answered offset %s, want 0", lt.Offset)
	}
	got := make(chan fakeec2.LabTime, 1)
	go func() {
		lt, err := e.admin.WaitTimeChange(e.ctx, 0)
		if err != nil {
			t.Error(err)
		}
		got <- lt
	}()
	select {
	case lt := <-got:
		t.Fatalf("a current wait answered before any skip: %+v", lt)
	case <-time.After(300 * time.Millisecond):
	}
	_, err = e.admin.SkipTime(e.ctx, 5*time.Minute)
	e.must(err)
	select {
	case lt := <-got:
		if lt.Offset != 5*time.Minute {
			t.Errorf("the wait woke with offset %s, want 5m", lt.Offset)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not wake on the skip")
	}
	resp, err := http.Get(e.url + "/_karplab/time?waitChangeFrom=soon")
	e.must(err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("waitChangeFrom=soon: %s, want 400", resp.Status)
	}
}
