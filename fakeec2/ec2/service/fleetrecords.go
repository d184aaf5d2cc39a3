package service

import (
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// DescribeFleets, DescribeFleetInstances and DeleteFleets: following a fleet ID from the
// evidence. The emulator's fleets are instant fleets: active until deleted, then
// deleted_terminating until their instances are gone, then deleted.

// fleetState is the fleet's state as of now. Callers hold s.mu.
func (s *Service) fleetState(fl *ec2.Fleet) string {
	if fl.State == "" {
		return "active"
	}
	for _, id := range fl.Instances {
		if in := s.model.Instances[id]; in != nil && in.State != ec2.StateTerminated {
			return "deleted_terminating"
		}
	}
	return "deleted"
}

var fleetAttrs = wire.AttrTable[*ec2.Fleet]{
	"fleet-state": nil, // set per call
	"type":        func(*ec2.Fleet) []string { return wire.One("instant") },
	"activity-status": func(*ec2.Fleet) []string {
		return nil
	},
	"excess-capacity-termination-policy": func(*ec2.Fleet) []string { return wire.One("termination") },
	"replace-unhealthy-instances":        func(*ec2.Fleet) []string { return wire.One("false") },
}

func errFleetNotFound(id string) *wire.Error {
	return wire.BadRequest("InvalidFleetId.NotFound", "The fleet ID '%s' does not exist", id)
}

func (s *Service) describeFleets(c *call) (wire.Response, *wire.Error) {
	attrs := wire.AttrTable[*ec2.Fleet]{}
	for k, f := range fleetAttrs {
		attrs[k] = f
	}
	attrs["fleet-state"] = func(fl *ec2.Fleet) []string { return wire.One(s.fleetState(fl)) } // called under s.mu
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Fleet]{Attrs: attrs, Tags: func(fl *ec2.Fleet) []ec2.Tag { return fl.Tags },
		Min: 1, Max: 1000, IDParam: "FleetId", Seq: func(fl *ec2.Fleet) uint64 { return fl.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, aerr := req.Run(s.model.Fleets, errFleetNotFound)
	if aerr != nil {
		return nil, aerr
	}
	env := s.env()
	return &wire.DescribeFleetsResponse{NextToken: next, Fleets: wire.Items(page, func(fl *ec2.Fleet) wire.FleetItem {
		return env.Fleet(fl, s.fleetState(fl))
	})}, nil
}

// --- DescribeFleetInstances ---

// describeFleetInstances is not a list: it takes one fleet and, for instant fleets, refuses.
func (s *Service) describeFleetInstances(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("FleetId")
	if id == "" {
		return nil, wire.Missing("FleetId")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.model.Fleets[id] == nil {
		return nil, errFleetNotFound(id)
	}
	// AWS: "DescribeFleetInstances does not support fleets of type instant. Instead,
	// use DescribeFleets, specifying the instant fleet ID in the request."
	return nil, wire.InvalidValue("DescribeFleetInstances does not support fleets of type instant (%s). Use DescribeFleets with the fleet ID.", id)
}

// --- DeleteFleets ---

func (s *Service) deleteFleets(c *call) (wire.Response, *wire.Error) {
	ids := c.q.Strs("FleetId")
	if len(ids) == 0 {
		return nil, wire.Missing("FleetId")
	}
	if len(ids) > 25 {
		return nil, wire.InvalidValue("You can delete up to 25 instant fleets in a single request.")
	}
	term, ok, err := c.q.Bool("TerminateInstances")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, wire.Missing("TerminateInstances")
	}
	resp := &wire.DeleteFleetsResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		if c.dryRun {
			return wire.DryRun()
		}
		for _, id := range ids {
			fl := s.model.Fleets[id]
			fail := func(code, msg string) {
				resp.Unsuccessful = append(resp.Unsuccessful, wire.DeleteFleetError(id, code, msg))
			}
			switch {
			case !strings.HasPrefix(id, "fleet-"):
				fail("fleetIdMalformed", "The fleet ID '"+id+"' is malformed")
				continue
			case fl == nil:
				fail("fleetIdDoesNotExist", "The fleet ID '"+id+"' does not exist")
				continue
			case fl.State != "":
				fail("fleetNotInDeletableState", "The fleet '"+id+"' is already deleted")
				continue
			case !term:
				fail("fleetNotInDeletableState", "NoTerminateInstances is not supported for fleets of type instant")
				continue
			}
			prev := s.fleetState(fl)
			fl.State = "deleted"
			s.save(bucketFleets, fl.ID, fl)
			for _, iid := range fl.Instances {
				if in := s.model.Instances[iid]; in != nil {
					s.beginTermination(c, in)
				}
			}
			resp.Successful = append(resp.Successful, wire.DeleteFleetSuccessItem{FleetID: id, Current: "deleted_terminating", Previous: prev})
		}
		s.advanceLocked(c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// beginTermination moves an instance to shutting-down as TerminateInstances does.
// Callers hold s.mu.
func (s *Service) beginTermination(c *call, in *ec2.Instance) {
	switch in.State {
	case ec2.StatePending, ec2.StateRunning, ec2.StateStopping, ec2.StateStopped:
	default:
		return
	}
	in.State = ec2.StateShuttingDown
	in.TerminateRequestedAt = c.now
	in.TerminatedAt = c.now.Add(s.shutdownDelay)
	in.TransitionReason = "User initiated (" + c.now.UTC().Format("2006-01-02 15:04:05 GMT") + ")"
	s.stopLedger(in.ID, c.now)
	s.save(bucketInstances, in.ID, in)
	s.scheduleDeadline(in)
	s.noteStateChange(in, ec2.StateShuttingDown, c.now)
	c.event.Terminated = append(c.event.Terminated, in.ID)
}
