package service

import (
	"fmt"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/events"
	"github.com/karplab/karplab/fakeec2/trail"
)

// What AWS itself does to an account, outside any caller's API request: reclaiming spot
// capacity and publishing new EKS-optimized AMIs. The admin API triggers them (a lab stages
// them); they change state exactly as the real events would, and the audit trail records
// them the way CloudTrail does (a service identity, not an access key).

// AWSServiceCaller is the audit trail's caller of events EC2 causes itself (CloudTrail's
// AWSService identity, invoked by ec2.amazonaws.com).
const AWSServiceCaller = "ec2.amazonaws.com"

// Spot interruption, as DescribeInstances states its reason and CloudTrail names its event.
const (
	StateReasonSpotTermination = "Server.SpotInstanceTermination"
	ActionBidEvicted           = "BidEvictedEvent"
	// ActionSpotWarning is the audit trail's record of a two-minute warning; its
	// ReclaimAt parameter is when EC2 takes the instance back.
	ActionSpotWarning = "SpotInstanceInterruptionWarning"
)

// InterruptSpot reclaims spot instances as EC2 does when it needs the capacity back. Each
// first gets EC2's Spot Instance Interruption Warning (an EventBridge event delivered to the
// interruption queue); warning later (AWS: two minutes; zero: at once) it goes
// shutting-down with state reason Server.SpotInstanceTermination, its billing stops, its
// DeleteOnTermination volumes and primary ENI go when it terminates, and the audit trail
// records one SpotInstanceInterruptionWarning (with a warning) and one BidEvictedEvent by
// ec2.amazonaws.com per instance. An instance that is
// unknown, not spot, or not pending or running is an error, and then nothing changes.
// The returned events are the reclaims done at once (none when a warning is given).
func (s *Service) InterruptSpot(ids []string, warning time.Duration) ([]trail.AuditEvent, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("no instance to interrupt")
	}
	now := s.acct.Now()
	s.mu.Lock()
	s.advanceLocked(now)
	for _, id := range ids {
		in := s.model.Instances[id]
		switch {
		case in == nil:
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s does not exist", id)
		case in.CapacityType != "spot":
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is %s: only spot instances are interrupted", id, in.CapacityType)
		case in.State != ec2.StatePending && in.State != ec2.StateRunning:
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is %s, not pending or running", id, in.State)
		case !in.ReclaimAt.IsZero():
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is already being reclaimed (at %s)", id, in.ReclaimAt.UTC().Format(time.RFC3339))
		}
	}
	var waits []<-chan error
	var reclaimed []*trail.AuditEvent
	for _, id := range ids {
		in := s.model.Instances[id]
		s.deliverEvent(events.SpotInterruptionWarning(s.account, s.region, id, now, "terminate"))
		if warning > 0 {
			in.ReclaimAt = now.Add(warning)
			s.save(bucketInstances, in.ID, in)
			s.scheduleDeadline(in)
			waits = append(waits, s.acct.Record(&trail.AuditEvent{
				Service: "ec2", Time: now, Action: ActionSpotWarning, Caller: AWSServiceCaller, RequestID: s.ids.NewID(""),
				Parameters: map[string]string{"InstanceId.1": in.ID, "InstanceAction": "terminate", "ReclaimAt": in.ReclaimAt.UTC().Format(time.RFC3339Nano)},
			}))
			continue
		}
		ev, wait := s.reclaimSpotLocked(in, now)
		reclaimed, waits = append(reclaimed, ev), append(waits, wait)
	}
	s.advanceLocked(now) // a zero shutdown delay terminates at once
	wait := s.flushLocked()
	s.mu.Unlock()
	err := <-wait
	for _, w := range waits {
		if aerr := <-w; err == nil {
			err = aerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("persisting the interruption: %w", err)
	}
	out := make([]trail.AuditEvent, 0, len(reclaimed))
	for _, e := range reclaimed {
		out = append(out, *e)
	}
	return out, nil
}

// reclaimSpotLocked takes a spot instance back now: shutting-down with the spot
// termination reason, its billing stopped, a BidEvictedEvent in the audit trail (the
// channel reports when it is on disk). Callers hold s.mu.
func (s *Service) reclaimSpotLocked(in *ec2.Instance, now time.Time) (*trail.AuditEvent, <-chan error) {
	in.State = ec2.StateShuttingDown
	in.ReclaimAt = time.Time{}
	in.TerminateRequestedAt = now
	in.TerminatedAt = now.Add(s.shutdownDelay)
	in.TransitionReason = fmt.Sprintf("Service initiated (%s)", now.UTC().Format("2006-01-02 15:04:05 GMT"))
	in.StateReasonCode = StateReasonSpotTermination
	in.StateReason = StateReasonSpotTermination + ": Spot instance termination"
	s.stopLedger(in.ID, now)
	s.save(bucketInstances, in.ID, in)
	s.scheduleDeadline(in)
	s.noteStateChange(in, ec2.StateShuttingDown, now)
	ev := &trail.AuditEvent{
		Service: "ec2", Time: now, Action: ActionBidEvicted, Caller: AWSServiceCaller, RequestID: s.ids.NewID(""),
		Parameters: map[string]string{"InstanceId.1": in.ID, "SpotInstanceRequestId": in.SpotRequestID},
		Terminated: []string{in.ID},
	}
	return ev, s.acct.Record(ev)
}

// removePublished drops the images PublishRelease added. Callers hold s.mu.
func (s *Service) removePublished() {
	for id, im := range s.model.Images {
		if im.Published {
			delete(s.model.Images, id)
			s.remove(bucketImages, id)
		}
	}
}
