package fakeec2

import (
	"fmt"

	"github.com/karplab/karplab/fakeec2/ec2"
)

type xmlFleetLTSpec struct {
	LaunchTemplateID   string `xml:"launchTemplateId,omitempty"`
	LaunchTemplateName string `xml:"launchTemplateName,omitempty"`
	Version            string `xml:"version,omitempty"`
}

type xmlFleetOverrides struct {
	InstanceType     string `xml:"instanceType,omitempty"`
	MaxPrice         string `xml:"maxPrice,omitempty"`
	SubnetID         string `xml:"subnetId,omitempty"`
	AvailabilityZone string `xml:"availabilityZone,omitempty"`
	WeightedCapacity string `xml:"weightedCapacity,omitempty"`
	Priority         string `xml:"priority,omitempty"`
	ImageID          string `xml:"imageId,omitempty"`
}

type xmlLTAndOverrides struct {
	LaunchTemplateSpecification xmlFleetLTSpec     `xml:"launchTemplateSpecification"`
	Overrides                   *xmlFleetOverrides `xml:"overrides,omitempty"`
}

type xmlFleetInstance struct {
	LaunchTemplateAndOverrides xmlLTAndOverrides `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string            `xml:"lifecycle"`
	InstanceIDs                []string          `xml:"instanceIds>item"`
	InstanceType               string            `xml:"instanceType"`
	Platform                   string            `xml:"platform,omitempty"`
}

type xmlFleetError struct {
	LaunchTemplateAndOverrides xmlLTAndOverrides `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string            `xml:"lifecycle"`
	ErrorCode                  string            `xml:"errorCode"`
	ErrorMessage               string            `xml:"errorMessage"`
}

type createFleetResponse struct {
	WireHeader
	FleetID   string             `xml:"fleetId"`
	Errors    []xmlFleetError    `xml:"errorSet>item"`
	Instances []xmlFleetInstance `xml:"fleetInstanceSet>item"`
}

// wirePool is a launch pool as CreateFleet and DescribeFleets answer it.
func wirePool(p ec2.FleetPoolSpec) xmlLTAndOverrides {
	x := xmlLTAndOverrides{LaunchTemplateSpecification: xmlFleetLTSpec(p.LaunchTemplateSpecification)}
	if p.Overrides != nil {
		o := xmlFleetOverrides(*p.Overrides)
		x.Overrides = &o
	}
	return x
}

// wireFleetErrors is a fleet's errorSet (nil when it has none).
func wireFleetErrors(errs []ec2.FleetError) []xmlFleetError {
	var out []xmlFleetError
	for _, e := range errs {
		out = append(out, xmlFleetError{LaunchTemplateAndOverrides: wirePool(e.LaunchTemplateAndOverrides),
			Lifecycle: e.Lifecycle, ErrorCode: e.ErrorCode, ErrorMessage: e.ErrorMessage})
	}
	return out
}

func parseFleetConfigs(c *call) ([]*ec2.FleetConfig, *APIError) {
	cfgs := c.q.list("LaunchTemplateConfigs")
	if len(cfgs) == 0 {
		return nil, errMissing("LaunchTemplateConfigs")
	}
	var out []*ec2.FleetConfig
	for i, cq := range cfgs {
		spec := cq.get("LaunchTemplateSpecification")
		if spec == nil {
			return nil, errMissing(fmt.Sprintf("LaunchTemplateConfigs.%d.LaunchTemplateSpecification", i+1))
		}
		fc := &ec2.FleetConfig{TemplateID: spec.str("LaunchTemplateId"), TemplateName: spec.str("LaunchTemplateName"), Version: spec.str("Version")}
		if fc.TemplateID == "" && fc.TemplateName == "" {
			return nil, errMissing("LaunchTemplateId or LaunchTemplateName")
		}
		if fc.TemplateID != "" && fc.TemplateName != "" {
			return nil, badRequest(CodeInvalidParameterCombination, "Specify either LaunchTemplateId or LaunchTemplateName, not both.")
		}
		for _, oq := range cq.list("Overrides") {
			o := ec2.FleetOverride{InstanceType: oq.str("InstanceType"), SubnetID: oq.str("SubnetId"),
				AvailabilityZone: oq.str("AvailabilityZone"), ImageID: oq.str("ImageId"), MaxPrice: oq.str("MaxPrice")}
			if v, ok, err := oq.float("Priority"); err != nil {
				return nil, err
			} else if ok {
				o.Priority = &v
			}
			if v, ok, err := oq.float("WeightedCapacity"); err != nil {
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

// createFleet emulates an instant fleet: parse, plan the pools (fleetplan.go), launch the
// plan, answer it.
func (s *Server) createFleet(c *call) (wireResponse, *APIError) {
	req, err := parseCreateFleet(c)
	if err != nil {
		return nil, err
	}
	var resp *createFleetResponse
	aerr := s.mutate(c, func() *APIError {
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

func parseCreateFleet(c *call) (*fleetRequest, *APIError) {
	typ := c.q.str("Type")
	if typ == "" {
		typ = "maintain"
	}
	if typ != "instant" {
		return nil, errInvalidValue("The fleet type '%s' is not supported by this emulator; use Type=instant.", typ)
	}
	cfgs, err := parseFleetConfigs(c)
	if err != nil {
		return nil, err
	}
	req := &fleetRequest{configs: cfgs, clientToken: c.q.str("ClientToken")}
	if err := req.parseTarget(c.q.get("TargetCapacitySpecification")); err != nil {
		return nil, err
	}
	req.onDemandStrategy = c.q.str("OnDemandOptions.AllocationStrategy")
	req.spotStrategy = c.q.str("SpotOptions.AllocationStrategy")
	if req.tagSpecs, err = c.q.tagSpecs("TagSpecification"); err != nil {
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
func (r *fleetRequest) parseTarget(tcs *query) *APIError {
	if tcs == nil || !tcs.has("TotalTargetCapacity") {
		return errMissing("TargetCapacitySpecification.TotalTargetCapacity")
	}
	total, _, err := tcs.integer("TotalTargetCapacity")
	if err != nil {
		return err
	}
	if total < 1 || total > 1000 {
		return errInvalidValue("TotalTargetCapacity must be between 1 and 1000.")
	}
	defType := tcs.str("DefaultTargetCapacityType")
	if defType == "" {
		defType = "on-demand"
	}
	if defType != "spot" && defType != "on-demand" {
		return errInvalidValue("Value (%s) for parameter DefaultTargetCapacityType is invalid. Valid values: spot, on-demand", defType)
	}
	spotN, _, err := tcs.integer("SpotTargetCapacity")
	if err != nil {
		return err
	}
	odN, _, err := tcs.integer("OnDemandTargetCapacity")
	if err != nil {
		return err
	}
	if spotN+odN > total {
		return errInvalidValue("The sum of SpotTargetCapacity and OnDemandTargetCapacity exceeds TotalTargetCapacity.")
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
func renderFleet(fl *ec2.Fleet, launched []launchedPool) *createFleetResponse {
	resp := &createFleetResponse{FleetID: fl.ID, Errors: wireFleetErrors(fl.Errors)}
	for _, l := range launched {
		p := l.pool
		fi := xmlFleetInstance{LaunchTemplateAndOverrides: wirePool(p.cfg.PoolSpec(p.ovr, p.hasOverride)),
			Lifecycle: p.spec.capacityType, InstanceType: p.spec.instanceType}
		for _, in := range l.instances {
			fi.InstanceIDs = append(fi.InstanceIDs, in.ID)
		}
		resp.Instances = append(resp.Instances, fi)
	}
	return resp
}
