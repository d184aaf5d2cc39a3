package fakeec2

import (
	"strconv"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// AWS Budgets meets the billing ledger here: a budget's spend is the ledger's, and the
// budgets are evaluated on every ledger change and every budgetTick, so that an alert fires
// close to the moment spend crosses its threshold (AWS itself refreshes a few times a day).

// budgetTick is how often, in real time, the budgets are evaluated at the emulator's time.
const budgetTick = 2 * time.Second

// budgetLoop evaluates the budgets on its own goroutine: ledger changes happen under EC2's
// lock, and an evaluation reads the ledger under it.
type budgetLoop struct {
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func (s *Server) openBudgets() error {
	svc, err := budgets.New(s.host, budgets.Options{Cost: s.ec2.BudgetCost, OnAlert: s.recordBudgetAlert})
	if err != nil {
		return err
	}
	s.svc.budgets = svc
	return nil
}

// startBudgetEvaluation starts the evaluation loop once the account is open.
func (s *Server) startBudgetEvaluation() {
	l := &budgetLoop{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.svc.budgetLoop = l
	go func() {
		defer close(l.done)
		tick := time.NewTicker(budgetTick)
		defer tick.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-l.wake:
			case <-tick.C:
			}
			if err := s.svc.budgets.Evaluate(); err != nil {
				s.log.Warn("evaluating budgets", "error", err)
			}
		}
	}()
}

// stopBudgetEvaluation stops the loop and waits for an evaluation in progress.
func (s *Server) stopBudgetEvaluation() {
	l := s.svc.budgetLoop
	if l == nil {
		return
	}
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
}

// noteLedgerChange asks for an evaluation soon. EC2 calls it under its lock; it never
// blocks.
func (s *Server) noteLedgerChange() {
	if l := s.svc.budgetLoop; l != nil {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// recordBudgetAlert writes an alert into the audit trail as AWS Budgets' own event, with
// the spend at that moment.
func (s *Server) recordBudgetAlert(a budgets.Alert) {
	usd := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	ev := &trail.AuditEvent{Service: "budgets", Time: a.Time, Action: budgets.ActionAlert, Caller: budgets.Caller,
		RequestID: s.ids.NewID(""), Parameters: map[string]string{
			"budgetName": a.Budget, "notificationType": a.NotificationType, "comparisonOperator": a.ComparisonOperator,
			"threshold": usd(a.Threshold), "thresholdType": a.ThresholdType, "thresholdUSD": usd(a.ThresholdUSD),
			"limitUSD": usd(a.LimitUSD), "actualSpend": usd(a.ActualUSD), "forecastedSpend": usd(a.ForecastUSD),
			"usdPerHour": usd(a.USDPerHour), "periodStart": a.PeriodStart.Format(time.RFC3339),
		}}
	if err := <-s.recordAudit(ev); err != nil {
		s.log.Warn("recording a budget alert", "budget", a.Budget, "error", err)
	}
}

// Budgets returns the account's AWS Budgets: its budgets, their spend and the alerts
// they fired (List, Get), and Put and Delete for the lab.
func (s *Server) Budgets() *budgets.Service { return s.svc.budgets }
