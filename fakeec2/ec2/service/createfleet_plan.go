package service

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// CreateFleet's plan: every (capacity type, config, override) is a capacity pool; pools hit
// by a capacity fault or forbidden by the policy report an error; each capacity type's
// target is launched in its best remaining pool (cheapest for lowest-price and
// price-capacity-optimized, lowest Priority for the prioritized strategies). Planning only
// reads the store, so it is tested on its own (createfleet_plan_test.go).

// fleetPool is one pool as planned: its resolved launch (instance type, subnet and zone,
// capacity type, tags per resource type) and price, or the error CreateFleet reports for it.
type fleetPool struct {
	cfg          *ec2.FleetConfig
	ovr          ec2.FleetOverride
	hasOverride  bool
	capType      string
	order        int    // position among the capacity type's pools: ties go to the first
	instanceType string // as asked (override or template), for the audit line
	spec         *launchSpec
	price        float64
	errCode      string // set when the pool cannot launch
	errMsg       string
	denial       string // the placement policy's reason, when that is why
	fault        string // the capacity fault that failed it
}

// fleetLaunch is one capacity type's chosen pool and how many instances it launches.
type fleetLaunch struct {
	pool  *fleetPool
	count int
}

type fleetPlan struct {
	pools    []*fleetPool // every pool tried, in order
	launches []fleetLaunch
	faults   []string // capacity faults hit, in order: consumed when the plan is launched
	denial   string   // why the policy forbids the whole request; "" when it does not
}

// fleetCapacity is one capacity type's share of the target.
type fleetCapacity struct {
	capType  string
	count    int64
	strategy string
}

func (r *fleetRequest) capacities() []fleetCapacity {
	var out []fleetCapacity
	if r.onDemand > 0 {
		out = append(out, fleetCapacity{"on-demand", r.onDemand, r.onDemandStrategy})
	}
	if r.spot > 0 {
		out = append(out, fleetCapacity{"spot", r.spot, r.spotStrategy})
	}
	return out
}

type fleetTemplate struct {
	lt  *ec2.LaunchTemplate
	ver *ec2.LaunchTemplateVersion
}

// planFleet plans a CreateFleet request; an error (a missing template or version) fails
// the whole call, as on EC2. It changes nothing. Callers hold s.mu.
func (s *Service) planFleet(req *fleetRequest, caller, requestID string, dryRun bool) (*fleetPlan, *wire.Error) {
	tmpls := make([]fleetTemplate, len(req.configs))
	for i, fc := range req.configs {
		lt, e := s.findTemplate(fc.TemplateID, fc.TemplateName)
		if e != nil {
			return nil, e
		}
		ver, e := templateVersion(lt, fc.Version)
		if e != nil {
			return nil, e
		}
		tmpls[i] = fleetTemplate{lt, ver}
	}
	plan := &fleetPlan{}
	denied := 0
	var firstDenial string
	for _, fc := range req.capacities() {
		var ok []*fleetPool
		order := 0
		for i, cfg := range req.configs {
			overrides := cfg.Overrides
			if len(overrides) == 0 {
				overrides = []ec2.FleetOverride{{}}
			}
			for _, o := range overrides {
				order++
				p := &fleetPool{cfg: cfg, ovr: o, hasOverride: len(cfg.Overrides) > 0, capType: fc.capType, order: order}
				d := fleetLaunchData(tmpls[i].ver.Data, req.tagSpecs, fc.capType, o)
				p.instanceType = d.InstanceType
				if reason := s.planPool(p, d, int(fc.count), caller, requestID, dryRun); reason != "" {
					plan.denial = reason // the same for every pool
					return plan, nil
				}
				plan.pools = append(plan.pools, p)
				if p.fault != "" {
					plan.faults = append(plan.faults, p.fault)
				}
				if p.denial != "" {
					denied++
					if firstDenial == "" {
						firstDenial = p.denial
					}
				}
				if p.spec != nil {
					p.spec.templateID, p.spec.templateName = tmpls[i].lt.ID, tmpls[i].lt.Name
					p.spec.templateVersion = strconv.FormatInt(tmpls[i].ver.Number, 10)
					ok = append(ok, p)
				}
			}
		}
		if len(ok) > 0 {
			sortPools(ok, fc.strategy)
			plan.launches = append(plan.launches, fleetLaunch{pool: ok[0], count: int(fc.count)})
		}
	}
	if len(plan.launches) == 0 && denied > 0 && denied == len(plan.pools) {
		plan.denial = firstDenial // every pool forbidden: the request is
	}
	return plan, nil
}

// fleetLaunchData lays the request's tags, the capacity type and an override over a
// template version's launch data.
func fleetLaunchData(base ec2.LaunchData, tagSpecs []ec2.TagSpec, capType string, o ec2.FleetOverride) ec2.LaunchData {
	d := base
	d.TagSpecs = append(append([]ec2.TagSpec(nil), d.TagSpecs...), tagSpecs...)
	d.TagSpecs = filterTagSpecs(d.TagSpecs, launchTagTypes)
	if capType == "spot" {
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
	return d
}

// planPool resolves one pool's launch and checks it against the policy and the capacity
// faults (a DryRun meets none), recording on p why it cannot launch. It returns the
// policy's reason when the whole request is forbidden. Callers hold s.mu.
func (s *Service) planPool(p *fleetPool, d ec2.LaunchData, count int, caller, requestID string, dryRun bool) string {
	spec, e := s.resolveLaunch(caller, d, p.ovr.SubnetID, count, launchTagTypes)
	if e != nil {
		p.errCode, p.errMsg = e.Code, e.Message
		return ""
	}
	if reason := s.checkLaunch(caller, spec.policyCheck()); reason != "" {
		return reason
	}
	if reason := s.checkPlacement(caller, spec.instanceType, spec.subnet.Zone, p.capType); reason != "" {
		p.denial = reason
		p.errCode, p.errMsg = wire.CodeUnauthorizedOperation, wire.Unauthorized(authz.EncodeMessage(requestID, reason)).Message
		return ""
	}
	if f := s.capacityFault(spec.instanceType, spec.subnet.Zone, p.capType); f != nil && !dryRun {
		e := wire.InsufficientCapacity(spec.instanceType, spec.subnet.Zone)
		p.fault, p.errCode, p.errMsg = f.ID, e.Code, e.Message
		return ""
	}
	p.spec, p.price = spec, s.price(spec.instanceType, spec.subnet.Zone, p.capType)
	return ""
}

// poolErrors are the pools the plan could not launch (nil when every pool could).
func (pl *fleetPlan) poolErrors() []ec2.FleetError {
	var out []ec2.FleetError
	for _, p := range pl.pools {
		if p.errCode != "" {
			out = append(out, ec2.FleetError{LaunchTemplateAndOverrides: p.cfg.PoolSpec(p.ovr, p.hasOverride),
				Lifecycle: p.capType, ErrorCode: p.errCode, ErrorMessage: p.errMsg})
		}
	}
	return out
}

// auditErrors are the per-pool errors as the audit event lists them.
func (pl *fleetPlan) auditErrors() []string {
	var out []string
	for _, p := range pl.pools {
		if p.errCode != "" {
			out = append(out, fmt.Sprintf("%s %s/%s/%s", p.errCode, p.instanceType, p.ovr.SubnetID, p.ovr.AvailabilityZone))
		}
	}
	return out
}

// launchFleet carries out a plan: the denial, or the faults consumed, the fleet recorded
// and its pools launched. Callers hold s.mu.
func (s *Service) launchFleet(c *call, req *fleetRequest, plan *fleetPlan) (*ec2.Fleet, []launchedPool, *wire.Error) {
	c.event.Faults = append(c.event.Faults, plan.faults...)
	if plan.denial != "" {
		return nil, nil, s.deny(c, plan.denial)
	}
	c.event.PartialErrors = append(c.event.PartialErrors, plan.auditErrors()...)
	// A counted capacity fault is consumed once per pool it failed.
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
		return nil, nil, wire.DryRun()
	}
	fl := &ec2.Fleet{Seq: s.nextSeq(), ID: "fleet-" + s.ids.NewID(""), CreateTime: c.now, Tags: ec2.SetTags(nil, req.fleetTags),
		TotalTarget: req.total, OnDemandTarget: req.onDemand, SpotTarget: req.spot, DefaultCapType: req.defaultCapType,
		Errors: plan.poolErrors(), ClientToken: req.clientToken}
	for _, fc := range req.configs {
		fl.Configs = append(fl.Configs, *fc)
	}
	c.event.Created = append(c.event.Created, fl.ID)
	var out []launchedPool
	for _, l := range plan.launches {
		spec := l.pool.spec
		spec.fleetID, spec.count, spec.clientToken = fl.ID, l.count, req.clientToken
		ins := s.createInstances(spec, c.now)
		for _, in := range ins {
			fl.Instances = append(fl.Instances, in.ID)
			c.event.Created = append(c.event.Created, in.ID, in.ENIID)
			for _, v := range in.Volumes {
				c.event.Created = append(c.event.Created, v.VolumeID)
			}
		}
		out = append(out, launchedPool{pool: l.pool, instances: ins})
	}
	s.model.Fleets[fl.ID] = fl
	s.save(bucketFleets, fl.ID, fl)
	return fl, out, nil
}

func filterTagSpecs(specs []ec2.TagSpec, allowed map[string]bool) []ec2.TagSpec {
	out := specs[:0:0]
	for _, ts := range specs {
		if allowed[ts.ResourceType] {
			out = append(out, ts)
		}
	}
	return out
}

// sortPools orders pools best first for the allocation strategy.
func sortPools(ps []*fleetPool, strategy string) {
	prio := func(p *fleetPool) float64 {
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
