package fakeec2

import (
	"fmt"
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
)

// InterruptSpot reclaims spot instances as EC2 does when it needs the capacity back: each
// goes shutting-down at once with state reason Server.SpotInstanceTermination, its billing
// stops, its DeleteOnTermination volumes and primary ENI go when it terminates, and the audit
// trail records one BidEvictedEvent by ec2.amazonaws.com per instance. The two-minute warning
// EC2 sends through EventBridge is not modelled (the lab has no EventBridge): the instance is
// simply gone. An instance that is unknown, not spot, or not pending or running is an error,
// and then nothing changes.
func (s *Server) InterruptSpot(ids []string) ([]AuditEvent, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("no instance to interrupt")
	}
	now := s.clock.Now()
	s.mu.Lock()
	s.advanceLocked(now)
	for _, id := range ids {
		in := s.instances[id]
		switch {
		case in == nil:
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s does not exist", id)
		case in.CapacityType != "spot":
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is %s: only spot instances are interrupted", id, in.CapacityType)
		case in.State != statePending && in.State != stateRunning:
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is %s, not pending or running", id, in.State)
		}
	}
	var events []*AuditEvent
	for _, id := range ids {
		in := s.instances[id]
		in.State = stateShuttingDown
		in.TerminateRequestedAt = now
		in.TerminatedAt = now.Add(s.shutdownDelay)
		in.TransitionReason = fmt.Sprintf("Service initiated (%s)", now.UTC().Format("2006-01-02 15:04:05 GMT"))
		in.StateReasonCode = StateReasonSpotTermination
		in.StateReason = StateReasonSpotTermination + ": Spot instance termination"
		s.stopLedger(in.ID, now)
		s.save(bucketInstances, in.ID, in)
		s.scheduleDeadline(in)
		events = append(events, &AuditEvent{
			Time: now, Action: ActionBidEvicted, Caller: AWSServiceCaller, RequestID: s.ids.NewID(""),
			Parameters: map[string]string{"InstanceId.1": id, "SpotInstanceRequestId": in.SpotRequestID},
			Terminated: []string{id},
		})
	}
	s.advanceLocked(now) // a zero shutdown delay terminates at once
	wait := s.flushLocked()
	s.mu.Unlock()
	err := <-wait
	out := make([]AuditEvent, 0, len(events))
	for _, e := range events {
		if aerr := <-s.recordAudit(e); err == nil {
			err = aerr
		}
		out = append(out, *e)
	}
	if err != nil {
		return nil, fmt.Errorf("persisting the interruption: %w", err)
	}
	return out, nil
}

// removePublished drops the images PublishRelease added. Callers hold s.mu.
func (s *Server) removePublished() {
	for id, im := range s.images {
		if im.Published {
			delete(s.images, id)
			s.remove(bucketImages, id)
		}
	}
}

func (in *instance) stateReasonCode() string {
	if in.StateReasonCode != "" {
		return in.StateReasonCode
	}
	return "Client.UserInitiatedShutdown"
}

// shuttingDownReason is the state reason message while the instance shuts down.
func (in *instance) shuttingDownReason() string {
	if in.StateReasonCode != "" {
		return in.StateReason
	}
	return "Client.UserInitiatedShutdown: User initiated shutdown"
}
