package fakeec2

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// fleetOverride is one LaunchTemplateConfigs.N.Overrides.M as sent (echoed back in
// LaunchTemplateAndOverrides).
type fleetOverride struct {
	InstanceType     string
	SubnetID         string
	AvailabilityZone string
	ImageID          string
	MaxPrice         string
	Priority         *float64
	WeightedCapacity *float64
}

type fleetConfig struct {
	TemplateID, TemplateName, Version string
	Overrides                         []fleetOverride
}

// pool is one launchable (config, override) pair with its resolved launch.
type pool struct {
	cfg      *fleetConfig
	ovr      fleetOverride
	spec     *launchSpec
	price    float64
	order    int
	template *launchTemplate
	version  int64
}

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

func fmtFloat(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

func (c *fleetConfig) wire(o fleetOverride, hasOverride bool) xmlLTAndOverrides {
	x := xmlLTAndOverrides{LaunchTemplateSpecification: xmlFleetLTSpec{LaunchTemplateID: c.TemplateID,
		LaunchTemplateName: c.TemplateName, Version: c.Version}}
	if hasOverride {
		x.Overrides = &xmlFleetOverrides{InstanceType: o.InstanceType, MaxPrice: o.MaxPrice, SubnetID: o.SubnetID,
			AvailabilityZone: o.AvailabilityZone, WeightedCapacity: fmtFloat(o.WeightedCapacity),
			Priority: fmtFloat(o.Priority), ImageID: o.ImageID}
	}
	return x
}

func parseFleetConfigs(c *call) ([]*fleetConfig, *APIError) {
	cfgs := c.q.list("LaunchTemplateConfigs")
	if len(cfgs) == 0 {
		return nil, errMissing("LaunchTemplateConfigs")
	}
	var out []*fleetConfig
	for i, cq := range cfgs {
		spec := cq.get("LaunchTemplateSpecification")
		if spec == nil {
			return nil, errMissing(fmt.Sprintf("LaunchTemplateConfigs.%d.LaunchTemplateSpecification", i+1))
		}
		fc := &fleetConfig{TemplateID: spec.str("LaunchTemplateId"), TemplateName: spec.str("LaunchTemplateName"), Version: spec.str("Version")}
		if fc.TemplateID == "" && fc.TemplateName == "" {
			return nil, errMissing("LaunchTemplateId or LaunchTemplateName")
		}
		if fc.TemplateID != "" && fc.TemplateName != "" {
			return nil, badRequest(CodeInvalidParameterCombination, "Specify either LaunchTemplateId or LaunchTemplateName, not both.")
		}
		for _, oq := range cq.list("Overrides") {
			o := fleetOverride{InstanceType: oq.str("InstanceType"), SubnetID: oq.str("SubnetId"),
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

// createFleet emulates an instant fleet: every (config, override) pair is a capacity pool;
// pools hit by a capacity fault or forbidden by the policy go to Errors[]; the target
// capacity is launched in the best remaining pool (cheapest for lowest-price and
// price-capacity-optimized, lowest Priority for the prioritized strategies).
func (s *Server) createFleet(c *call) (wireResponse, *APIError) {
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
	tcs := c.q.get("TargetCapacitySpecification")
	if tcs == nil || !tcs.has("TotalTargetCapacity") {
		return nil, errMissing("TargetCapacitySpecification.TotalTargetCapacity")
	}
	total, _, err := tcs.integer("TotalTargetCapacity")
	if err != nil {
		return nil, err
	}
	if total < 1 || total > 1000 {
		return nil, errInvalidValue("TotalTargetCapacity must be between 1 and 1000.")
	}
	defType := tcs.str("DefaultTargetCapacityType")
	if defType == "" {
		defType = "on-demand"
	}
	if defType != "spot" && defType != "on-demand" {
		return nil, errInvalidValue("Value (%s) for parameter DefaultTargetCapacityType is invalid. Valid values: spot, on-demand", defType)
	}
	spotN, _, err := tcs.integer("SpotTargetCapacity")
	if err != nil {
		return nil, err
	}
	odN, _, err := tcs.integer("OnDemandTargetCapacity")
	if err != nil {
		return nil, err
	}
	if spotN+odN > total {
		return nil, errInvalidValue("The sum of SpotTargetCapacity and OnDemandTargetCapacity exceeds TotalTargetCapacity.")
	}
	rest := total - spotN - odN
	if defType == "spot" {
		spotN += rest
	} else {
		odN += rest
	}
	odStrategy := c.q.str("OnDemandOptions.AllocationStrategy")
	spotStrategy := c.q.str("SpotOptions.AllocationStrategy")
	specs, err := c.q.tagSpecs("TagSpecification")
	if err != nil {
		return nil, err
	}
	fleetTags, err := tagsByType(specs, fleetTagTypes)
	if err != nil {
		return nil, err
	}

	resp := &createFleetResponse{}
	aerr := s.mutate(c, func() *APIError {
		// Resolve templates first: a missing template fails the whole call, as on EC2.
		type resolved struct {
			lt  *launchTemplate
			ver *launchTemplateVersion
		}
		res := make([]resolved, len(cfgs))
		for i, fc := range cfgs {
			lt, e := s.findTemplate(fc.TemplateID, fc.TemplateName)
			if e != nil {
				return e
			}
			ver, e := templateVersion(lt, fc.Version)
			if e != nil {
				return e
			}
			res[i] = resolved{lt, ver}
		}
		var perCap []struct {
			capType  string
			count    int64
			strategy string
		}
		if odN > 0 {
			perCap = append(perCap, struct {
				capType  string
				count    int64
				strategy string
			}{"on-demand", odN, odStrategy})
		}
		if spotN > 0 {
			perCap = append(perCap, struct {
				capType  string
				count    int64
				strategy string
			}{"spot", spotN, spotStrategy})
		}
		type launchPlan struct {
			p     *pool
			count int
		}
		var plans []launchPlan
		denied, pools := 0, 0
		var firstDenial string
		var requestDenial string
		for _, pc := range perCap {
			var ok []*pool
			order := 0
			for i, fc := range cfgs {
				overrides := fc.Overrides
				hasOverride := len(overrides) > 0
				if !hasOverride {
					overrides = []fleetOverride{{}}
				}
				for _, o := range overrides {
					order++
					pools++
					d := res[i].ver.Data
					d.TagSpecs = append(append([]tagSpec(nil), d.TagSpecs...), specs...)
					d.TagSpecs = filterTagSpecs(d.TagSpecs, launchTagTypes)
					if pc.capType == "spot" {
						d.MarketType = "spot"
					} else {
						d.MarketType = ""
					}
					if o.InstanceType != "" {
						d.InstanceType = o.InstanceType
					}
					if o.ImageID != "" {
						d.ImageID = o.ImageID
					}
					if o.AvailabilityZone != "" {
						d.Zone = o.AvailabilityZone
					}
					subnetID := o.SubnetID
					fail := func(code, msg string) {
						resp.Errors = append(resp.Errors, xmlFleetError{LaunchTemplateAndOverrides: fc.wire(o, hasOverride),
							Lifecycle: pc.capType, ErrorCode: code, ErrorMessage: msg})
						c.event.PartialErrors = append(c.event.PartialErrors, fmt.Sprintf("%s %s/%s/%s", code, d.InstanceType, o.SubnetID, o.AvailabilityZone))
					}
					spec, e := s.resolveLaunch(c.caller, d, subnetID, int(pc.count), launchTagTypes)
					if e != nil {
						fail(e.Code, e.Message)
						continue
					}
					if reason := s.checkLaunch(c.caller, spec.policyCheck()); reason != "" {
						// The same for every pool: the whole request is forbidden.
						requestDenial = reason
						break
					}
					if reason := s.checkPlacement(c.caller, spec.instanceType, spec.subnet.Zone, pc.capType); reason != "" {
						denied++
						if firstDenial == "" {
							firstDenial = reason
						}
						fail(CodeUnauthorizedOperation, errUnauthorized(encodeAuthorizationMessage(c.requestID, reason)).Message)
						continue
					}
					if f := s.capacityFault(spec.instanceType, spec.subnet.Zone, pc.capType); f != nil && !c.dryRun {
						c.event.Faults = append(c.event.Faults, f.ID)
						e := errInsufficientCapacity(spec.instanceType, spec.subnet.Zone)
						fail(e.Code, e.Message)
						continue
					}
					spec.templateID, spec.templateName = res[i].lt.ID, res[i].lt.Name
					spec.templateVersion = strconv.FormatInt(res[i].ver.Number, 10)
					ok = append(ok, &pool{cfg: fc, ovr: o, spec: spec, order: order, template: res[i].lt,
						price: s.price(spec.instanceType, spec.subnet.Zone, pc.capType)})
				}
				if requestDenial != "" {
					break
				}
			}
			if requestDenial != "" {
				break
			}
			if len(ok) == 0 {
				continue
			}
			sortPools(ok, pc.strategy, pc.capType)
			plans = append(plans, launchPlan{p: ok[0], count: int(pc.count)})
		}
		if requestDenial != "" {
			resp.Errors = nil
			c.event.PartialErrors = nil
			return s.deny(c, requestDenial)
		}
		if len(plans) == 0 && denied > 0 && denied == pools {
			resp.Errors = nil
			c.event.PartialErrors = nil
			return s.deny(c, firstDenial)
		}
		// Consume counted capacity faults once per call that hit them.
		for _, id := range c.event.Faults {
			for i := range s.faults {
				if s.faults[i].ID == id {
					s.consumeFault(&s.faults[i])
					break
				}
			}
		}
		if len(c.event.Faults) > 0 {
			s.saveMeta()
		}
		if c.dryRun {
			return errDryRun()
		}
		fl := &fleet{Seq: s.nextSeq(), ID: "fleet-" + s.ids.NewID(""), CreateTime: c.now, Tags: setTags(nil, fleetTags["fleet"]),
			TotalTarget: total, OnDemandTarget: odN, SpotTarget: spotN, DefaultCapType: defType, Errors: resp.Errors,
			ClientToken: c.q.str("ClientToken")}
		for _, fc := range cfgs {
			fl.Configs = append(fl.Configs, *fc)
		}
		resp.FleetID = fl.ID
		c.event.Created = append(c.event.Created, fl.ID)
		for _, pl := range plans {
			pl.p.spec.fleetID = fl.ID
			pl.p.spec.count = pl.count
			pl.p.spec.clientToken = c.q.str("ClientToken")
			ins := s.createInstances(pl.p.spec, c.now)
			fi := xmlFleetInstance{LaunchTemplateAndOverrides: pl.p.cfg.wire(pl.p.ovr, len(pl.p.cfg.Overrides) > 0),
				Lifecycle: pl.p.spec.capacityType, InstanceType: pl.p.spec.instanceType}
			for _, in := range ins {
				fi.InstanceIDs = append(fi.InstanceIDs, in.ID)
				fl.Instances = append(fl.Instances, in.ID)
				c.event.Created = append(c.event.Created, in.ID, in.ENIID)
				for _, v := range in.Volumes {
					c.event.Created = append(c.event.Created, v.VolumeID)
				}
			}
			resp.Instances = append(resp.Instances, fi)
		}
		s.fleets[fl.ID] = fl
		s.save(bucketFleets, fl.ID, fl)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

func filterTagSpecs(specs []tagSpec, allowed map[string]bool) []tagSpec {
	out := specs[:0:0]
	for _, ts := range specs {
		if allowed[ts.ResourceType] {
			out = append(out, ts)
		}
	}
	return out
}

// sortPools orders pools best first for the allocation strategy.
func sortPools(ps []*pool, strategy, capType string) {
	prio := func(p *pool) float64 {
		if p.ovr.Priority == nil {
			return math.Inf(1)
		}
		return *p.ovr.Priority
	}
	byPriority := strategy == "prioritized" || strategy == "capacity-optimized-prioritized"
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if byPriority && prio(a) != prio(b) {
			return prio(a) < prio(b)
		}
		if a.price != b.price {
			return a.price < b.price
		}
		return a.order < b.order
	})
}
