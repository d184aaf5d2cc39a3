package budgets

import (
	"math"
	"time"
)

// Cost is what the billing ledger says of one budget's resources in its current period.
type Cost struct {
	// ActualUSD is what they accrued from the period's start until now.
	ActualUSD float64 `json:"actualUSD"`
	// ForecastUSD is ActualUSD plus what those billing now accrue until the period's end
	// at their current rates (an instance still pending counts from when it will run).
	ForecastUSD float64 `json:"forecastUSD"`
	// USDPerHour is the burn rate now: the hourly price of those billing now.
	USDPerHour float64 `json:"usdPerHour"`
}

// CostQuery asks the ledger for the cost, as of Now, of the resources whose tags Match
// accepts, in the period [Start, End).
type CostQuery struct {
	Start, Now, End time.Time
	Match           func(tags map[string]string) bool
}

// CostFunc answers a CostQuery from the account's billing ledger. It is called without
// any of the service's locks held.
type CostFunc func(CostQuery) Cost

// Alert is one firing of a notification: the moment (emulator time) it went to ALARM and
// the spend then.
type Alert struct {
	Time               time.Time `json:"time"`
	Budget             string    `json:"budget"`
	NotificationType   string    `json:"notificationType"` // ACTUAL or FORECASTED
	ComparisonOperator string    `json:"comparisonOperator"`
	Threshold          float64   `json:"threshold"`
	ThresholdType      string    `json:"thresholdType"` // PERCENTAGE or ABSOLUTE_VALUE
	// ThresholdUSD is the spend the notification compared with; LimitUSD the budget's limit.
	ThresholdUSD float64 `json:"thresholdUSD"`
	LimitUSD     float64 `json:"limitUSD"`
	ActualUSD    float64 `json:"actualUSD"`
	ForecastUSD  float64 `json:"forecastUSD"`
	USDPerHour   float64 `json:"usdPerHour"`
	// PeriodStart is the start of the budget period the alert belongs to.
	PeriodStart time.Time    `json:"periodStart"`
	Subscribers []Subscriber `json:"subscribers,omitempty"`
}

// evaluation is a budget's spend as of one moment.
type evaluation struct {
	at, start, end time.Time
	cost           Cost
}

// crossed reports whether the notification's value is past its threshold.
func (n *notification) crossed(limit float64, c Cost) bool {
	v := c.ActualUSD
	if n.Type == Forecasted {
		v = c.ForecastUSD
	}
	t := n.thresholdUSD(limit)
	if n.ComparisonOperator == LessThan {
		return v < t
	}
	return v > t
}

// apply takes an evaluation: each notification not yet in ALARM this period whose value
// crossed its threshold goes to ALARM and fires. changed reports a durable change.
func (r *record) apply(ev evaluation) (fired []Alert, changed bool) {
	r.last = ev
	for _, n := range r.Notifications {
		if n.AlarmPeriod.Equal(ev.start) {
			continue // ALARM already, this period
		}
		if !n.AlarmPeriod.IsZero() { // an earlier period's: OK again
			n.AlarmPeriod, n.AlarmAt = time.Time{}, time.Time{}
			changed = true
		}
		if !n.crossed(r.LimitUSD, ev.cost) {
			continue
		}
		n.AlarmPeriod, n.AlarmAt = ev.start, ev.at
		a := Alert{Time: ev.at, Budget: r.Name, NotificationType: n.Type, ComparisonOperator: n.ComparisonOperator,
			Threshold: n.Threshold, ThresholdType: n.thresholdType(), ThresholdUSD: round6(n.thresholdUSD(r.LimitUSD)),
			LimitUSD: r.LimitUSD, ActualUSD: round6(ev.cost.ActualUSD), ForecastUSD: round6(ev.cost.ForecastUSD),
			USDPerHour: round6(ev.cost.USDPerHour), PeriodStart: ev.start, Subscribers: append([]Subscriber(nil), n.Subscribers...)}
		r.Alerts = append(r.Alerts, a)
		if len(r.Alerts) > maxAlerts {
			r.Alerts = r.Alerts[len(r.Alerts)-maxAlerts:]
		}
		fired = append(fired, a)
		changed = true
	}
	return fired, changed
}

// state is a notification's NotificationState as of the record's last evaluation.
func (r *record) state(n *notification) string {
	if !n.AlarmPeriod.IsZero() && n.AlarmPeriod.Equal(r.last.start) {
		return StateAlarm
	}
	return StateOK
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// Budget is the lab's view of one budget: its terms, its spend as last evaluated, its
// notifications' states and every alert it fired.
type Budget struct {
	Name        string              `json:"name"`
	TimeUnit    string              `json:"timeUnit"` // DAILY or MONTHLY
	LimitUSD    float64             `json:"limitUSD"`
	CostFilters map[string][]string `json:"costFilters,omitempty"`
	Created     time.Time           `json:"created"`
	LastUpdated time.Time           `json:"lastUpdated"`
	// The current period and the spend in it, as of Evaluated (emulator time).
	PeriodStart time.Time `json:"periodStart"`
	PeriodEnd   time.Time `json:"periodEnd"`
	Evaluated   time.Time `json:"evaluated"`
	ActualUSD   float64   `json:"actualUSD"`
	ForecastUSD float64   `json:"forecastUSD"`
	USDPerHour  float64   `json:"usdPerHour"`
	// Notifications in the order they were created.
	Notifications []Notification `json:"notifications"`
	// Alerts is every firing, oldest first, across periods.
	Alerts []Alert `json:"alerts"`
}

// Notification is one alert of a budget and its state.
type Notification struct {
	Type               string  `json:"type"` // ACTUAL or FORECASTED
	ComparisonOperator string  `json:"comparisonOperator"`
	Threshold          float64 `json:"threshold"`
	ThresholdType      string  `json:"thresholdType"` // PERCENTAGE or ABSOLUTE_VALUE
	ThresholdUSD       float64 `json:"thresholdUSD"`
	State              string  `json:"state"` // OK or ALARM
	// AlarmSince is when it went to ALARM in the current period.
	AlarmSince  *time.Time   `json:"alarmSince,omitempty"`
	Subscribers []Subscriber `json:"subscribers,omitempty"`
}

func (r *record) view() Budget {
	b := Budget{Name: r.Name, TimeUnit: r.TimeUnit, LimitUSD: r.LimitUSD, CostFilters: r.CostFilters,
		Created: r.Created, LastUpdated: r.LastUpdated, PeriodStart: r.last.start, PeriodEnd: r.last.end,
		Evaluated: r.last.at, ActualUSD: round6(r.last.cost.ActualUSD), ForecastUSD: round6(r.last.cost.ForecastUSD),
		USDPerHour: round6(r.last.cost.USDPerHour), Notifications: make([]Notification, 0, len(r.Notifications)),
		Alerts: append([]Alert{}, r.Alerts...)}
	for _, n := range r.Notifications {
		v := Notification{Type: n.Type, ComparisonOperator: n.ComparisonOperator, Threshold: n.Threshold,
			ThresholdType: n.thresholdType(), ThresholdUSD: round6(n.thresholdUSD(r.LimitUSD)), State: r.state(n),
			Subscribers: append([]Subscriber(nil), n.Subscribers...)}
		if v.State == StateAlarm {
			at := n.AlarmAt
			v.AlarmSince = &at
		}
		b.Notifications = append(b.Notifications, v)
	}
	return b
}
