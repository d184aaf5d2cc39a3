package budgets

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

const targetPrefix = "AWSBudgetServiceGateway"

// The audit trail's record of an alert: AWS Budgets acts, nobody called.
const (
	ActionAlert = "BudgetAlert"
	Caller      = "budgets.amazonaws.com"
)

// ErrNotFound is what Get and Delete return for a budget that does not exist.
var ErrNotFound = errors.New("no such budget")

// Service is the account's AWS Budgets. It implements account.Service.
type Service struct {
	host    account.Host
	cost    CostFunc
	onAlert func(Alert)
	table   map[string]account.JSONActionSpec

	// evalMu serializes evaluations, so a notification fires once; it is taken before mu
	// and held while the ledger is read (without mu).
	evalMu sync.Mutex
	mu     sync.Mutex
	m      *model
}

var _ account.Service = (*Service)(nil)

// Options configures New.
type Options struct {
	// Cost reads the billing ledger; nil: every budget's spend is zero.
	Cost CostFunc
	// OnAlert is told of every alert once it is durable, in order (fakeec2 records it in
	// the audit trail). It must not call back into the Service.
	OnAlert func(Alert)
}

// New opens the account's budgets over host's store.
func New(host account.Host, opts Options) (*Service, error) {
	s := &Service{host: host, cost: opts.Cost, onAlert: opts.OnAlert, m: &model{budgets: map[string]*record{}}}
	var bad error
	err := account.LoadJSON(host.Store(), bucketBudgets, func(k string, r *record) {
		match, e := compileFilters(r.CostFilters)
		if e != nil {
			bad = errors.Join(bad, fmt.Errorf("budget %s: %w", k, e))
			return
		}
		r.match = match
		s.m.budgets[k] = r
		s.m.touch(r)
	})
	if err = errors.Join(err, bad); err != nil {
		return nil, fmt.Errorf("loading %s: %w", bucketBudgets, err)
	}
	s.table = map[string]account.JSONActionSpec{
		"CreateBudget":                       {Handler: account.JSONAction(s.createBudget)},
		"DescribeBudget":                     {Handler: account.JSONAction(s.describeBudget), ReadOnly: true},
		"DescribeBudgets":                    {Handler: account.JSONAction(s.describeBudgets), ReadOnly: true},
		"UpdateBudget":                       {Handler: account.JSONAction(s.updateBudget)},
		"DeleteBudget":                       {Handler: account.JSONAction(s.deleteBudget)},
		"CreateNotification":                 {Handler: account.JSONAction(s.createNotification)},
		"DeleteNotification":                 {Handler: account.JSONAction(s.deleteNotification)},
		"DescribeNotificationsForBudget":     {Handler: account.JSONAction(s.describeNotifications), ReadOnly: true},
		"DescribeSubscribersForNotification": {Handler: account.JSONAction(s.describeSubscribers), ReadOnly: true},
	}
	return s, nil
}

// Name is AWS Budgets' SigV4 signing name.
func (s *Service) Name() string { return "budgets" }

// Serve answers one awsJson1_1 call.
func (s *Service) Serve(c *account.Call) *account.Response {
	return account.ServeJSON(c, account.JSON11, targetPrefix, s.table)
}

// Evaluate reads every budget's spend as of now (the host's clock) and fires the
// notifications that crossed their thresholds. fakeec2 calls it on every ledger change
// and every few seconds; every read of a budget calls it first.
func (s *Service) Evaluate() error {
	s.evalMu.Lock()
	defer s.evalMu.Unlock()
	_, err := s.evaluateAt(s.host.Now())
	return err
}

// EvaluateSpan evaluates every budget at from+step, from+2*step, ..., to, in order, and
// returns the alerts fired, each dated at the step that crossed: skipped lab time alerts
// as if it had passed. No other evaluation runs during the walk; begin, if not nil, runs
// first under the same hold (fakeec2 moves its clock to to there, so that no evaluation
// sees to before the walk reaches it). An error of begin ends the walk before it starts.
func (s *Service) EvaluateSpan(from, to time.Time, step time.Duration, begin func() error) ([]Alert, error) {
	if step <= 0 {
		return nil, fmt.Errorf("evaluating budgets from %s to %s: step %s is not positive", from, to, step)
	}
	s.evalMu.Lock()
	defer s.evalMu.Unlock()
	if begin != nil {
		if err := begin(); err != nil {
			return nil, err
		}
	}
	alerts := []Alert{}
	for at := from.Add(step); ; at = at.Add(step) {
		if at.After(to) {
			at = to
		}
		fired, err := s.evaluateAt(at)
		alerts = append(alerts, fired...)
		if err != nil || !at.Before(to) {
			return alerts, err
		}
	}
}

// evaluateAt is one evaluation as of now; callers hold evalMu. It returns the alerts
// fired once they are durable and onAlert was told.
func (s *Service) evaluateAt(now time.Time) ([]Alert, error) {
	type job struct {
		name string
		gen  uint64
		q    CostQuery
	}
	s.mu.Lock()
	jobs := make([]job, 0, len(s.m.budgets))
	for _, name := range account.SortedKeys(s.m.budgets) {
		r := s.m.budgets[name]
		start, end := periodOf(r.TimeUnit, now)
		jobs = append(jobs, job{name: name, gen: r.gen, q: CostQuery{Start: start, Now: now, End: end, Match: r.match.match}})
	}
	s.mu.Unlock()
	if len(jobs) == 0 {
		return nil, nil
	}
	costs := make([]Cost, len(jobs))
	if s.cost != nil {
		for i, j := range jobs {
			costs[i] = s.cost(j.q)
		}
	}
	s.mu.Lock()
	var ops []account.Op
	var fired []Alert
	for i, j := range jobs {
		r := s.m.budgets[j.name]
		if r == nil || r.gen != j.gen {
			continue // changed meanwhile: the change evaluates it again
		}
		f, changed := r.apply(evaluation{at: now, start: j.q.Start, end: j.q.End, cost: costs[i]})
		if changed {
			ops = append(ops, op(r))
		}
		fired = append(fired, f...)
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return nil, fmt.Errorf("saving budget alerts: %w", err)
	}
	if s.onAlert != nil {
		for _, a := range fired {
			s.onAlert(a)
		}
	}
	return fired, nil
}

// List evaluates every budget and returns them by name.
func (s *Service) List() ([]Budget, error) {
	if err := s.Evaluate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Budget, 0, len(s.m.budgets))
	for _, name := range account.SortedKeys(s.m.budgets) {
		out = append(out, s.m.budgets[name].view())
	}
	return out, nil
}

// Get evaluates the budget and returns it, or ErrNotFound.
func (s *Service) Get(name string) (Budget, error) {
	if err := s.Evaluate(); err != nil {
		return Budget{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m.budgets[name]
	if r == nil {
		return Budget{}, fmt.Errorf("budget %q: %w", name, ErrNotFound)
	}
	return r.view(), nil
}

// Put creates the budget or replaces its terms and notifications (those that stay keep
// their state; a changed limit, period or filter puts them back to OK), then evaluates
// it. A spec AWS would refuse is an *account.Error.
func (s *Service) Put(sp Spec) (Budget, error) {
	now := s.host.Now()
	next, e := newRecord(sp.input(), now)
	if e != nil {
		return Budget{}, e
	}
	notes := make([]*notification, 0, len(sp.Notifications))
	for _, ns := range sp.Notifications {
		if ns.ComparisonOperator == "" {
			ns.ComparisonOperator = GreaterThan
		}
		n, e := newNotification(ns, false)
		if e != nil {
			return Budget{}, e
		}
		notes = append(notes, n)
	}
	s.mu.Lock()
	r := s.m.budgets[sp.Name]
	if r == nil {
		e = s.m.create(next, notes)
		r = next
	} else if r, e = s.m.update(next, now); e == nil {
		e = s.m.setNotifications(r, notes)
	}
	if e != nil {
		s.mu.Unlock()
		return Budget{}, e
	}
	if e := s.commitLocked(op(r)); e != nil {
		return Budget{}, e
	}
	return s.Get(sp.Name)
}

// Delete removes a budget, its notifications and its alert history, or returns
// ErrNotFound.
func (s *Service) Delete(name string) error {
	s.mu.Lock()
	if s.m.budgets[name] == nil {
		s.mu.Unlock()
		return fmt.Errorf("budget %q: %w", name, ErrNotFound)
	}
	delete(s.m.budgets, name)
	if e := s.commitLocked(account.Op{Bucket: bucketBudgets, Key: name}); e != nil {
		return e
	}
	return nil
}

// Reset drops every budget.
func (s *Service) Reset() error {
	s.mu.Lock()
	ops := make([]account.Op, 0, len(s.m.budgets))
	for name := range s.m.budgets {
		ops = append(ops, account.Op{Bucket: bucketBudgets, Key: name})
	}
	s.m.budgets = map[string]*record{}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return fmt.Errorf("resetting budgets: %w", err)
	}
	return nil
}

// commitLocked enqueues ops under the lock, releases it and waits for the store.
func (s *Service) commitLocked(ops ...account.Op) *account.Error {
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return account.Errorf(500, "InternalErrorException", "saving budgets: %v", err)
	}
	return nil
}
