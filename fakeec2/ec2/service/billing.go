package service

import (
	"time"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/ec2"
)

// The ledger's records and arithmetic live in fakeec2/billing; here EC2 keeps the ledger
// under s.mu, opens and closes entries as resources start and stop, and persists them.
// Callers of the ledger helpers hold s.mu. Each change asks AWS Budgets to evaluate, and
// AWS Budgets and lab time read their spend from here.

// resumeLedger starts a new billed period at at, priced pricePerHour: a started instance
// (after a stop) or a volume whose size or type changed.
func (s *Service) resumeLedger(id string, at time.Time, pricePerHour float64) {
	e := s.ledger[id]
	if e == nil {
		return
	}
	e.PriorUSD = e.Accrue(at)
	t := at
	e.Resumed, e.Stopped, e.PricePerHour = &t, nil, pricePerHour
	s.save(bucketLedger, id, e)
	s.noteLedgerChange()
}

func (s *Service) startLedger(e *billing.LedgerEntry) {
	s.ledger[e.ResourceID] = e
	s.save(bucketLedger, e.ResourceID, e)
	s.noteLedgerChange()
}

func (s *Service) stopLedger(id string, at time.Time) {
	e := s.ledger[id]
	if e == nil || e.Stopped != nil {
		return
	}
	t := at
	e.Stopped = &t
	s.save(bucketLedger, id, e)
	s.noteLedgerChange()
}

func (s *Service) syncLedgerTags(id string, tags []ec2.Tag) {
	if e := s.ledger[id]; e != nil {
		e.Tags = ec2.TagsMap(tags)
		s.save(bucketLedger, id, e)
		s.noteLedgerChange()
	}
}

// Billing returns every ledger entry with its cost accrued until now, oldest first.
func (s *Service) Billing() billing.Billing {
	now := s.acct.Now()
	s.advanceIfDue(now)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return billing.Read(s.ledger, now)
}

// CostByTag groups the ledger by the value of tag key.
func (s *Service) CostByTag(key string) billing.CostReport {
	return s.Billing().ByTag(key)
}

// noteLedgerChange asks AWS Budgets for an evaluation soon. Callers hold s.mu.
func (s *Service) noteLedgerChange() { s.acct.LedgerChanged() }

// BudgetCost answers a budget's question from the ledger: what the matching resources
// accrued in the period so far, what those billing now add by its end, and their rate.
func (s *Service) BudgetCost(q budgets.CostQuery) budgets.Cost {
	s.advanceIfDue(q.Now)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var c budgets.Cost
	for _, e := range s.ledger {
		if !q.Match(e.Tags) {
			continue
		}
		c.ActualUSD += e.AccrueBetween(q.Start, q.Now)
		perHour, forecast := e.Outlook(q.Now, q.End)
		c.USDPerHour += perHour
		c.ForecastUSD += forecast
	}
	c.ForecastUSD += c.ActualUSD
	return c
}

// CostBetween is what the ledger accrued within [from, to], in total and by the value of
// tag.
func (s *Service) CostBetween(from, to time.Time, tag string) (float64, map[string]float64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return billing.Between(s.ledger, from, to, tag)
}
