package fakeec2

import (
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// DescribeFleets, DescribeFleetInstances and DeleteFleets: following a fleet ID from the
// evidence. The emulator's fleets are instant fleets: active until deleted, then
// deleted_terminating until their instances are gone, then deleted.

type xmlFleetTarget struct {
	Total    int64  `xml:"totalTargetCapacity"`
	OnDemand int64  `xml:"onDemandTargetCapacity"`
	Spot     int64  `xml:"spotTargetCapacity"`
	Default  string `xml:"defaultTargetCapacityType"`
}

type xmlFleetLTConfig struct {
	Spec      xmlFleetLTSpec      `xml:"launchTemplateSpecification"`
	Overrides []xmlFleetOverrides `xml:"overrides>item"`
}

type xmlFleetData struct {
	FleetID                   string             `xml:"fleetId"`
	FleetState                string             `xml:"fleetState"`
	ClientToken               string             `xml:"clientToken,omitempty"`
	CreateTime                string             `xml:"createTime"`
	Type                      string             `xml:"type"`
	ExcessPolicy              string             `xml:"excessCapacityTerminationPolicy"`
	FulfilledCapacity         float64            `xml:"fulfilledCapacity"`
	FulfilledOnDemandCapacity float64            `xml:"fulfilledOnDemandCapacity"`
	LaunchTemplateConfigs     []xmlFleetLTConfig `xml:"launchTemplateConfigs>item"`
	Target                    xmlFleetTarget     `xml:"targetCapacitySpecification"`
	TerminateWithExpiration   bool               `xml:"terminateInstancesWithExpiration"`
	ReplaceUnhealthy          bool               `xml:"replaceUnhealthyInstances"`
	Tags                      []wire.Tag         `xml:"tagSet>item"`
	Errors                    []xmlFleetError    `xml:"errorSet>item"`
	Instances                 []xmlFleetInstance `xml:"fleetInstanceSet>item"`
}

type describeFleetsResponse struct {
	wire.Header
	Fleets    []xmlFleetData `xml:"fleetSet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

// fleetState is the fleet's state as of now. Callers hold s.mu.
func (s *Server) fleetState(fl *ec2.Fleet) string {
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

func (s *Server) describeFleets(c *call) (wire.Response, *wire.Error) {
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
	resp := &describeFleetsResponse{NextToken: next}
	for _, fl := range page {
		resp.Fleets = append(resp.Fleets, s.wireFleet(fl))
	}
	return resp, nil
}

func (s *Server) wireFleet(fl *ec2.Fleet) xmlFleetData {
	x := xmlFleetData{FleetID: fl.ID, FleetState: s.fleetState(fl), ClientToken: fl.ClientToken, CreateTime: wire.FormatTime(fl.CreateTime),
		Type: "instant", ExcessPolicy: "termination", Tags: wire.Tags(fl.Tags), Errors: wireFleetErrors(fl.Errors),
		Target: xmlFleetTarget{Total: fl.TotalTarget, OnDemand: fl.OnDemandTarget, Spot: fl.SpotTarget, Default: fl.DefaultCapType}}
	for _, cfg := range fl.Configs {
		lc := xmlFleetLTConfig{Spec: xmlFleetLTSpec{LaunchTemplateID: cfg.TemplateID, LaunchTemplateName: cfg.TemplateName, Version: cfg.Version}}
		for _, o := range cfg.Overrides {
			lc.Overrides = append(lc.Overrides, *wirePool(cfg.PoolSpec(o, true)).Overrides)
		}
		x.LaunchTemplateConfigs = append(x.LaunchTemplateConfigs, lc)
	}
	x.Instances = s.fleetInstanceSet(fl)
	for _, fi := range x.Instances {
		x.FulfilledCapacity += float64(len(fi.InstanceIDs))
		if fi.Lifecycle == "on-demand" {
			x.FulfilledOnDemandCapacity += float64(len(fi.InstanceIDs))
		}
	}
	return x
}

// fleetInstanceSet groups the fleet's instances that still exist by launch pool, as
// CreateFleet reported them.
func (s *Server) fleetInstanceSet(fl *ec2.Fleet) []xmlFleetInstance {
	var out []xmlFleetInstance
	idx := map[string]int{}
	for _, id := range fl.Instances {
		in := s.model.Instances[id]
		if in == nil {
			continue
		}
		key := in.InstanceType + "/" + in.SubnetID + "/" + in.CapacityType
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, xmlFleetInstance{LaunchTemplateAndOverrides: s.fleetPoolWire(fl, in),
				Lifecycle: in.CapacityType, InstanceType: in.InstanceType})
		}
		out[i].InstanceIDs = append(out[i].InstanceIDs, id)
	}
	return out
}

func (s *Server) fleetPoolWire(fl *ec2.Fleet, in *ec2.Instance) xmlLTAndOverrides {
	for _, cfg := range fl.Configs {
		if cfg.TemplateID != "" && cfg.TemplateID != in.LaunchTemplateID || cfg.TemplateName != "" && cfg.TemplateName != in.LaunchTemplateName {
			continue
		}
		for _, o := range cfg.Overrides {
			if (o.InstanceType == "" || o.InstanceType == in.InstanceType) && (o.SubnetID == "" || o.SubnetID == in.SubnetID) &&
				(o.AvailabilityZone == "" || o.AvailabilityZone == in.Zone) {
				return wirePool(cfg.PoolSpec(o, true))
			}
		}
		return wirePool(cfg.PoolSpec(ec2.FleetOverride{}, false))
	}
	return xmlLTAndOverrides{LaunchTemplateSpecification: xmlFleetLTSpec{LaunchTemplateID: in.LaunchTemplateID}}
}

// --- DescribeFleetInstances ---

// describeFleetInstances is not a list: it takes one fleet and, for instant fleets, refuses.
func (s *Server) describeFleetInstances(c *call) (wire.Response, *wire.Error) {
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

type xmlDeleteFleetSuccess struct {
	FleetID  string `xml:"fleetId"`
	Current  string `xml:"currentFleetState"`
	Previous string `xml:"previousFleetState"`
}

type xmlDeleteFleetError struct {
	FleetID string `xml:"fleetId"`
	Error   struct {
		Code    string `xml:"code"`
		Message string `xml:"message"`
	} `xml:"error"`
}

type deleteFleetsResponse struct {
	wire.Header
	Successful   []xmlDeleteFleetSuccess `xml:"successfulFleetDeletionSet>item"`
	Unsuccessful []xmlDeleteFleetError   `xml:"unsuccessfulFleetDeletionSet>item"`
}

func (s *Server) deleteFleets(c *call) (wire.Response, *wire.Error) {
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
	resp := &deleteFleetsResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		if c.dryRun {
			return wire.DryRun()
		}
		for _, id := range ids {
			fl := s.model.Fleets[id]
			fail := func(code, msg string) {
				e := xmlDeleteFleetError{FleetID: id}
				e.Error.Code, e.Error.Message = code, msg
				resp.Unsuccessful = append(resp.Unsuccessful, e)
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
			resp.Successful = append(resp.Successful, xmlDeleteFleetSuccess{FleetID: id, Current: "deleted_terminating", Previous: prev})
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
func (s *Server) beginTermination(c *call, in *ec2.Instance) {
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
