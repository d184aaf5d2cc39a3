package fakeec2

import (
	"time"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
)

// The ledger's records and arithmetic live in fakeec2/billing; here the Server keeps the
// ledger under s.mu, opens and closes entries as resources start and stop, and persists
// them. Callers of the ledger helpers hold s.mu. Each change asks AWS Budgets to evaluate.

// resumeLedger starts a new billed period at at, priced pricePerHour: a started instance
// (after a stop) or a volume whose size or type changed.
func (s *Server) resumeLedger(id string, at time.Time, pricePerHour float64) {
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

func (s *Server) startLedger(e *billing.LedgerEntry) {
	s.ledger[e.ResourceID] = e
	s.save(bucketLedger, e.ResourceID, e)
	s.noteLedgerChange()
}

func (s *Server) stopLedger(id string, at time.Time) {
	e := s.ledger[id]
	if e == nil || e.Stopped != nil {
		return
	}
	t := at
	e.Stopped = &t
	s.save(bucketLedger, id, e)
	s.noteLedgerChange()
}

func (s *Server) syncLedgerTags(id string, tags []ec2.Tag) {
	if e := s.ledger[id]; e != nil {
		e.Tags = ec2.TagsMap(tags)
		s.save(bucketLedger, id, e)
		s.noteLedgerChange()
	}
}

// Billing returns every ledger entry with its cost accrued until now, oldest first.
func (s *Server) Billing() billing.Billing {
	now := s.clock.Now()
	s.advanceIfDue(now)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return billing.Read(s.ledger, now)
}

// CostByTag groups the ledger by the value of tag key.
func (s *Server) CostByTag(key string) billing.CostReport {
	return s.Billing().ByTag(key)
}
