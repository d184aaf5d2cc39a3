package fakeec2

import (
	"fmt"
	"strconv"
	"time"

	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// Lab time: the account's clock may run ahead of the base clock, so that a learner can
// skip hours of billing, budget alerts and instance timers in a second. Only the emulator
// follows it here; Karpenter's controllers follow it through WaitTimeChange, and
// Kubernetes' own timestamps keep the wall clock.

// timeWaitLimit bounds one long poll of GET /_karplab/time?waitChangeFrom=.
const timeWaitLimit = 20 * time.Second

// The bounds of one skip.
const (
	MinSkip = time.Second
	MaxSkip = 400 * 24 * time.Hour
)

// NodePoolTag is the tag Karpenter puts on what it launches; a skip's cost is grouped by it.
const NodePoolTag = "karpenter.sh/nodepool"

// LabTime is the account's clock: Now is lab time, Wall the base clock, Offset the lead.
type LabTime struct {
	Now        time.Time     `json:"now"`
	Wall       time.Time     `json:"wall"`
	Offset     time.Duration `json:"offset"` // nanoseconds
	OffsetText string        `json:"offsetText"`
}

// TimeSkip is what one SkipTime did: the span skipped, what the ledger accrued in it and
// the budget alerts that fired in it, each at the moment its spend crossed.
type TimeSkip struct {
	From       time.Time     `json:"from"`
	To         time.Time     `json:"to"`
	Offset     time.Duration `json:"offset"` // the lead after the skip, nanoseconds
	OffsetText string        `json:"offsetText"`
	// CostUSD is what every ledger entry accrued within [From, To]; CostByNodePool the
	// same by the karpenter.sh/nodepool tag ("" for untagged resources).
	CostUSD        float64            `json:"costUSD"`
	CostByNodePool map[string]float64 `json:"costByNodePool"`
	Alerts         []budgets.Alert    `json:"alerts"`
}

// TimeSkipRequest is the body of POST /_karplab/time/skip: a Go duration ("2h", "720h").
type TimeSkipRequest struct {
	Duration string `json:"duration"`
}

// CheckSkip says why d is no skip SkipTime takes, or nil.
func CheckSkip(d time.Duration) error {
	switch {
	case d < MinSkip:
		return fmt.Errorf("duration %s: skip at least 1s (e.g. 5m, 2h, 720h)", d)
	case d > MaxSkip:
		return fmt.Errorf("duration %s: skip at most 9600h (400 days) at a time", d)
	}
	return nil
}

// LabTime returns the account's clock.
func (s *Server) LabTime() LabTime {
	wall := s.clock.base.Now()
	off := s.clock.Offset()
	return LabTime{Now: wall.Add(off), Wall: wall, Offset: off, OffsetText: off.String()}
}

// SkipTime moves the account's clock d forward (CheckSkip's bounds) and makes the
// account behave as if d had passed: budgets are evaluated minute by minute through the
// span (1/1440 of it beyond a day), so each alert fires at its crossing with the spend
// then; instance and volume timers that came due have fired. The new offset is on disk
// before the walk.
func (s *Server) SkipTime(d time.Duration) (TimeSkip, error) {
	if err := CheckSkip(d); err != nil {
		return TimeSkip{}, err
	}
	s.skipMu.Lock()
	defer s.skipMu.Unlock()
	from := s.clock.Now()
	to := from.Add(d)
	step := time.Minute
	if d > 24*time.Hour {
		step = d / 1440
	}
	var offset time.Duration
	moved := false
	move := func() error {
		s.policyMu.Lock()
		before := s.clock.Offset()
		offset = before + d
		s.clock.setOffset(offset)
		wait := s.saveMeta()
		s.policyMu.Unlock()
		if err := <-wait; err != nil {
			s.policyMu.Lock()
			s.clock.setOffset(before)
			s.policyMu.Unlock()
			return fmt.Errorf("saving the lab clock: %w", err)
		}
		moved = true
		s.recordSkip(from, to, d)
		return nil
	}
	alerts, err := s.svc.budgets.EvaluateSpan(from, to, step, move)
	if err != nil && !moved {
		return TimeSkip{}, err
	}
	// The walk advanced the timers only if a budget read the ledger; now they all have.
	s.ec2.AdvanceTo(to)
	if err != nil {
		return TimeSkip{}, fmt.Errorf("lab time moved to %s, but evaluating budgets: %w", to.Format(time.RFC3339), err)
	}
	sk := TimeSkip{From: from, To: to, Offset: offset, OffsetText: offset.String(), Alerts: alerts}
	sk.CostUSD, sk.CostByNodePool = s.ec2.CostBetween(from, to, NodePoolTag)
	return sk, nil
}

// recordSkip writes the skip into the audit trail, dated when it was asked for: the
// alerts of the skipped span follow it.
func (s *Server) recordSkip(from, to time.Time, d time.Duration) {
	ev := &trail.AuditEvent{Service: "karplab", Time: from, Action: "SkipTime", Caller: "karplab", RequestID: s.ids.NewID(""),
		Parameters: map[string]string{"from": from.Format(time.RFC3339Nano), "to": to.Format(time.RFC3339Nano),
			"duration": d.String(), "seconds": strconv.FormatInt(int64(d/time.Second), 10)}}
	if err := <-s.recordAudit(ev); err != nil {
		s.log.Warn("recording a time skip", "error", err)
	}
}

// LabSkip is one skip of lab time, as the audit trail records it.
type LabSkip struct {
	Wall time.Time `json:"wall"` // when it happened, on the wall clock
	From time.Time `json:"from"` // lab time before the skip
	To   time.Time `json:"to"`   // lab time after it
}

// LabSkips reads the skips from the audit trail (karplab's SkipTime events, which a reset
// clears with the clock), oldest first: what puts a wall-clock time into lab time.
func LabSkips(audit []trail.AuditEvent) []LabSkip {
	var out []LabSkip
	var lead time.Duration
	for _, ev := range audit {
		if ev.Service != "karplab" || ev.Action != "SkipTime" {
			continue
		}
		from, err1 := time.Parse(time.RFC3339Nano, ev.Parameters["from"])
		to, err2 := time.Parse(time.RFC3339Nano, ev.Parameters["to"])
		if err1 != nil || err2 != nil || !to.After(from) {
			continue
		}
		out = append(out, LabSkip{Wall: from.Add(-lead).UTC(), From: from.UTC(), To: to.UTC()})
		lead += to.Sub(from)
	}
	return out
}

// Lead is how far lab time runs ahead of the wall clock after all the skips.
func Lead(skips []LabSkip) time.Duration {
	var lead time.Duration
	for _, s := range skips {
		lead += s.To.Sub(s.From)
	}
	return lead
}

// LeadAt is how far lab time ran ahead of the wall clock at wall time w.
func LeadAt(skips []LabSkip, w time.Time) time.Duration {
	var lead time.Duration
	for _, s := range skips {
		if s.Wall.After(w) {
			break
		}
		lead += s.To.Sub(s.From)
	}
	return lead
}
