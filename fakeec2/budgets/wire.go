package budgets

import (
	"encoding/json"
	"regexp"
	"strconv"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

// The wire shapes of the actions, as aws-sdk-go-v2's budgets schemas name their members.

type spendJSON struct {
	Amount *string `json:",omitempty"`
	Unit   *string `json:",omitempty"`
}

type timePeriodJSON struct {
	Start *float64 `json:",omitempty"` // epoch seconds
	End   *float64 `json:",omitempty"`
}

type calculatedSpendJSON struct {
	ActualSpend     *spendJSON `json:",omitempty"`
	ForecastedSpend *spendJSON `json:",omitempty"`
}

type budgetJSON struct {
	BudgetName          *string              `json:",omitempty"`
	BudgetLimit         *spendJSON           `json:",omitempty"`
	PlannedBudgetLimits map[string]spendJSON `json:",omitempty"`
	CostFilters         map[string][]string  `json:",omitempty"`
	CostTypes           *CostTypes           `json:",omitempty"`
	TimeUnit            *string              `json:",omitempty"`
	TimePeriod          *timePeriodJSON      `json:",omitempty"`
	CalculatedSpend     *calculatedSpendJSON `json:",omitempty"`
	BudgetType          *string              `json:",omitempty"`
	LastUpdatedTime     *float64             `json:",omitempty"`
	AutoAdjustData      json.RawMessage      `json:",omitempty"`
	FilterExpression    json.RawMessage      `json:",omitempty"`
	Metrics             []string             `json:",omitempty"`
	BillingViewArn      *string              `json:",omitempty"`
}

type notificationJSON struct {
	NotificationType   *string  `json:",omitempty"`
	ComparisonOperator *string  `json:",omitempty"`
	Threshold          *float64 `json:",omitempty"`
	ThresholdType      *string  `json:",omitempty"`
	NotificationState  *string  `json:",omitempty"`
}

type subscriberJSON struct {
	SubscriptionType *string `json:",omitempty"`
	Address          *string `json:",omitempty"`
}

type withSubscribersJSON struct {
	Notification *notificationJSON
	Subscribers  []subscriberJSON
}

type createBudgetIn struct {
	AccountId                    *string
	Budget                       *budgetJSON
	NotificationsWithSubscribers []withSubscribersJSON
}

type budgetNameIn struct {
	AccountId, BudgetName *string
}

type describeBudgetsIn struct {
	AccountId  *string
	MaxResults *int
	NextToken  *string
}

type describeBudgetOut struct{ Budget budgetJSON }

type describeBudgetsOut struct {
	Budgets   []budgetJSON
	NextToken *string `json:",omitempty"`
}

type updateBudgetIn struct {
	AccountId *string
	NewBudget *budgetJSON
}

type notificationIn struct {
	AccountId, BudgetName *string
	Notification          *notificationJSON
	Subscribers           []subscriberJSON
	MaxResults            *int
	NextToken             *string
}

type notificationsOut struct {
	Notifications []notificationJSON
	NextToken     *string `json:",omitempty"`
}

type subscribersOut struct {
	Subscribers []subscriberJSON
	NextToken   *string `json:",omitempty"`
}

type empty struct{}

var accountIDPattern = regexp.MustCompile(`^\d{12}$`)

func required[T any](member string, v *T) *account.Error {
	if v == nil {
		return invalid("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", member)
	}
	return nil
}

// authorize checks the account and the policy: another account's budgets are not the
// caller's to see (AccessDeniedException, as AWS answers), nor are the lab's where the
// policy says so.
func (s *Service) authorize(c *account.Call, accountID *string, modify bool, budget string) *account.Error {
	if e := required("accountId", accountID); e != nil {
		return e
	}
	if !accountIDPattern.MatchString(*accountID) {
		return invalid("Invalid AccountId %q: an AWS account ID is 12 digits.", *accountID)
	}
	action := "budgets:ViewBudget"
	if modify {
		action = "budgets:ModifyBudget"
	}
	if budget == "" {
		budget = "*"
	}
	resource := "arn:aws:budgets::" + *accountID + ":budget/" + budget
	reason := ""
	if *accountID != s.host.AccountID() {
		reason = "account " + *accountID + " is not the lab's account " + s.host.AccountID()
	} else {
		reason = s.host.Authorize(c.Caller, action, resource)
	}
	if reason != "" {
		c.DenialReason = reason
		return account.BadRequest("AccessDeniedException", "%s", account.NotAuthorizedMessage(s.host, c.Caller, action, resource))
	}
	return nil
}

// budgetFrom reads a wire Budget; the lab refuses what it cannot honour, by name.
func budgetFrom(b *budgetJSON) (budgetInput, *account.Error) {
	var in budgetInput
	if e := required("budgetName", b.BudgetName); e != nil {
		return in, e
	}
	if e := required("timeUnit", b.TimeUnit); e != nil {
		return in, e
	}
	if e := required("budgetType", b.BudgetType); e != nil {
		return in, e
	}
	switch {
	case len(b.PlannedBudgetLimits) > 0:
		return in, invalid("PlannedBudgetLimits are not supported by the lab's Budgets: set BudgetLimit.")
	case present(b.AutoAdjustData):
		return in, invalid("AutoAdjustData is not supported by the lab's Budgets: set BudgetLimit.")
	case present(b.FilterExpression):
		return in, invalid("FilterExpression is not supported by the lab's Budgets: filter with CostFilters TagKeyValue.")
	case b.BillingViewArn != nil:
		return in, invalid("BillingViewArn is not supported by the lab's Budgets.")
	}
	in = budgetInput{Name: *b.BudgetName, BudgetType: *b.BudgetType, TimeUnit: *b.TimeUnit, CostFilters: b.CostFilters, CostTypes: b.CostTypes}
	if l := b.BudgetLimit; l != nil {
		if e := required("budgetLimit.amount", l.Amount); e != nil {
			return in, e
		}
		if e := required("budgetLimit.unit", l.Unit); e != nil {
			return in, e
		}
		in.Amount, in.Unit = *l.Amount, *l.Unit
	}
	if p := b.TimePeriod; p != nil {
		in.Start, in.End = epoch(p.Start), epoch(p.End)
	}
	return in, nil
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func epoch(f *float64) *time.Time {
	if f == nil {
		return nil
	}
	t := time.Unix(0, int64(*f*1e9)).UTC()
	return &t
}

func notificationFrom(n *notificationJSON, subs []subscriberJSON, needSubscriber bool) (*notification, *account.Error) {
	if e := required("notification", n); e != nil {
		return nil, e
	}
	if e := required("notification.notificationType", n.NotificationType); e != nil {
		return nil, e
	}
	if e := required("notification.comparisonOperator", n.ComparisonOperator); e != nil {
		return nil, e
	}
	if e := required("notification.threshold", n.Threshold); e != nil {
		return nil, e
	}
	sp := NotificationSpec{Type: *n.NotificationType, ComparisonOperator: *n.ComparisonOperator, Threshold: *n.Threshold}
	if n.ThresholdType != nil {
		sp.ThresholdType = *n.ThresholdType
	}
	for _, sub := range subs {
		if e := required("subscriber.subscriptionType", sub.SubscriptionType); e != nil {
			return nil, e
		}
		if e := required("subscriber.address", sub.Address); e != nil {
			return nil, e
		}
		sp.Subscribers = append(sp.Subscribers, Subscriber{SubscriptionType: *sub.SubscriptionType, Address: *sub.Address})
	}
	return newNotification(sp, needSubscriber)
}

func spend(v float64) *spendJSON {
	a, u := strconv.FormatFloat(round6(v), 'f', -1, 64), USD
	return &spendJSON{Amount: &a, Unit: &u}
}

func ptr[T any](v T) *T { return &v }

// budgetOut encodes a budget as DescribeBudget answers it, its spend as last evaluated.
func budgetOut(r *record) budgetJSON {
	b := budgetJSON{BudgetName: ptr(r.Name), BudgetLimit: &spendJSON{Amount: ptr(r.Amount), Unit: ptr(USD)},
		CostFilters: r.CostFilters, CostTypes: r.CostTypes, TimeUnit: ptr(r.TimeUnit), BudgetType: ptr(TypeCost),
		TimePeriod:      &timePeriodJSON{Start: ptr(account.EpochSeconds(r.PeriodStart)), End: ptr(account.EpochSeconds(r.PeriodEnd))},
		CalculatedSpend: &calculatedSpendJSON{ActualSpend: spend(r.last.cost.ActualUSD), ForecastedSpend: spend(r.last.cost.ForecastUSD)},
		LastUpdatedTime: ptr(account.EpochSeconds(r.LastUpdated)),
	}
	return b
}

func notificationOut(r *record, n *notification) notificationJSON {
	out := notificationJSON{NotificationType: ptr(n.Type), ComparisonOperator: ptr(n.ComparisonOperator),
		Threshold: ptr(n.Threshold), NotificationState: ptr(r.state(n))}
	if n.ThresholdType != "" { // AWS answers ThresholdType only when it was set
		out.ThresholdType = ptr(n.ThresholdType)
	}
	return out
}

func maxResults(v *int, limit int) (int, *account.Error) {
	switch {
	case v == nil:
		return limit, nil
	case *v < 1 || *v > limit:
		return 0, invalid("Invalid MaxResults %d: it must be between 1 and %d.", *v, limit)
	}
	return *v, nil
}

func token(t *string) string {
	if t == nil {
		return ""
	}
	return *t
}

func badToken() *account.Error {
	return account.BadRequest("InvalidNextTokenException", "The pagination token is invalid.")
}

func (s *Service) createBudget(c *account.Call, in *createBudgetIn) (*empty, *account.Error) {
	if e := required("budget", in.Budget); e != nil {
		return nil, e
	}
	if e := s.authorize(c, in.AccountId, true, stringOr(in.Budget.BudgetName)); e != nil {
		return nil, e
	}
	bi, e := budgetFrom(in.Budget)
	if e != nil {
		return nil, e
	}
	r, e := newRecord(bi, c.Now)
	if e != nil {
		return nil, e
	}
	if len(in.NotificationsWithSubscribers) > maxNotifications {
		return nil, account.BadRequest("CreationLimitExceededException", "A budget has at most %d notifications.", maxNotifications)
	}
	notes := make([]*notification, 0, len(in.NotificationsWithSubscribers))
	for _, nw := range in.NotificationsWithSubscribers {
		n, e := notificationFrom(nw.Notification, nw.Subscribers, true)
		if e != nil {
			return nil, e
		}
		notes = append(notes, n)
	}
	s.mu.Lock()
	if e := s.m.create(r, notes); e != nil {
		s.mu.Unlock()
		return nil, e
	}
	if e := s.commitLocked(op(r)); e != nil {
		return nil, e
	}
	c.Created = []string{r.Name}
	return &empty{}, s.evaluate()
}

func stringOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// evaluate runs Evaluate for a handler.
func (s *Service) evaluate() *account.Error {
	if err := s.Evaluate(); err != nil {
		return account.Errorf(500, "InternalErrorException", "%v", err)
	}
	return nil
}

func (s *Service) describeBudget(c *account.Call, in *budgetNameIn) (*describeBudgetOut, *account.Error) {
	if e := s.authorize(c, in.AccountId, false, stringOr(in.BudgetName)); e != nil {
		return nil, e
	}
	if e := required("budgetName", in.BudgetName); e != nil {
		return nil, e
	}
	if e := s.evaluate(); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, e := s.m.get(*in.BudgetName, "get")
	if e != nil {
		return nil, e
	}
	return &describeBudgetOut{Budget: budgetOut(r)}, nil
}

func (s *Service) describeBudgets(c *account.Call, in *describeBudgetsIn) (*describeBudgetsOut, *account.Error) {
	if e := s.authorize(c, in.AccountId, false, ""); e != nil {
		return nil, e
	}
	limit, e := maxResults(in.MaxResults, 1000)
	if e != nil {
		return nil, e
	}
	if e := s.evaluate(); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := account.SortedKeys(s.m.budgets)
	page, next, err := account.Page(names, func(n string) string { return n }, token(in.NextToken), limit)
	if err != nil {
		return nil, badToken()
	}
	out := &describeBudgetsOut{Budgets: make([]budgetJSON, 0, len(page))}
	for _, n := range page {
		out.Budgets = append(out.Budgets, budgetOut(s.m.budgets[n]))
	}
	if next != "" {
		out.NextToken = &next
	}
	return out, nil
}

func (s *Service) updateBudget(c *account.Call, in *updateBudgetIn) (*empty, *account.Error) {
	if e := required("newBudget", in.NewBudget); e != nil {
		return nil, e
	}
	if e := s.authorize(c, in.AccountId, true, stringOr(in.NewBudget.BudgetName)); e != nil {
		return nil, e
	}
	bi, e := budgetFrom(in.NewBudget)
	if e != nil {
		return nil, e
	}
	next, e := newRecord(bi, c.Now)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	r, e := s.m.update(next, c.Now)
	if e != nil {
		s.mu.Unlock()
		return nil, e
	}
	if e := s.commitLocked(op(r)); e != nil {
		return nil, e
	}
	return &empty{}, s.evaluate()
}

func (s *Service) deleteBudget(c *account.Call, in *budgetNameIn) (*empty, *account.Error) {
	if e := s.authorize(c, in.AccountId, true, stringOr(in.BudgetName)); e != nil {
		return nil, e
	}
	if e := required("budgetName", in.BudgetName); e != nil {
		return nil, e
	}
	s.mu.Lock()
	if s.m.budgets[*in.BudgetName] == nil {
		s.mu.Unlock()
		return nil, notFound("Unable to delete budget: %s - the budget doesn't exist. Try creating it first.", *in.BudgetName)
	}
	delete(s.m.budgets, *in.BudgetName)
	if e := s.commitLocked(account.Op{Bucket: bucketBudgets, Key: *in.BudgetName}); e != nil {
		return nil, e
	}
	c.Deleted = []string{*in.BudgetName}
	return &empty{}, nil
}

func (s *Service) createNotification(c *account.Call, in *notificationIn) (*empty, *account.Error) {
	if e := s.authorize(c, in.AccountId, true, stringOr(in.BudgetName)); e != nil {
		return nil, e
	}
	if e := required("budgetName", in.BudgetName); e != nil {
		return nil, e
	}
	n, e := notificationFrom(in.Notification, in.Subscribers, true)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	r := s.m.budgets[*in.BudgetName]
	if r == nil {
		s.mu.Unlock()
		return nil, notFound("Unable to create notification - the budget %s doesn't exist.", *in.BudgetName)
	}
	if e := s.m.addNotification(r, n); e != nil {
		s.mu.Unlock()
		return nil, e
	}
	if e := s.commitLocked(op(r)); e != nil {
		return nil, e
	}
	return &empty{}, s.evaluate()
}

func (s *Service) deleteNotification(c *account.Call, in *notificationIn) (*empty, *account.Error) {
	if e := s.authorize(c, in.AccountId, true, stringOr(in.BudgetName)); e != nil {
		return nil, e
	}
	if e := required("budgetName", in.BudgetName); e != nil {
		return nil, e
	}
	n, e := notificationFrom(in.Notification, nil, false)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	r := s.m.budgets[*in.BudgetName]
	if r == nil {
		s.mu.Unlock()
		return nil, notFound("Unable to delete notification - the budget %s doesn't exist.", *in.BudgetName)
	}
	i, e := s.m.findNotification(r, n)
	if e != nil {
		s.mu.Unlock()
		return nil, e
	}
	r.Notifications = append(r.Notifications[:i:i], r.Notifications[i+1:]...)
	s.m.touch(r)
	if e := s.commitLocked(op(r)); e != nil {
		return nil, e
	}
	return &empty{}, nil
}

func (s *Service) describeNotifications(c *account.Call, in *notificationIn) (*notificationsOut, *account.Error) {
	if e := s.authorize(c, in.AccountId, false, stringOr(in.BudgetName)); e != nil {
		return nil, e
	}
	if e := required("budgetName", in.BudgetName); e != nil {
		return nil, e
	}
	limit, e := maxResults(in.MaxResults, 100)
	if e != nil {
		return nil, e
	}
	if e := s.evaluate(); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, e := s.m.get(*in.BudgetName, "get notifications of")
	if e != nil {
		return nil, e
	}
	page, next, err := account.Page(r.Notifications, (*notification).key, token(in.NextToken), limit)
	if err != nil {
		return nil, badToken()
	}
	out := &notificationsOut{Notifications: make([]notificationJSON, 0, len(page))}
	for _, n := range page {
		out.Notifications = append(out.Notifications, notificationOut(r, n))
	}
	if next != "" {
		out.NextToken = &next
	}
	return out, nil
}

func (s *Service) describeSubscribers(c *account.Call, in *notificationIn) (*subscribersOut, *account.Error) {
	if e := s.authorize(c, in.AccountId, false, stringOr(in.BudgetName)); e != nil {
		return nil, e
	}
	if e := required("budgetName", in.BudgetName); e != nil {
		return nil, e
	}
	want, e := notificationFrom(in.Notification, nil, false)
	if e != nil {
		return nil, e
	}
	limit, e := maxResults(in.MaxResults, 100)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, e := s.m.get(*in.BudgetName, "get subscribers of")
	if e != nil {
		return nil, e
	}
	i, e := s.m.findNotification(r, want)
	if e != nil {
		return nil, e
	}
	key := func(sub Subscriber) string { return sub.SubscriptionType + "/" + sub.Address }
	page, next, err := account.Page(r.Notifications[i].Subscribers, key, token(in.NextToken), limit)
	if err != nil {
		return nil, badToken()
	}
	out := &subscribersOut{Subscribers: make([]subscriberJSON, 0, len(page))}
	for _, sub := range page {
		out.Subscribers = append(out.Subscribers, subscriberJSON{SubscriptionType: ptr(sub.SubscriptionType), Address: ptr(sub.Address)})
	}
	if next != "" {
		out.NextToken = &next
	}
	return out, nil
}
