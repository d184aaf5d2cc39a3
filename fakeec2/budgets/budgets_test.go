package budgets_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/budgets"
	"github.com/aws/aws-sdk-go-v2/service/budgets/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/budgets"
)

const acct = "123456789012"

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// ledger is a stand-in for fakeec2's billing: resources billed at a price from a start.
type ledger struct {
	mu  sync.Mutex
	now time.Time
	res []resource
}

type resource struct {
	price float64
	start time.Time
	tags  map[string]string
}

func (l *ledger) clock() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now
}

func (l *ledger) advance(d time.Duration) {
	l.mu.Lock()
	l.now = l.now.Add(d)
	l.mu.Unlock()
}

func (l *ledger) add(price float64, tags map[string]string) {
	l.mu.Lock()
	l.res = append(l.res, resource{price: price, start: l.now, tags: tags})
	l.mu.Unlock()
}

func (l *ledger) cost(q budgets.CostQuery) budgets.Cost {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c budgets.Cost
	for _, r := range l.res {
		if !q.Match(r.tags) {
			continue
		}
		from := r.start
		if from.Before(q.Start) {
			from = q.Start
		}
		c.ActualUSD += r.price * q.Now.Sub(from).Hours()
		c.ForecastUSD += r.price * q.End.Sub(from).Hours()
		c.USDPerHour += r.price
	}
	return c
}

type fixture struct {
	host   *account.MemoryHost
	ledger *ledger
	svc    *budgets.Service
	client *sdk.Client
	alerts []budgets.Alert
}

// start serves Budgets over a memory host whose clock and ledger the test drives; a
// second start over the same fixture's store models a restart.
func start(t *testing.T, f *fixture) *fixture {
	t.Helper()
	if f == nil {
		f = &fixture{host: account.NewMemoryHost(), ledger: &ledger{now: t0}}
		f.host.Clock = f.ledger.clock
	}
	svc, err := budgets.New(f.host, budgets.Options{Cost: f.ledger.cost, OnAlert: func(a budgets.Alert) { f.alerts = append(f.alerts, a) }})
	if err != nil {
		t.Fatalf("budgets.New: %v", err)
	}
	f.svc = svc
	f.client = sdk.NewFromConfig(accounttest.Config(t, accounttest.Start(t, svc, f.host), accounttest.AccessKey))
	return f
}

func costBudget(name, amount string, unit types.TimeUnit) *types.Budget {
	return &types.Budget{BudgetName: aws.String(name), BudgetType: types.BudgetTypeCost, TimeUnit: unit,
		BudgetLimit: &types.Spend{Amount: aws.String(amount), Unit: aws.String("USD")}}
}

func alert(typ types.NotificationType, threshold float64) types.NotificationWithSubscribers {
	return types.NotificationWithSubscribers{
		Notification: &types.Notification{NotificationType: typ, ComparisonOperator: types.ComparisonOperatorGreaterThan,
			Threshold: threshold, ThresholdType: types.ThresholdTypePercentage},
		Subscribers: []types.Subscriber{{SubscriptionType: types.SubscriptionTypeEmail, Address: aws.String("platform@ziba.example")}},
	}
}

func TestBudgetCRUD(t *testing.T) {
	f := start(t, nil)
	ctx := context.Background()
	for i := range 5 {
		_, err := f.client.CreateBudget(ctx, &sdk.CreateBudgetInput{AccountId: aws.String(acct),
			Budget: costBudget(fmt.Sprintf("team-%d", i), "10", types.TimeUnitMonthly)})
		if err != nil {
			t.Fatalf("CreateBudget: %v", err)
		}
	}
	var names []string
	p := sdk.NewDescribeBudgetsPaginator(f.client, &sdk.DescribeBudgetsInput{AccountId: aws.String(acct), MaxResults: aws.Int32(2)})
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("DescribeBudgets: %v", err)
		}
		pages++
		for _, b := range out.Budgets {
			names = append(names, aws.ToString(b.BudgetName))
		}
	}
	if want := []string{"team-0", "team-1", "team-2", "team-3", "team-4"}; pages != 3 || !cmp.Equal(want, names) {
		t.Errorf("paginated %d pages of %v, want 3 pages of %v", pages, names, want)
	}

	_, err := f.client.UpdateBudget(ctx, &sdk.UpdateBudgetInput{AccountId: aws.String(acct), NewBudget: costBudget("team-1", "25.50", types.TimeUnitDaily)})
	if err != nil {
		t.Fatalf("UpdateBudget: %v", err)
	}
	out, err := f.client.DescribeBudget(ctx, &sdk.DescribeBudgetInput{AccountId: aws.String(acct), BudgetName: aws.String("team-1")})
	if err != nil {
		t.Fatalf("DescribeBudget: %v", err)
	}
	b := out.Budget
	got := fmt.Sprintf("%s %s %s %s %v-%v actual=%s", aws.ToString(b.BudgetLimit.Amount), aws.ToString(b.BudgetLimit.Unit), b.TimeUnit,
		b.BudgetType, b.TimePeriod.Start.UTC(), b.TimePeriod.End.UTC().Year(), aws.ToString(b.CalculatedSpend.ActualSpend.Amount))
	if want := "25.50 USD DAILY COST 2026-11-01 00:00:00 +0000 UTC-2087 actual=0"; got != want {
		t.Errorf("updated budget: %s, want %s", got, want)
	}
	if b.CostTypes == nil || !aws.ToBool(b.CostTypes.IncludeTax) || aws.ToBool(b.CostTypes.UseBlended) {
		t.Errorf("CostTypes %+v, want AWS's defaults", b.CostTypes)
	}
	if _, err := f.client.DeleteBudget(ctx, &sdk.DeleteBudgetInput{AccountId: aws.String(acct), BudgetName: aws.String("team-1")}); err != nil {
		t.Fatalf("DeleteBudget: %v", err)
	}
	_, err = f.client.DescribeBudget(ctx, &sdk.DescribeBudgetInput{AccountId: aws.String(acct), BudgetName: aws.String("team-1")})
	if code := accounttest.APIErrorCode(err); code != "NotFoundException" {
		t.Errorf("DescribeBudget after delete: %s, want NotFoundException", code)
	}
}

func TestBudgetErrors(t *testing.T) {
	f := start(t, nil)
	ctx := context.Background()
	create := func(b *types.Budget, account string) error {
		_, err := f.client.CreateBudget(ctx, &sdk.CreateBudgetInput{AccountId: aws.String(account), Budget: b})
		return err
	}
	if err := create(costBudget("lab", "5", types.TimeUnitDaily), acct); err != nil {
		t.Fatal(err)
	}
	noLimit := costBudget("no-limit", "5", types.TimeUnitDaily)
	noLimit.BudgetLimit = nil
	usage := costBudget("usage", "5", types.TimeUnitDaily)
	usage.BudgetType = types.BudgetTypeUsage
	euro := costBudget("euro", "5", types.TimeUnitDaily)
	euro.BudgetLimit.Unit = aws.String("EUR")
	badTag := costBudget("bad-tag", "5", types.TimeUnitDaily)
	badTag.CostFilters = map[string][]string{"TagKeyValue": {"user:karpenter.sh/nodepool"}}
	service := costBudget("service", "5", types.TimeUnitDaily)
	service.CostFilters = map[string][]string{"Service": {"Amazon Elastic Compute Cloud - Compute"}}
	page := func(token string) error {
		_, err := f.client.DescribeBudgets(ctx, &sdk.DescribeBudgetsInput{AccountId: aws.String(acct), NextToken: aws.String(token)})
		return err
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "duplicate", err: create(costBudget("lab", "5", types.TimeUnitDaily), acct), want: "DuplicateRecordException"},
		{name: "another account", err: create(costBudget("x", "5", types.TimeUnitDaily), "210987654321"), want: "AccessDeniedException"},
		{name: "malformed account", err: create(costBudget("x", "5", types.TimeUnitDaily), "12345"), want: "InvalidParameterException"},
		{name: "quarterly", err: create(costBudget("q", "5", types.TimeUnitQuarterly), acct), want: "InvalidParameterException"},
		{name: "no limit", err: create(noLimit, acct), want: "InvalidParameterException"},
		{name: "usage budget", err: create(usage, acct), want: "InvalidParameterException"},
		{name: "not USD", err: create(euro, acct), want: "InvalidParameterException"},
		{name: "amount not a number", err: create(costBudget("nan", "five", types.TimeUnitDaily), acct), want: "InvalidParameterException"},
		{name: "name with a colon", err: create(costBudget("a:b", "5", types.TimeUnitDaily), acct), want: "InvalidParameterException"},
		{name: "tag filter without $", err: create(badTag, acct), want: "InvalidParameterException"},
		{name: "service filter", err: create(service, acct), want: "InvalidParameterException"},
		{name: "bad token", err: page("bm9wZQ"), want: "InvalidNextTokenException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := accounttest.APIErrorCode(tt.err); got != tt.want {
				t.Errorf("got %s (%v), want %s", got, tt.err, tt.want)
			}
		})
	}
	_, err := f.client.UpdateBudget(ctx, &sdk.UpdateBudgetInput{AccountId: aws.String(acct), NewBudget: costBudget("none", "1", types.TimeUnitDaily)})
	if code := accounttest.APIErrorCode(err); code != "NotFoundException" {
		t.Errorf("UpdateBudget of a missing budget: %s", code)
	}
	_, err = f.client.DeleteBudget(ctx, &sdk.DeleteBudgetInput{AccountId: aws.String(acct), BudgetName: aws.String("none")})
	if code := accounttest.APIErrorCode(err); code != "NotFoundException" {
		t.Errorf("DeleteBudget of a missing budget: %s", code)
	}
}

func TestNotifications(t *testing.T) {
	f := start(t, nil)
	ctx := context.Background()
	_, err := f.client.CreateBudget(ctx, &sdk.CreateBudgetInput{AccountId: aws.String(acct), Budget: costBudget("lab", "5", types.TimeUnitDaily),
		NotificationsWithSubscribers: []types.NotificationWithSubscribers{alert(types.NotificationTypeActual, 80)}})
	if err != nil {
		t.Fatal(err)
	}
	forecast := alert(types.NotificationTypeForecasted, 100)
	forecast.Notification.ThresholdType = ""
	add := func(n types.NotificationWithSubscribers, budget string) error {
		_, err := f.client.CreateNotification(ctx, &sdk.CreateNotificationInput{AccountId: aws.String(acct), BudgetName: aws.String(budget),
			Notification: n.Notification, Subscribers: n.Subscribers})
		return err
	}
	if err := add(forecast, "lab"); err != nil {
		t.Fatalf("CreateNotification: %v", err)
	}
	equal := alert(types.NotificationTypeActual, 50)
	equal.Notification.ComparisonOperator = types.ComparisonOperatorEqualTo
	for name, tt := range map[string]struct {
		err  error
		want string
	}{
		"duplicate":      {add(forecast, "lab"), "DuplicateRecordException"},
		"missing budget": {add(forecast, "none"), "NotFoundException"},
		"EQUAL_TO":       {add(equal, "lab"), "InvalidParameterException"},
	} {
		if got := accounttest.APIErrorCode(tt.err); got != tt.want {
			t.Errorf("CreateNotification %s: %s (%v), want %s", name, got, tt.err, tt.want)
		}
	}
	list := func() []string {
		out, err := f.client.DescribeNotificationsForBudget(ctx, &sdk.DescribeNotificationsForBudgetInput{AccountId: aws.String(acct), BudgetName: aws.String("lab")})
		if err != nil {
			t.Fatalf("DescribeNotificationsForBudget: %v", err)
		}
		var got []string
		for _, n := range out.Notifications {
			got = append(got, fmt.Sprintf("%s %s %g %q %s", n.NotificationType, n.ComparisonOperator, n.Threshold, n.ThresholdType, n.NotificationState))
		}
		return got
	}
	want := []string{`ACTUAL GREATER_THAN 80 "PERCENTAGE" OK`, `FORECASTED GREATER_THAN 100 "" OK`}
	if d := cmp.Diff(want, list()); d != "" {
		t.Errorf("notifications (-want +got):\n%s", d)
	}
	subs, err := f.client.DescribeSubscribersForNotification(ctx, &sdk.DescribeSubscribersForNotificationInput{AccountId: aws.String(acct),
		BudgetName: aws.String("lab"), Notification: forecast.Notification})
	if err != nil || len(subs.Subscribers) != 1 || aws.ToString(subs.Subscribers[0].Address) != "platform@ziba.example" {
		t.Errorf("DescribeSubscribersForNotification: %+v, %v", subs, err)
	}
	if _, err := f.client.DeleteNotification(ctx, &sdk.DeleteNotificationInput{AccountId: aws.String(acct), BudgetName: aws.String("lab"),
		Notification: forecast.Notification}); err != nil {
		t.Fatalf("DeleteNotification: %v", err)
	}
	_, err = f.client.DeleteNotification(ctx, &sdk.DeleteNotificationInput{AccountId: aws.String(acct), BudgetName: aws.String("lab"),
		Notification: forecast.Notification})
	if code := accounttest.APIErrorCode(err); code != "NotFoundException" {
		t.Errorf("DeleteNotification twice: %s", code)
	}
	if d := cmp.Diff(want[:1], list()); d != "" {
		t.Errorf("notifications after delete (-want +got):\n%s", d)
	}
}

// TestAlerts follows one day of spend: the forecast crosses the limit as soon as the burn
// rate is high enough, long before the actual spend crosses 80%; a new day puts both
// back to OK; the history survives a restart.
func TestAlerts(t *testing.T) {
	f := start(t, nil)
	ctx := context.Background()
	_, err := f.client.CreateBudget(ctx, &sdk.CreateBudgetInput{AccountId: aws.String(acct), Budget: costBudget("lab", "5", types.TimeUnitDaily),
		NotificationsWithSubscribers: []types.NotificationWithSubscribers{alert(types.NotificationTypeActual, 80), alert(types.NotificationTypeForecasted, 100)}})
	if err != nil {
		t.Fatal(err)
	}
	states := func() string {
		b, err := f.svc.Get("lab")
		if err != nil {
			t.Fatal(err)
		}
		return b.Notifications[0].State + " " + b.Notifications[1].State
	}
	f.ledger.add(0.2, nil) // 15 h left today: forecast 3.00
	f.ledger.advance(time.Hour)
	if got := states(); got != "OK OK" {
		t.Fatalf("at 0.2 $/h: %s, want OK OK", got)
	}
	f.ledger.add(0.2, nil) // 14 h left: forecast 0.2 + 0.4*14 = 5.80
	if got := states(); got != "OK ALARM" {
		t.Fatalf("at 0.4 $/h: %s, want the forecast in ALARM", got)
	}
	f.ledger.advance(9 * time.Hour) // actual 0.2 + 0.4*9 = 3.80: not yet 80% (4.00)
	if got := states(); got != "OK ALARM" {
		t.Fatalf("at 3.80 $: %s", got)
	}
	f.ledger.advance(time.Hour) // 4.20
	if got := states(); got != "ALARM ALARM" {
		t.Fatalf("at 4.20 $: %s, want both in ALARM", got)
	}
	if len(f.alerts) != 2 || f.alerts[0].NotificationType != "FORECASTED" || f.alerts[1].NotificationType != "ACTUAL" {
		t.Fatalf("alerts %+v, want FORECASTED then ACTUAL", f.alerts)
	}
	fc, ac := f.alerts[0], f.alerts[1]
	if !fc.Time.Equal(t0.Add(time.Hour)) || fc.ActualUSD != 0.2 || fc.ForecastUSD != 5.8 || fc.ThresholdUSD != 5 ||
		!ac.Time.Equal(t0.Add(11*time.Hour)) || ac.ActualUSD != 4.2 || ac.ThresholdUSD != 4 {
		t.Errorf("alerts %+v", f.alerts)
	}

	f.ledger.advance(5 * time.Hour) // the next day: spend starts again
	if got := states(); got != "OK ALARM" {
		t.Errorf("next day: %s, want ACTUAL OK and the forecast (0.4 $/h for 24 h) in ALARM again", got)
	}
	f2 := start(t, &fixture{host: f.host, ledger: f.ledger})
	b, err := f2.svc.Get("lab")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Alerts) != 3 || !b.Alerts[1].Time.Equal(ac.Time) || b.Notifications[1].State != "ALARM" {
		t.Errorf("after a restart: %+v", b)
	}
	// Raising the limit puts the notifications back to OK.
	if _, err := f2.svc.Put(budgets.Spec{Name: "lab", LimitUSD: 50, TimeUnit: "DAILY", Notifications: []budgets.NotificationSpec{
		{Type: "ACTUAL", Threshold: 80}, {Type: "FORECASTED", Threshold: 100}}}); err != nil {
		t.Fatal(err)
	}
	b, _ = f2.svc.Get("lab")
	if b.Notifications[0].State != "OK" || b.Notifications[1].State != "OK" || len(b.Alerts) != 3 {
		t.Errorf("after raising the limit: %+v", b)
	}
}

func TestTagFilter(t *testing.T) {
	f := start(t, nil)
	_, err := f.svc.Put(budgets.Spec{Name: "general", LimitUSD: 1, CostFilters: map[string][]string{
		"TagKeyValue": {"user:karpenter.sh/nodepool$ziba-general"}}})
	if err != nil {
		t.Fatal(err)
	}
	f.ledger.add(1, map[string]string{"karpenter.sh/nodepool": "ziba-general"})
	f.ledger.add(10, map[string]string{"karpenter.sh/nodepool": "batch"})
	f.ledger.add(100, nil)
	f.ledger.advance(30 * time.Minute)
	b, err := f.svc.Get("general")
	if err != nil {
		t.Fatal(err)
	}
	if b.ActualUSD != 0.5 || b.USDPerHour != 1 || b.ForecastUSD != 15 {
		t.Errorf("tag-filtered spend: actual %g, rate %g, forecast %g; want 0.5, 1, 15", b.ActualUSD, b.USDPerHour, b.ForecastUSD)
	}
}

// TestEvaluateSpanDatesEachCrossing walks a skipped day: each alert fires at the step that
// crossed, with the spend then, not all at once with the day's total; an evaluation waiting
// for the walk runs after it.
func TestBudgetEvaluateSpanDatesEachCrossing(t *testing.T) {
	f := start(t, nil)
	_, err := f.svc.Put(budgets.Spec{Name: "lab", LimitUSD: 10, TimeUnit: "MONTHLY", Notifications: []budgets.NotificationSpec{
		{Type: "ACTUAL", Threshold: 50}, {Type: "ACTUAL", Threshold: 80}}})
	if err != nil {
		t.Fatal(err)
	}
	f.ledger.add(1, nil) // 1 $/h: 50% after 5h, 80% after 8h
	from, to := t0, t0.Add(24*time.Hour)
	waited := make(chan error, 1)
	alerts, err := f.svc.EvaluateSpan(from, to, time.Minute, func() error {
		f.ledger.advance(24 * time.Hour)
		go func() { waited <- f.svc.Evaluate() }() // held until the walk is done
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range alerts {
		got = append(got, fmt.Sprintf("%g%% at +%s, actual %g", a.Threshold, a.Time.Sub(from), a.ActualUSD))
	}
	want := []string{"50% at +5h1m0s, actual 5.016667", "80% at +8h1m0s, actual 8.016667"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("alerts of the walk (-want +got):\n%s", diff)
	}
	if len(f.alerts) != 2 {
		t.Errorf("OnAlert told of %d alerts, want 2", len(f.alerts))
	}
	if _, err := f.svc.EvaluateSpan(from, to, 0, nil); err == nil {
		t.Error("a walk with step 0 was taken")
	}
}
