package budgets

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

const bucketBudgets = "budgets"

// Values as AWS Budgets spells them.
const (
	TypeCost = "COST"

	Daily   = "DAILY"
	Monthly = "MONTHLY"

	Actual     = "ACTUAL"
	Forecasted = "FORECASTED"

	GreaterThan = "GREATER_THAN"
	LessThan    = "LESS_THAN"
	EqualTo     = "EQUAL_TO"

	Percentage    = "PERCENTAGE"
	AbsoluteValue = "ABSOLUTE_VALUE"

	StateOK    = "OK"
	StateAlarm = "ALARM"

	Email = "EMAIL"
	SNS   = "SNS"

	USD = "USD"

	// FilterTagKeyValue is the cost filter on cost allocation tags: values
	// "user:KEY$VALUE" ("user:karpenter.sh/nodepool$ziba-general").
	FilterTagKeyValue = "TagKeyValue"
)

const (
	maxNotifications = 10 // per budget
	maxEmails        = 10 // per notification, beside one SNS topic
	maxAlerts        = 1000
	maxNameLength    = 100
)

// defaultPeriodEnd is the TimePeriod end AWS gives a budget that names none.
var defaultPeriodEnd = time.Date(2087, 6, 15, 0, 0, 0, 0, time.UTC)

// Subscriber is who AWS would tell of an alert: an email address or an SNS topic ARN.
// The lab tells nobody; it records the alert.
type Subscriber struct {
	SubscriptionType string `json:"subscriptionType"` // EMAIL or SNS
	Address          string `json:"address"`
}

// CostTypes is which charges a budget counts. The lab's ledger has only usage, so these
// are kept and echoed, not applied.
type CostTypes struct {
	IncludeTax               *bool `json:"IncludeTax,omitempty"`
	IncludeSubscription      *bool `json:"IncludeSubscription,omitempty"`
	UseBlended               *bool `json:"UseBlended,omitempty"`
	IncludeRefund            *bool `json:"IncludeRefund,omitempty"`
	IncludeCredit            *bool `json:"IncludeCredit,omitempty"`
	IncludeUpfront           *bool `json:"IncludeUpfront,omitempty"`
	IncludeRecurring         *bool `json:"IncludeRecurring,omitempty"`
	IncludeOtherSubscription *bool `json:"IncludeOtherSubscription,omitempty"`
	IncludeSupport           *bool `json:"IncludeSupport,omitempty"`
	IncludeDiscount          *bool `json:"IncludeDiscount,omitempty"`
	UseAmortized             *bool `json:"UseAmortized,omitempty"`
}

// defaultCostTypes is what AWS answers for a COST budget created without CostTypes.
func defaultCostTypes() *CostTypes {
	t, f := true, false
	return &CostTypes{IncludeTax: &t, IncludeSubscription: &t, UseBlended: &f, IncludeRefund: &t, IncludeCredit: &t,
		IncludeUpfront: &t, IncludeRecurring: &t, IncludeOtherSubscription: &t, IncludeSupport: &t, IncludeDiscount: &t,
		UseAmortized: &f}
}

// Spec is a budget as the lab's admin API sets it (karplab ec2 budget set): a COST budget
// with a USD limit.
type Spec struct {
	Name     string  `json:"name"`
	LimitUSD float64 `json:"limitUSD"`
	// TimeUnit is DAILY (the default) or MONTHLY.
	TimeUnit string `json:"timeUnit,omitempty"`
	// CostFilters narrows the spend, as AWS spells it: {"TagKeyValue": ["user:KEY$VALUE"]}.
	CostFilters   map[string][]string `json:"costFilters,omitempty"`
	Notifications []NotificationSpec  `json:"notifications,omitempty"`
}

// NotificationSpec is one alert of a budget.
type NotificationSpec struct {
	Type      string  `json:"type"` // ACTUAL or FORECASTED
	Threshold float64 `json:"threshold"`
	// ThresholdType is PERCENTAGE of the limit (the default) or ABSOLUTE_VALUE in USD.
	ThresholdType string `json:"thresholdType,omitempty"`
	// ComparisonOperator is GREATER_THAN (the default) or LESS_THAN.
	ComparisonOperator string       `json:"comparisonOperator,omitempty"`
	Subscribers        []Subscriber `json:"subscribers,omitempty"`
}

// budgetInput is a budget as a request states it, wire or admin.
type budgetInput struct {
	Name, BudgetType, TimeUnit string
	Amount, Unit               string // the limit as sent: "5", "5.00"
	CostFilters                map[string][]string
	CostTypes                  *CostTypes
	Start, End                 *time.Time // TimePeriod
}

func (sp Spec) input() budgetInput {
	unit := sp.TimeUnit
	if unit == "" {
		unit = Daily
	}
	return budgetInput{Name: sp.Name, BudgetType: TypeCost, TimeUnit: strings.ToUpper(unit),
		Amount: strconv.FormatFloat(sp.LimitUSD, 'f', -1, 64), Unit: USD, CostFilters: sp.CostFilters}
}

// record is one durable budget with its notifications and alert history.
type record struct {
	Name          string
	TimeUnit      string
	Amount        string // the limit as sent
	LimitUSD      float64
	CostFilters   map[string][]string `json:",omitempty"`
	CostTypes     *CostTypes          `json:",omitempty"`
	PeriodStart   time.Time           // AWS's TimePeriod
	PeriodEnd     time.Time
	Created       time.Time
	LastUpdated   time.Time
	Notifications []*notification `json:",omitempty"`
	Alerts        []Alert         `json:",omitempty"`

	gen       uint64     // bumped by every change, so a stale evaluation is dropped
	match     tagMatcher // CostFilters, compiled
	last      evaluation // the latest evaluation, not durable
	periodSet bool       // the request named a TimePeriod
}

// notification is one alert of a budget and its state.
type notification struct {
	Type               string
	ComparisonOperator string
	Threshold          float64
	ThresholdType      string `json:",omitempty"` // as sent; "" means PERCENTAGE
	Subscribers        []Subscriber
	// AlarmPeriod is the start of the period in which it went to ALARM (zero: OK), and
	// AlarmAt when; a new period, or a change of the budget, puts it back to OK.
	AlarmPeriod time.Time `json:",omitzero"`
	AlarmAt     time.Time `json:",omitzero"`
}

func (n *notification) thresholdType() string {
	if n.ThresholdType == "" {
		return Percentage
	}
	return n.ThresholdType
}

// key identifies a notification within its budget, as AWS matches them.
func (n *notification) key() string {
	return fmt.Sprintf("%s/%s/%s/%s", n.Type, n.ComparisonOperator, strconv.FormatFloat(n.Threshold, 'g', -1, 64), n.thresholdType())
}

// thresholdUSD is the spend the notification compares with.
func (n *notification) thresholdUSD(limit float64) float64 {
	if n.thresholdType() == AbsoluteValue {
		return n.Threshold
	}
	return limit * n.Threshold / 100
}

func invalid(format string, args ...any) *account.Error {
	return account.BadRequest("InvalidParameterException", format, args...)
}

func notFound(format string, args ...any) *account.Error {
	return account.BadRequest("NotFoundException", format, args...)
}

// validName applies AWS's BudgetName pattern: 1 to 100 characters, no ':' or '\', no
// "/action/" and no script tags.
func validName(name string) *account.Error {
	low := strings.ToLower(name)
	if name == "" || len(name) > maxNameLength || strings.ContainsAny(name, `:\`) || strings.Contains(name, "/action/") ||
		(strings.Contains(low, "<script>") && strings.Contains(low, "</script>")) {
		return invalid("Invalid BudgetName %q: a budget name is 1 to %d characters and contains no ':' or '\\'.", name, maxNameLength)
	}
	return nil
}

// newRecord validates a budget as AWS does and builds its record.
func newRecord(in budgetInput, now time.Time) (*record, *account.Error) {
	if e := validName(in.Name); e != nil {
		return nil, e
	}
	if in.BudgetType != TypeCost {
		return nil, invalid("BudgetType %s is not supported by the lab's Budgets: it budgets cost (BudgetType COST) only.", in.BudgetType)
	}
	switch in.TimeUnit {
	case Daily, Monthly:
	case "QUARTERLY", "ANNUALLY", "CUSTOM":
		return nil, invalid("TimeUnit %s is not supported by the lab's Budgets: use DAILY or MONTHLY.", in.TimeUnit)
	default:
		return nil, invalid("Invalid TimeUnit %q: it must be one of DAILY, MONTHLY, QUARTERLY, ANNUALLY, CUSTOM.", in.TimeUnit)
	}
	if in.Amount == "" {
		return nil, invalid("Unable to create/update budget - please provide one of the followings: Budget Limit/ Planned Budget Limit/ Auto Adjust Data")
	}
	limit, err := strconv.ParseFloat(in.Amount, 64)
	if err != nil || strings.ContainsAny(in.Amount, "eE+-") || math.IsInf(limit, 0) || math.IsNaN(limit) {
		return nil, invalid("Invalid BudgetLimit Amount %q: it must be a non-negative decimal number such as 5.00.", in.Amount)
	}
	if in.Unit != USD {
		return nil, invalid("Invalid BudgetLimit Unit %q: a COST budget is in USD.", in.Unit)
	}
	match, e := compileFilters(in.CostFilters)
	if e != nil {
		return nil, e
	}
	r := &record{Name: in.Name, TimeUnit: in.TimeUnit, Amount: in.Amount, LimitUSD: limit, CostFilters: in.CostFilters,
		CostTypes: in.CostTypes, Created: now, LastUpdated: now, match: match}
	if r.CostTypes == nil {
		r.CostTypes = defaultCostTypes()
	}
	r.PeriodStart, _ = periodOf(r.TimeUnit, now)
	if in.Start != nil {
		r.PeriodStart, r.periodSet = in.Start.UTC(), true
	}
	r.PeriodEnd = defaultPeriodEnd
	if in.End != nil {
		r.PeriodEnd, r.periodSet = in.End.UTC(), true
	}
	if !r.PeriodEnd.After(r.PeriodStart) {
		return nil, invalid("Invalid TimePeriod: its End must be after its Start.")
	}
	return r, nil
}

// newNotification validates a notification; the wire requires a subscriber, the admin
// API does not (the lab delivers to nobody).
func newNotification(in NotificationSpec, needSubscriber bool) (*notification, *account.Error) {
	n := &notification{Type: in.Type, ComparisonOperator: in.ComparisonOperator, Threshold: in.Threshold,
		ThresholdType: in.ThresholdType, Subscribers: in.Subscribers}
	switch n.Type {
	case Actual, Forecasted:
	default:
		return nil, invalid("Invalid NotificationType %q: it must be ACTUAL or FORECASTED.", n.Type)
	}
	switch n.ComparisonOperator {
	case GreaterThan, LessThan:
	case EqualTo:
		return nil, invalid("ComparisonOperator EQUAL_TO is not supported by the lab's Budgets: use GREATER_THAN (or LESS_THAN).")
	default:
		return nil, invalid("Invalid ComparisonOperator %q: it must be GREATER_THAN, LESS_THAN or EQUAL_TO.", n.ComparisonOperator)
	}
	switch n.ThresholdType {
	case "", Percentage, AbsoluteValue:
	default:
		return nil, invalid("Invalid ThresholdType %q: it must be PERCENTAGE or ABSOLUTE_VALUE.", n.ThresholdType)
	}
	if n.Threshold < 0 || math.IsNaN(n.Threshold) || n.Threshold > 15e12 {
		return nil, invalid("Invalid Threshold %g: it must be between 0 and 15000000000000.", n.Threshold)
	}
	if e := validSubscribers(n.Subscribers, needSubscriber); e != nil {
		return nil, e
	}
	return n, nil
}

func validSubscribers(subs []Subscriber, needOne bool) *account.Error {
	if needOne && len(subs) == 0 {
		return invalid("A notification needs at least one subscriber (an EMAIL address or an SNS topic).")
	}
	var emails, topics int
	seen := map[Subscriber]bool{}
	for _, s := range subs {
		switch s.SubscriptionType {
		case Email:
			emails++
			if !strings.Contains(s.Address, "@") || strings.ContainsAny(s.Address, " \t\r\n") {
				return invalid("Invalid email address %q.", s.Address)
			}
		case SNS:
			topics++
			if !strings.HasPrefix(s.Address, "arn:aws:sns:") {
				return invalid("Invalid SNS topic ARN %q.", s.Address)
			}
		default:
			return invalid("Invalid SubscriptionType %q: it must be EMAIL or SNS.", s.SubscriptionType)
		}
		if seen[s] {
			return account.BadRequest("DuplicateRecordException", "Error creating subscriber: %s - the subscriber already exists.", s.Address)
		}
		seen[s] = true
	}
	if emails > maxEmails || topics > 1 {
		return account.BadRequest("CreationLimitExceededException",
			"A notification has at most %d email subscribers and one SNS topic.", maxEmails)
	}
	return nil
}

// tagMatcher is a budget's TagKeyValue filter: a resource matches when any pair does
// (a pair with an empty value matches a resource without the tag). No pairs: everything.
type tagMatcher []tagPair

type tagPair struct{ key, value string }

func (m tagMatcher) match(tags map[string]string) bool {
	if len(m) == 0 {
		return true
	}
	for _, p := range m {
		if tags[p.key] == p.value {
			return true
		}
	}
	return false
}

// compileFilters reads CostFilters: only TagKeyValue, in AWS's "user:KEY$VALUE" form.
func compileFilters(filters map[string][]string) (tagMatcher, *account.Error) {
	var m tagMatcher
	for _, k := range account.SortedKeys(filters) {
		if k != FilterTagKeyValue {
			return nil, invalid("CostFilters key %q is not supported by the lab's Budgets: filter by TagKeyValue (\"user:KEY$VALUE\").", k)
		}
		vals := filters[k]
		if len(vals) == 0 {
			return nil, invalid("CostFilters %s has no values.", k)
		}
		for _, v := range vals {
			key, value, ok := strings.Cut(strings.TrimPrefix(v, "user:"), "$")
			if !ok || key == "" {
				return nil, invalid("Invalid TagKeyValue %q: write it as user:KEY$VALUE (user:karpenter.sh/nodepool$ziba-general).", v)
			}
			m = append(m, tagPair{key: key, value: value})
		}
	}
	return m, nil
}

// periodOf is the budget period holding t: the UTC day or month.
func periodOf(unit string, t time.Time) (start, end time.Time) {
	t = t.UTC()
	if unit == Monthly {
		start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	start = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// model is the account's budgets by name.
type model struct {
	budgets map[string]*record
	gen     uint64
}

func (m *model) touch(r *record) {
	m.gen++
	r.gen = m.gen
}

func (m *model) create(r *record, notes []*notification) *account.Error {
	if _, ok := m.budgets[r.Name]; ok {
		return account.BadRequest("DuplicateRecordException", "Error creating budget: %s - the budget already exists.", r.Name)
	}
	if len(notes) > maxNotifications {
		return account.BadRequest("CreationLimitExceededException", "A budget has at most %d notifications.", maxNotifications)
	}
	seen := map[string]bool{}
	for _, n := range notes {
		if seen[n.key()] {
			return account.BadRequest("DuplicateRecordException", "Error creating notification: %s - the notification already exists.", n.key())
		}
		seen[n.key()] = true
	}
	r.Notifications = notes
	m.budgets[r.Name] = r
	m.touch(r)
	return nil
}

// update replaces a budget's definition, keeping its notifications and alert history.
// A changed limit, period or filter puts every notification back to OK: the next
// evaluation judges it against the new terms.
func (m *model) update(next *record, now time.Time) (*record, *account.Error) {
	r := m.budgets[next.Name]
	if r == nil {
		return nil, notFound("Unable to update budget: %s - the budget doesn't exist.", next.Name)
	}
	changed := r.LimitUSD != next.LimitUSD || r.TimeUnit != next.TimeUnit || fmt.Sprint(r.CostFilters) != fmt.Sprint(next.CostFilters)
	r.TimeUnit, r.Amount, r.LimitUSD, r.CostFilters, r.match = next.TimeUnit, next.Amount, next.LimitUSD, next.CostFilters, next.match
	r.CostTypes, r.LastUpdated = next.CostTypes, now
	if next.periodSet { // otherwise the budget keeps the TimePeriod it had
		r.PeriodStart, r.PeriodEnd = next.PeriodStart, next.PeriodEnd
	}
	if changed {
		for _, n := range r.Notifications {
			n.AlarmPeriod, n.AlarmAt = time.Time{}, time.Time{}
		}
	}
	m.touch(r)
	return r, nil
}

func (m *model) get(name, verb string) (*record, *account.Error) {
	r := m.budgets[name]
	if r == nil {
		return nil, notFound("Unable to %s budget: %s - the budget doesn't exist.", verb, name)
	}
	return r, nil
}

func (m *model) findNotification(r *record, n *notification) (int, *account.Error) {
	for i, x := range r.Notifications {
		if x.key() == n.key() {
			return i, nil
		}
	}
	return -1, notFound("Unable to find notification %s of budget %s - the notification doesn't exist.", n.key(), r.Name)
}

func (m *model) addNotification(r *record, n *notification) *account.Error {
	if _, e := m.findNotification(r, n); e == nil {
		return account.BadRequest("DuplicateRecordException", "Error creating notification: %s - the notification already exists.", n.key())
	}
	if len(r.Notifications) >= maxNotifications {
		return account.BadRequest("CreationLimitExceededException", "A budget has at most %d notifications.", maxNotifications)
	}
	r.Notifications = append(r.Notifications, n)
	m.touch(r)
	return nil
}

// setNotifications replaces the notifications with list, keeping the state of those
// that stay.
func (m *model) setNotifications(r *record, list []*notification) *account.Error {
	if len(list) > maxNotifications {
		return account.BadRequest("CreationLimitExceededException", "A budget has at most %d notifications.", maxNotifications)
	}
	old := map[string]*notification{}
	for _, n := range r.Notifications {
		old[n.key()] = n
	}
	seen := map[string]bool{}
	for _, n := range list {
		if seen[n.key()] {
			return account.BadRequest("DuplicateRecordException", "Error creating notification: %s - the notification already exists.", n.key())
		}
		seen[n.key()] = true
		if o := old[n.key()]; o != nil {
			n.AlarmPeriod, n.AlarmAt = o.AlarmPeriod, o.AlarmAt
		}
	}
	r.Notifications = list
	m.touch(r)
	return nil
}

func op(r *record) account.Op { return account.Op{Bucket: bucketBudgets, Key: r.Name, Value: r} }
