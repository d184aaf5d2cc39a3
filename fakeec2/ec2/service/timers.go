package service

import (
	"container/heap"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// The lifecycle's timers: when each instance next changes state by itself (pending ->
// running, shutting-down -> terminated, terminated -> gone), fired by the requests that come
// after that time and by a skip of lab time.

type deadline struct {
	at time.Time
	id string
}

type deadlineHeap []deadline

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(deadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// scheduleDeadline records when the instance next changes state by itself.
func (s *Service) scheduleDeadline(in *ec2.Instance) {
	var at time.Time
	switch {
	case !in.ReclaimAt.IsZero() && (in.State == ec2.StatePending || in.State == ec2.StateRunning):
		at = in.ReclaimAt
		if in.State == ec2.StatePending && in.RunningAt.Before(at) {
			at = in.RunningAt // boot first; the reclaim is scheduled again from running
		}
	case in.State == ec2.StatePending:
		at = in.RunningAt
	case in.State == ec2.StateShuttingDown:
		at = in.TerminatedAt
	case in.State == ec2.StateStopping:
		at = in.StoppedAt
	case in.State == ec2.StateTerminated:
		at = in.TerminatedAt.Add(s.retention)
	default:
		return
	}
	heap.Push(&s.deadlines, deadline{at: at, id: in.ID})
}

// advanceIfDue applies the state changes whose time has come (pending -> running,
// shutting-down -> terminated with its volumes and ENI, expiry of terminated instances).
// Changes are dated at their deadline, not at the request that noticed them.
func (s *Service) advanceIfDue(now time.Time) {
	s.mu.RLock()
	due := len(s.deadlines) > 0 && !s.deadlines[0].at.After(now)
	s.mu.RUnlock()
	if !due {
		return
	}
	s.mu.Lock()
	s.advanceLocked(now)
	s.flushLocked() // not waited for: the same changes are re-derived after a crash
	s.mu.Unlock()
}

// AdvanceTo fires the instance and volume timers due by now (a skip of lab time).
func (s *Service) AdvanceTo(now time.Time) { s.advanceIfDue(now) }

func (s *Service) advanceLocked(now time.Time) {
	for len(s.deadlines) > 0 && !s.deadlines[0].at.After(now) {
		d := heap.Pop(&s.deadlines).(deadline)
		if s.advanceEBS(d, now) {
			continue
		}
		in := s.model.Instances[d.id]
		if in == nil {
			continue
		}
		switch in.State {
		case ec2.StatePending:
			if in.RunningAt.After(now) {
				continue // stale entry
			}
			in.State = ec2.StateRunning
			s.noteStateChange(in, ec2.StateRunning, in.RunningAt)
		case ec2.StateRunning:
			if in.ReclaimAt.IsZero() || in.ReclaimAt.After(now) {
				continue // stale entry
			}
			_, _ = s.reclaimSpotLocked(in, in.ReclaimAt) // its audit record is not waited for, as here nothing is
			continue
		case ec2.StateStopping:
			if in.StoppedAt.After(now) {
				continue
			}
			in.State = ec2.StateStopped
			s.noteStateChange(in, ec2.StateStopped, in.StoppedAt)
		case ec2.StateShuttingDown:
			if in.TerminatedAt.After(now) {
				continue
			}
			s.finishTermination(in)
		case ec2.StateTerminated:
			if in.TerminatedAt.Add(s.retention).After(now) {
				continue
			}
			delete(s.model.Instances, in.ID)
			s.model.InstTags.Remove(in.ID, in.Tags)
			s.remove(bucketInstances, in.ID)
			continue
		default:
			continue
		}
		s.save(bucketInstances, in.ID, in)
		s.scheduleDeadline(in)
	}
}

// finishTermination moves a shutting-down instance to terminated: volumes marked
// DeleteOnTermination are deleted (their billing stops), others are detached; the primary
// ENI is deleted and its address freed.
func (s *Service) finishTermination(in *ec2.Instance) {
	at := in.TerminatedAt
	in.State = ec2.StateTerminated
	s.noteStateChange(in, ec2.StateTerminated, at)
	if in.StateReasonCode == "" {
		in.StateReason = "Client.UserInitiatedShutdown: User initiated shutdown"
	}
	for _, av := range in.Volumes {
		v := s.model.Volumes[av.VolumeID]
		if v == nil {
			continue
		}
		if av.DeleteOnTermination {
			delete(s.model.Volumes, v.ID)
			s.remove(bucketVolumes, v.ID)
			s.stopLedger(v.ID, at)
			continue
		}
		v.State, v.InstanceID, v.Device, v.AttachTime = "available", "", "", time.Time{}
		v.AttachState, v.Until = "", time.Time{}
		s.save(bucketVolumes, v.ID, v)
	}
	s.releaseSecondaryENIs(in)
	if n := s.model.ENIs[in.ENIID]; n != nil {
		if n.DeleteOnTermination {
			delete(s.model.ENIs, n.ID)
			s.remove(bucketENIs, n.ID)
			s.model.FreeIP(n.SubnetID, n.PrivateIP)
		} else {
			n.Status, n.InstanceID, n.AttachmentID = "available", "", ""
			s.save(bucketENIs, n.ID, n)
		}
	}
}
