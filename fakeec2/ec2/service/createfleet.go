package service

import (
	"fmt"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

func parseFleetConfigs(c *call) ([]*ec2.FleetConfig, *wire.Error) {
	cfgs := c.q.List("LaunchTemplateConfigs")
	if len(cfgs) == 0 {
		return nil, wire.Missing("LaunchTemplateConfigs")
	}
	var out []*ec2.FleetConfig
	for i, cq := range cfgs {
		spec := cq.Get("LaunchTemplateSpecification")
		if spec == nil {
			return nil, wire.Missing(fmt.Sprintf("LaunchTemplateConfigs.%d.LaunchTemplateSpecification", i+1))
		}
		fc := &ec2.FleetConfig{TemplateID: spec.Str("LaunchTemplateId"), TemplateName: spec.Str("LaunchTemplateName"), Version: spec.Str("Version")}
		if fc.TemplateID == "" && fc.TemplateName == "" {
			return nil, wire.Missing("LaunchTemplateId or LaunchTemplateName")
		}
		if fc.TemplateID != "" && fc.TemplateName != "" {
			return nil, wire.BadRequest(wire.CodeInvalidParameterCombination, "Specify either LaunchTemplateId or LaunchTemplateName, not both.")
		}
		for _, oq := range cq.List("Overrides") {
			o := ec2.FleetOverride{InstanceType: oq.Str("InstanceType"), SubnetID: oq.Str("SubnetId"),
				AvailabilityZone: oq.Str("AvailabilityZone"), ImageID: oq.Str("ImageId"), MaxPrice: oq.Str("MaxPrice")}
			if v, ok, err := oq.Float("Priority"); err != nil {
				return nil, err
			} else if ok {
				o.Priority = &v
			}
			if v, ok, err := oq.Float("WeightedCapacity"); err != nil {
				return nil, err
			} else if ok {
				o.WeightedCapacity = &v
			}
			fc.Overrides = append(fc.Overrides, o)
		}
		out = append(out, fc)
	}
	return out, nil
}

var fleetTagTypes = map[string]bool{"instance": true, "volume": true, "network-interface": true,
	"spot-instances-request": true, "fleet": true}

// fleetRequest is a decoded CreateFleet request, checked before the store lock is taken.
type fleetRequest struct {
	configs []*ec2.FleetConfig
	// The target: onDemand and spot include their share of the default capacity type's rest.
	total, onDemand, spot          int64
	defaultCapType                 string
	onDemandStrategy, spotStrategy string
	tagSpecs                       []ec2.TagSpec // as sent: laid over each template's
	fleetTags                      []ec2.Tag
	clientToken                    string
}

// createFleet emulates an instant fleet: parse, plan the pools (createfleet_plan.go), launch the
// plan, answer it.
func (s *Service) createFleet(c *call) (wire.Response, *wire.Error) {
	req, err := parseCreateFleet(c)
	if err != nil {
		return nil, err
	}
	var resp *wire.CreateFleetResponse
	aerr := s.mutate(c, func() *wire.Error {
		plan, e := s.planFleet(req, c.caller, c.requestID, c.dryRun)
		if e != nil {
			return e
		}
		fl, launched, e := s.launchFleet(c, req, plan)
		if e != nil {
			return e
		}
		resp = renderFleet(fl, launched)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

func parseCreateFleet(c *call) (*fleetRequest, *wire.Error) {
	typ := c.q.Str("Type")
	if typ == "" {
		typ = "maintain"
	}
	if typ != "instant" {
		return nil, wire.InvalidValue("The fleet type '%s' is not supported by this emulator; use Type=instant.", typ)
	}
	cfgs, err := parseFleetConfigs(c)
	if err != nil {
		return nil, err
	}
	req := &fleetRequest{configs: cfgs, clientToken: c.q.Str("ClientToken")}
	if err := req.parseTarget(c.q.Get("TargetCapacitySpecification")); err != nil {
		return nil, err
	}
	req.onDemandStrategy = c.q.Str("OnDemandOptions.AllocationStrategy")
	req.spotStrategy = c.q.Str("SpotOptions.AllocationStrategy")
	if req.tagSpecs, err = c.q.TagSpecs("TagSpecification"); err != nil {
		return nil, err
	}
	byType, err := tagsByType(req.tagSpecs, fleetTagTypes)
	if err != nil {
		return nil, err
	}
	req.fleetTags = byType["fleet"]
	return req, nil
}

// parseTarget reads TargetCapacitySpecification and splits the total by capacity type.
func (r *fleetRequest) parseTarget(tcs *wire.Query) *wire.Error {
	if tcs == nil || !tcs.Has("TotalTargetCapacity") {
		return wire.Missing("TargetCapacitySpecification.TotalTargetCapacity")
	}
	total, _, err := tcs.Int("TotalTargetCapacity")
	if err != nil {
		return err
	}
	if total < 1 || total > 1000 {
		return wire.InvalidValue("TotalTargetCapacity must be between 1 and 1000.")
	}
	defType := tcs.Str("DefaultTargetCapacityType")
	if defType == "" {
		defType = "on-demand"
	}
	if defType != "spot" && defType != "on-demand" {
		return wire.InvalidValue("Value (%s) for parameter DefaultTargetCapacityType is invalid. Valid values: spot, on-demand", defType)
	}
	spotN, _, err := tcs.Int("SpotTargetCapacity")
	if err != nil {
		return err
	}
	odN, _, err := tcs.Int("OnDemandTargetCapacity")
	if err != nil {
		return err
	}
	if spotN+odN > total {
		return wire.InvalidValue("The sum of SpotTargetCapacity and OnDemandTargetCapacity exceeds TotalTargetCapacity.")
	}
	rest := total - spotN - odN
	if defType == "spot" {
		spotN += rest
	} else {
		odN += rest
	}
	r.total, r.onDemand, r.spot, r.defaultCapType = total, odN, spotN, defType
	return nil
}

// launchedPool is a planned launch once its instances exist.
type launchedPool struct {
	pool      *fleetPool
	instances []*ec2.Instance
}

// renderFleet answers CreateFleet: the per-pool errors and one instance set per launch.
func renderFleet(fl *ec2.Fleet, launched []launchedPool) *wire.CreateFleetResponse {
	resp := &wire.CreateFleetResponse{FleetID: fl.ID, Errors: wire.FleetErrors(fl.Errors)}
	for _, l := range launched {
		p := l.pool
		fi := wire.FleetInstanceItem{LaunchTemplateAndOverrides: wire.Pool(p.cfg.PoolSpec(p.ovr, p.hasOverride)),
			Lifecycle: p.spec.capacityType, InstanceType: p.spec.instanceType}
		for _, in := range l.instances {
			fi.InstanceIDs = append(fi.InstanceIDs, in.ID)
		}
		resp.Instances = append(resp.Instances, fi)
	}
	return resp
}
