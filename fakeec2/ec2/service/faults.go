package service

import (
	"fmt"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// Fault kinds.
const (
	// FaultInsufficientCapacity makes launches of InstanceType in Zone (and CapacityType,
	// if set) fail with InsufficientInstanceCapacity; CreateFleet reports the override in
	// Errors[] and tries the next one.
	FaultInsufficientCapacity = "insufficient-capacity"
	// FaultLeak makes TerminateInstances answer as if it worked while the instance keeps
	// running (and billing): a leaked instance. InstanceIDs limits it to those instances.
	FaultLeak = "leak"
	// FaultLatency delays every call of Action ("" or "*": every action) by LatencyMS.
	FaultLatency = "latency"
	// FaultThrottle answers RequestLimitExceeded to a fraction Rate (0..1] of the calls of
	// Action, spread evenly (deterministic: rate 0.5 throttles every second call).
	FaultThrottle = "throttle"
	// FaultLeakENIs makes a terminated instance leave its secondary network interfaces
	// behind, available and holding their addresses, as VPC CNI leaks do (InstanceIDs
	// limits it).
	FaultLeakENIs = "leak-enis"
)

// Fault is an injected failure, set through the admin API.
type Fault struct {
	ID           string   `json:"id,omitempty"` // assigned when set
	Kind         string   `json:"kind"`
	InstanceType string   `json:"instanceType,omitempty"`
	Zone         string   `json:"zone,omitempty"`
	CapacityType string   `json:"capacityType,omitempty"`
	InstanceIDs  []string `json:"instanceIds,omitempty"`
	Action       string   `json:"action,omitempty"`
	LatencyMS    int      `json:"latencyMs,omitempty"`
	Rate         float64  `json:"rate,omitempty"`
	// Remaining is how many more times the fault fires; 0 means until cleared.
	Remaining int `json:"remaining,omitempty"`
}

func (f Fault) validate() error {
	switch f.Kind {
	case FaultInsufficientCapacity:
		if f.InstanceType == "" && f.Zone == "" {
			return fmt.Errorf("an insufficient-capacity fault needs instanceType or zone")
		}
	case FaultLeak, FaultLeakENIs:
	case FaultLatency:
		if f.LatencyMS <= 0 || f.LatencyMS > 600000 {
			return fmt.Errorf("latencyMs must be in 1..600000")
		}
	case FaultThrottle:
		if f.Rate <= 0 || f.Rate > 1 {
			return fmt.Errorf("rate must be in (0, 1]")
		}
	default:
		return fmt.Errorf("unknown fault kind %q (want %s, %s, %s, %s or %s)", f.Kind,
			FaultInsufficientCapacity, FaultLeak, FaultLeakENIs, FaultLatency, FaultThrottle)
	}
	return nil
}

func (f Fault) matchesAction(action string) bool {
	return f.Action == "" || f.Action == "*" || strings.EqualFold(f.Action, action)
}

// applyRequestFaults sleeps for latency faults and throttles; it runs before the handler.
func (s *Service) applyRequestFaults(c *call) *wire.Error {
	var sleep time.Duration
	var throttled *Fault
	s.mu.Lock()
	changed := false
	for i := range s.faults {
		f := &s.faults[i]
		switch f.Kind {
		case FaultLatency:
			if f.matchesAction(c.action) {
				sleep += time.Duration(f.LatencyMS) * time.Millisecond
				c.event.Faults = append(c.event.Faults, f.ID)
			}
		case FaultThrottle:
			if throttled == nil && f.matchesAction(c.action) {
				n := s.throttleN[f.ID]
				s.throttleN[f.ID] = n + 1
				// Fire when the running count of throttled calls steps up: evenly spread.
				if int64(float64(n+1)*f.Rate) > int64(float64(n)*f.Rate) {
					throttled = f
					c.event.Faults = append(c.event.Faults, f.ID)
				}
			}
		}
	}
	if throttled != nil && throttled.Remaining > 0 {
		throttled.Remaining--
		if throttled.Remaining == 0 {
			s.dropFault(throttled.ID)
		}
		changed = true
	}
	if changed {
		s.saveMeta()
		s.flushLocked()
	}
	s.mu.Unlock()
	if sleep > 0 {
		time.Sleep(sleep)
	}
	if throttled != nil {
		return wire.Throttled()
	}
	return nil
}

// capacityFault returns the insufficient-capacity fault hitting a launch, if any.
// Callers hold s.mu.
func (s *Service) capacityFault(instanceType, zone, capacityType string) *Fault {
	for i := range s.faults {
		f := &s.faults[i]
		if f.Kind != FaultInsufficientCapacity {
			continue
		}
		if (f.InstanceType == "" || f.InstanceType == instanceType) &&
			(f.Zone == "" || f.Zone == zone) &&
			(f.CapacityType == "" || f.CapacityType == capacityType) {
			return f
		}
	}
	return nil
}

// leakFault returns the leak fault for an instance being terminated, if any.
func (s *Service) leakFault(instanceID string) *Fault { return s.instanceFault(FaultLeak, instanceID) }

// eniLeakFault returns the leak-enis fault for an instance being terminated, if any.
func (s *Service) eniLeakFault(instanceID string) *Fault {
	return s.instanceFault(FaultLeakENIs, instanceID)
}

func (s *Service) instanceFault(kind, instanceID string) *Fault {
	for i := range s.faults {
		f := &s.faults[i]
		if f.Kind != kind {
			continue
		}
		if len(f.InstanceIDs) == 0 {
			return f
		}
		for _, id := range f.InstanceIDs {
			if id == instanceID {
				return f
			}
		}
	}
	return nil
}

// consumeFault counts one firing of f; callers hold s.mu and save meta.
func (s *Service) consumeFault(f *Fault) {
	if f.Remaining <= 0 {
		return
	}
	f.Remaining--
	if f.Remaining == 0 {
		s.dropFault(f.ID)
	}
}

func (s *Service) dropFault(id string) {
	out := s.faults[:0]
	for _, f := range s.faults {
		if f.ID != id {
			out = append(out, f)
		}
	}
	s.faults = out
}

// Faults returns the active faults.
func (s *Service) Faults() []Fault {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]Fault{}, s.faults...)
}

// SetFault adds a fault and returns it with its ID.
func (s *Service) SetFault(f Fault) (Fault, error) {
	if err := f.validate(); err != nil {
		return Fault{}, err
	}
	s.mu.Lock()
	f.ID = s.newFaultID()
	s.faults = append(s.faults, f)
	s.saveMeta()
	wait := s.flushLocked()
	s.mu.Unlock()
	return f, <-wait
}

func (s *Service) newFaultID() string {
	for n := len(s.faults) + 1; ; n++ {
		id := fmt.Sprintf("fault-%d", n)
		used := false
		for _, f := range s.faults {
			used = used || f.ID == id
		}
		if !used {
			return id
		}
	}
}

// ClearFaults removes the fault with id, or all faults when id is "".
func (s *Service) ClearFaults(id string) error {
	s.mu.Lock()
	if id == "" {
		s.faults = nil
	} else {
		s.dropFault(id)
	}
	s.saveMeta()
	wait := s.flushLocked()
	s.mu.Unlock()
	return <-wait
}
