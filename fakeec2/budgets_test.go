package fakeec2_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/budgets"
	btypes "github.com/aws/aws-sdk-go-v2/service/budgets/types"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
	labbudgets "github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

const labAccount = "123456789012"

// newBudgetsClient is the real aws-sdk-go-v2 Budgets client pointed at the emulator.
func newBudgetsClient(t testing.TB, url, accessKey string) *budgets.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("eu-west-2"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(accessKey, "lab-secret", "")))
	if err != nil {
		t.Fatalf("loading aws config: %v", err)
	}
	return budgets.NewFromConfig(cfg, func(o *budgets.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = fakeec2.NewHTTPClient()
	})
}

func budgetAlert(typ btypes.NotificationType, percent float64) btypes.NotificationWithSubscribers {
	return btypes.NotificationWithSubscribers{
		Notification: &btypes.Notification{NotificationType: typ, ComparisonOperator: btypes.ComparisonOperatorGreaterThan,
			Threshold: percent, ThresholdType: btypes.ThresholdTypePercentage},
		Subscribers: []btypes.Subscriber{{SubscriptionType: btypes.SubscriptionTypeEmail, Address: aws.String("platform@ziba.example")}},
	}
}

func amount(t *testing.T, s *btypes.Spend) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(aws.ToString(s.Amount), 64)
	if err != nil || aws.ToString(s.Unit) != "USD" {
		t.Fatalf("spend %s %s: %v", aws.ToString(s.Amount), aws.ToString(s.Unit), err)
	}
	return f
}

// TestBudgetAlertsOnRunawayDemand stages the runaway-demand lab's cost side with the real
// Budgets and EC2 clients: a daily $5 budget on the ziba-general node pool's tag with a
// FORECASTED 100% and an ACTUAL 80% alert. One node keeps the forecast under the limit;
// untagged machines do not count; four more nodes push the burn rate so the forecast
// crosses at once, on the ledger change alone, long before the actual spend has; hours
// later the actual spend crosses 80%. The audit trail and the admin API show both
// alerts, and they survive a restart.
func TestBudgetAlertsOnRunawayDemand(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	bc := newBudgetsClient(t, e.url, "AKIACOURSELEARNER")
	subnets, _, amd64, _ := e.discover()
	const name = "ziba-general-daily"
	_, err := bc.CreateBudget(e.ctx, &budgets.CreateBudgetInput{AccountId: aws.String(labAccount),
		Budget: &btypes.Budget{BudgetName: aws.String(name), BudgetType: btypes.BudgetTypeCost, TimeUnit: btypes.TimeUnitDaily,
			BudgetLimit: &btypes.Spend{Amount: aws.String("5.00"), Unit: aws.String("USD")},
			CostFilters: map[string][]string{"TagKeyValue": {"user:karpenter.sh/nodepool$ziba-general"}}},
		NotificationsWithSubscribers: []btypes.NotificationWithSubscribers{
			budgetAlert(btypes.NotificationTypeForecasted, 100), budgetAlert(btypes.NotificationTypeActual, 80)},
	})
	e.must(err)
	states := func() (forecast, actual string) {
		t.Helper()
		out, err := bc.DescribeNotificationsForBudget(e.ctx, &budgets.DescribeNotificationsForBudgetInput{
			AccountId: aws.String(labAccount), BudgetName: aws.String(name)})
		e.must(err)
		return string(out.Notifications[0].NotificationState), string(out.Notifications[1].NotificationState)
	}
	pool := map[string]string{"karpenter.sh/nodepool": "ziba-general"}

	e.launch("m6i.large", amd64, subnets[0], 1, pool)
	e.launch("c6i.large", amd64, subnets[1], 6, nil) // not the pool's: outside the filter
	e.clock.Advance(time.Minute)
	if f, a := states(); f != "OK" || a != "OK" {
		t.Fatalf("one node: forecast %s, actual %s; want OK OK", f, a)
	}

	e.launch("m6i.large", amd64, subnets[0], 4, pool) // the runaway autoscaler
	var fired []trail.AuditEvent
	for deadline := time.Now().Add(5 * time.Second); len(fired) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		fired, err = e.admin.Audit(e.ctx, trail.AuditQuery{Service: "budgets", Action: labbudgets.ActionAlert})
		e.must(err)
	}
	if len(fired) != 1 || fired[0].Parameters["notificationType"] != "FORECASTED" || !fired[0].Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after the launches, with no read of the budget: alerts %+v, want the FORECASTED one at %s", fired, t0.Add(time.Minute))
	}
	if f, a := states(); f != "ALARM" || a != "OK" {
		t.Fatalf("five nodes: forecast %s, actual %s; want ALARM OK", f, a)
	}

	// Half an hour at a time until the actual spend crosses 80% ($4.00).
	for i := 0; i < 40; i++ {
		if _, a := states(); a == "ALARM" {
			break
		}
		e.clock.Advance(30 * time.Minute)
	}
	out, err := bc.DescribeBudget(e.ctx, &budgets.DescribeBudgetInput{AccountId: aws.String(labAccount), BudgetName: aws.String(name)})
	e.must(err)
	actual := amount(t, out.Budget.CalculatedSpend.ActualSpend)
	byPool, err := e.admin.CostByTag(e.ctx, "karpenter.sh/nodepool")
	e.must(err)
	for _, g := range byPool.Groups {
		if g.Value == "ziba-general" && math.Abs(g.USD-actual) > 1e-5 {
			t.Errorf("budget's actual spend %g, the ledger's for the pool %g", actual, g.USD)
		}
	}

	list, err := e.admin.Budgets(e.ctx)
	e.must(err)
	if len(list) != 1 || len(list[0].Alerts) != 2 {
		t.Fatalf("admin budgets: %+v, want one budget with two alerts", list)
	}
	fc, ac := list[0].Alerts[0], list[0].Alerts[1]
	t.Logf("FORECASTED at %s: actual $%g, forecast $%g; ACTUAL at %s: actual $%g at $%g/h", fc.Time.Format(time.TimeOnly),
		fc.ActualUSD, fc.ForecastUSD, ac.Time.Format(time.TimeOnly), ac.ActualUSD, ac.USDPerHour)
	if fc.NotificationType != "FORECASTED" || ac.NotificationType != "ACTUAL" || !fc.Time.Before(ac.Time) {
		t.Fatalf("alerts %+v, want FORECASTED then ACTUAL", list[0].Alerts)
	}
	// What a grader proves: the forecast alert fired while the spend was far under the
	// limit, and the 80% alert within one step (30 min at the burn rate) of the crossing.
	if fc.ActualUSD >= 1 || fc.ForecastUSD <= 5 || ac.ActualUSD <= 4 || ac.ActualUSD > 4+ac.USDPerHour/2 || ac.ActualUSD >= 5 {
		t.Errorf("alerts' spend: forecasted at actual %g / forecast %g, actual at %g (%g $/h)", fc.ActualUSD, fc.ForecastUSD, ac.ActualUSD, ac.USDPerHour)
	}
	events, err := e.admin.Audit(e.ctx, trail.AuditQuery{Service: "budgets", Action: labbudgets.ActionAlert})
	e.must(err)
	if len(events) != 2 || events[1].Caller != labbudgets.Caller || events[1].Parameters["budgetName"] != name ||
		events[1].Parameters["notificationType"] != "ACTUAL" || events[1].Parameters["thresholdUSD"] != "4" ||
		!events[1].Time.Equal(ac.Time) || events[1].Parameters["actualSpend"] != strconv.FormatFloat(ac.ActualUSD, 'f', -1, 64) {
		t.Errorf("audit of the alerts: %+v", events)
	}

	e.restart()
	bc = newBudgetsClient(t, e.url, "AKIACOURSELEARNER")
	if f, a := states(); f != "ALARM" || a != "ALARM" {
		t.Errorf("after a restart: forecast %s, actual %s; want ALARM ALARM", f, a)
	}
	list, err = e.admin.Budgets(e.ctx)
	e.must(err)
	if len(list) != 1 || len(list[0].Alerts) != 2 || !list[0].Alerts[1].Time.Equal(ac.Time) {
		t.Errorf("alerts after a restart: %+v", list)
	}
}

// TestBudgetsThroughTheRouter checks what only the account's router decides: the lab's
// account, the policy, the audit trail of the calls, and the admin API's set and delete.
func TestBudgetsThroughTheRouter(t *testing.T) {
	e := newEnv(t)
	bc := newBudgetsClient(t, e.url, "AKIACOURSELEARNER")
	_, err := bc.DescribeBudgets(e.ctx, &budgets.DescribeBudgetsInput{AccountId: aws.String("210987654321")})
	if code := errCode(err); code != "AccessDeniedException" {
		t.Errorf("another account's budgets: %s, want AccessDeniedException", code)
	}
	_, err = bc.DescribeBudget(e.ctx, &budgets.DescribeBudgetInput{AccountId: aws.String(labAccount), BudgetName: aws.String("none")})
	if code := errCode(err); code != "NotFoundException" {
		t.Errorf("a missing budget: %s, want NotFoundException", code)
	}
	b, err := e.admin.SetBudget(e.ctx, labbudgets.Spec{Name: "lab", LimitUSD: 2.5, TimeUnit: "MONTHLY",
		Notifications: []labbudgets.NotificationSpec{{Type: "ACTUAL", Threshold: 50}}})
	e.must(err)
	if b.PeriodStart != time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) || b.Notifications[0].ThresholdUSD != 1.25 || b.Notifications[0].State != "OK" {
		t.Errorf("SetBudget: %+v", b)
	}
	out, err := bc.DescribeBudgets(e.ctx, &budgets.DescribeBudgetsInput{AccountId: aws.String(labAccount)})
	e.must(err)
	if len(out.Budgets) != 1 || aws.ToString(out.Budgets[0].BudgetLimit.Amount) != "2.5" || out.Budgets[0].TimeUnit != btypes.TimeUnitMonthly {
		t.Errorf("DescribeBudgets of the admin's budget: %+v", out.Budgets)
	}
	if _, err := e.admin.SetBudget(e.ctx, labbudgets.Spec{Name: "bad", LimitUSD: 1, TimeUnit: "ANNUALLY"}); err == nil {
		t.Error("SetBudget with TimeUnit ANNUALLY: no error")
	}
	e.must(e.admin.DeleteBudget(e.ctx, "lab"))
	if err := e.admin.DeleteBudget(e.ctx, "lab"); err == nil {
		t.Error("DeleteBudget twice: no error")
	}
	calls, err := e.admin.Audit(e.ctx, trail.AuditQuery{Service: "budgets"})
	e.must(err)
	if len(calls) != 3 || calls[0].ErrorCode != "AccessDeniedException" || calls[0].Caller != "AKIACOURSELEARNER" ||
		calls[1].ErrorCode != "NotFoundException" || calls[2].Action != "DescribeBudgets" {
		t.Errorf("audit of the Budgets calls: %+v", calls)
	}
	e.must(e.srv.SetPolicy(authz.Policy{Statements: []authz.PolicyStatement{{Sid: "no-budgets", Callers: []string{"AKIACOURSELEARNER"},
		DenyActions: []string{"budgets:*"}}}}))
	_, err = bc.DescribeBudgets(e.ctx, &budgets.DescribeBudgetsInput{AccountId: aws.String(labAccount)})
	if code := errCode(err); code != "AccessDeniedException" {
		t.Errorf("budgets under a policy that denies them: %s, want AccessDeniedException", code)
	}
}
