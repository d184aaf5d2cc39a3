package service

import (
	"fmt"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/events"
	"github.com/karplab/karplab/fakeec2/trail"
)

// EventBridge, as far as the lab needs it: EC2's events (state changes, spot interruption
// warnings, rebalance recommendations, AWS Health scheduled changes) go to the
// interruption queue, as the rules of Karpenter's CloudFormation stack route them on AWS.
//
// Delivery runs on its own goroutine, in order: EC2 raises events while holding its store
// lock, and SQS's handlers ask the policy, which takes that lock too.
type eventBus struct {
	mu      sync.Mutex
	pending []string
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// DefaultSpotWarning is how long before reclaiming a spot instance EC2 warns: two minutes.
const DefaultSpotWarning = 2 * time.Minute

// StartEvents starts delivering EC2's events to the account (Account.SendEvent).
func (s *Service) StartEvents() {
	s.bus = &eventBus{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.deliverLoop(s.bus)
}

// deliverEvent queues an EventBridge document for the interruption queue.
func (s *Service) deliverEvent(doc string) {
	if s.bus == nil {
		return
	}
	b := s.bus
	b.mu.Lock()
	b.pending = append(b.pending, doc)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (s *Service) deliverLoop(b *eventBus) {
	defer close(b.done)
	for {
		select {
		case <-b.wake:
		case <-b.stop:
			s.drainEvents(b) // what was raised before Close still arrives
			return
		}
		s.drainEvents(b)
	}
}

func (s *Service) drainEvents(b *eventBus) {
	b.mu.Lock()
	docs := b.pending
	b.pending = nil
	b.mu.Unlock()
	for _, d := range docs {
		if err := s.acct.SendEvent(d); err != nil {
			s.log.Warn("delivering an EC2 event to the interruption queue", "error", err)
		}
	}
}

// StopEvents delivers what is pending and stops the bus; Detach then drops it under the
// store lock, so a straggling handler raises into nothing rather than a closed bus.
func (s *Service) StopEvents() {
	s.mu.RLock()
	b := s.bus
	s.mu.RUnlock()
	if b == nil {
		return
	}
	close(b.stop)
	<-b.done
}

// EventKind names an event a person (or a lab) can make EC2 raise on an instance.
type EventKind string

const (
	EventRebalance       EventKind = "rebalance"        // EC2 Instance Rebalance Recommendation
	EventScheduledChange EventKind = "scheduled-change" // AWS Health: instance retirement scheduled
	EventSpotWarning     EventKind = "spot-warning"     // the two-minute warning alone, no reclaim
)

// RaiseEvent makes EC2 (or AWS Health) send kind's event for the instances, as AWS does
// on its own: the document reaches the interruption queue and the audit trail records it
// as the service's. Nothing else changes: a rebalance recommendation or a scheduled
// retirement is advice, and acting on it is Karpenter's job.
func (s *Service) RaiseEvent(kind EventKind, ids []string) ([]trail.AuditEvent, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("no instance to raise %s for", kind)
	}
	now := s.acct.Now()
	s.mu.Lock()
	s.advanceLocked(now)
	for _, id := range ids {
		in := s.model.Instances[id]
		if in == nil || (in.State != ec2.StatePending && in.State != ec2.StateRunning) {
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is not pending or running", id)
		}
		if kind == EventSpotWarning && in.CapacityType != "spot" {
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is %s: only spot instances get interruption warnings", id, in.CapacityType)
		}
	}
	var docs []string
	action := ""
	switch kind {
	case EventRebalance:
		action = "RebalanceRecommendation"
		for _, id := range ids {
			docs = append(docs, events.RebalanceRecommendation(s.account, s.region, id, now))
		}
	case EventSpotWarning:
		action = ActionSpotWarning
		for _, id := range ids {
			docs = append(docs, events.SpotInterruptionWarning(s.account, s.region, id, now, "terminate"))
		}
	case EventScheduledChange:
		action = "ScheduledChange"
		start := now.Add(14 * 24 * time.Hour)
		docs = append(docs, events.ScheduledChange(s.account, s.region, ids, now, start, start.Add(7*24*time.Hour), events.EventTypeRetirement))
	default:
		s.mu.Unlock()
		return nil, fmt.Errorf("unknown event %q: want %s, %s or %s", kind, EventRebalance, EventScheduledChange, EventSpotWarning)
	}
	for _, d := range docs {
		s.deliverEvent(d)
	}
	s.mu.Unlock()
	ev := &trail.AuditEvent{Service: "ec2", Time: now, Action: action, Caller: AWSServiceCaller, RequestID: s.ids.NewID(""),
		Parameters: map[string]string{"InstanceIds": fmt.Sprint(ids)}}
	if err := <-s.acct.Record(ev); err != nil {
		return nil, fmt.Errorf("recording the event: %w", err)
	}
	return []trail.AuditEvent{*ev}, nil
}

// noteStateChange tells the account an instance moved to state ("pending", "running",
// "stopping", "stopped", "shutting-down", "terminated") at at: EventBridge's EC2 Instance
// State-change Notification, delivered to the interruption queue. Callers hold s.mu.
func (s *Service) noteStateChange(in *ec2.Instance, state string, at time.Time) {
	s.deliverEvent(events.StateChange(s.account, s.region, in.ID, at, state))
}
