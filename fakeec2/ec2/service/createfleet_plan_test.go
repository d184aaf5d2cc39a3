package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// t0Plan is the plan tests' fake clock start.
var t0Plan = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// planServer is an emulator with one launch template ("nodes", version 1: an x86_64 AMI,
// m6i.large, volumes tagged team=infra).
func planServer(t *testing.T) *Service {
	t.Helper()
	s, err := New(Config{Region: "eu-west-2", AccountID: "123456789012", IDs: account.NewSequentialIDs()}, &testAccount{now: t0Plan})
	if err != nil {
		t.Fatalf("new EC2: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ami string
	for id, im := range s.model.Images {
		if im.Architecture == "x86_64" && (ami == "" || id < ami) {
			ami = id
		}
	}
	if ami == "" {
		t.Fatal("no x86_64 image seeded")
	}
	lt := &ec2.LaunchTemplate{Seq: s.nextSeq(), ID: "lt-0123456789abcdef0", Name: "nodes", DefaultVersion: 1,
		Versions: []ec2.LaunchTemplateVersion{{Number: 1, Data: ec2.LaunchData{ImageID: ami, InstanceType: "m6i.large",
			TagSpecs: []ec2.TagSpec{{ResourceType: "volume", Tags: []ec2.Tag{{Key: "team", Value: "infra"}}}}}}}}
	s.model.Templates[lt.ID], s.model.LTByName[lt.Name] = lt, lt.ID
	return s
}

// planRow is what a test sees of one planned pool.
type planRow struct {
	CapType, InstanceType, Zone string
	Price                       float64
	Err                         string
	Tags                        map[string]map[string]string // resource type -> key -> value
}

type planView struct {
	Pools    []planRow
	Launches []string // "capacity type/instance type/zone xN"
	Faults   []string
	Denied   bool
}

func viewPlan(p *fleetPlan) planView {
	var v planView
	for _, pl := range p.pools {
		r := planRow{CapType: pl.capType, InstanceType: pl.instanceType, Err: pl.errCode}
		if pl.spec != nil {
			r.Zone, r.Price = pl.spec.subnet.Zone, pl.price
			r.Tags = map[string]map[string]string{}
			for rt, tags := range pl.spec.tags {
				r.Tags[rt] = ec2.TagsMap(tags)
			}
		}
		v.Pools = append(v.Pools, r)
	}
	for _, l := range p.launches {
		v.Launches = append(v.Launches, fmt.Sprintf("%s/%s/%s x%d", l.pool.capType, l.pool.spec.instanceType, l.pool.spec.subnet.Zone, l.count))
	}
	v.Faults, v.Denied = p.faults, p.denial != ""
	return v
}

func TestPlanFleet(t *testing.T) {
	s := planServer(t)
	zone := s.zones[0].Name
	od := func(typ string) float64 { return s.price(typ, zone, "on-demand") }
	spot := func(typ string) float64 { return s.price(typ, zone, "spot") }
	volTags := map[string]string{"team": "infra"}
	one := func(ovrs ...ec2.FleetOverride) []*ec2.FleetConfig {
		return []*ec2.FleetConfig{{TemplateName: "nodes", Overrides: ovrs}}
	}
	prio := func(p float64) *float64 { return &p }
	tests := []struct {
		name    string
		req     fleetRequest
		policy  authz.Policy
		faults  []Fault
		dryRun  bool
		want    planView
		wantErr string
	}{
		{name: "no overrides: the template's type", req: fleetRequest{configs: one(), onDemand: 2},
			want: planView{Pools: []planRow{{CapType: "on-demand", InstanceType: "m6i.large", Zone: zone, Price: od("m6i.large"),
				Tags: map[string]map[string]string{"volume": volTags}}},
				Launches: []string{"on-demand/m6i.large/" + zone + " x2"}}},
		{name: "lowest price wins",
			req: fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "m6i.large", AvailabilityZone: zone},
				ec2.FleetOverride{InstanceType: "c6i.large", AvailabilityZone: zone}), onDemand: 1, onDemandStrategy: "lowest-price"},
			want: planView{Pools: []planRow{
				{CapType: "on-demand", InstanceType: "m6i.large", Zone: zone, Price: od("m6i.large"), Tags: map[string]map[string]string{"volume": volTags}},
				{CapType: "on-demand", InstanceType: "c6i.large", Zone: zone, Price: od("c6i.large"), Tags: map[string]map[string]string{"volume": volTags}}},
				Launches: []string{"on-demand/c6i.large/" + zone + " x1"}}},
		{name: "prioritized: lowest priority beats price",
			req: fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "c6i.large", AvailabilityZone: zone, Priority: prio(2)},
				ec2.FleetOverride{InstanceType: "m6i.large", AvailabilityZone: zone, Priority: prio(1)}), onDemand: 1, onDemandStrategy: "prioritized"},
			want: planView{Pools: []planRow{
				{CapType: "on-demand", InstanceType: "c6i.large", Zone: zone, Price: od("c6i.large"), Tags: map[string]map[string]string{"volume": volTags}},
				{CapType: "on-demand", InstanceType: "m6i.large", Zone: zone, Price: od("m6i.large"), Tags: map[string]map[string]string{"volume": volTags}}},
				Launches: []string{"on-demand/m6i.large/" + zone + " x1"}}},
		{name: "a bad override is that pool's error",
			req: fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "nope.large"}, ec2.FleetOverride{InstanceType: "m6i.large", AvailabilityZone: zone}),
				onDemand: 1},
			want: planView{Pools: []planRow{{CapType: "on-demand", InstanceType: "nope.large", Err: wire.CodeInvalidParameterValue},
				{CapType: "on-demand", InstanceType: "m6i.large", Zone: zone, Price: od("m6i.large"), Tags: map[string]map[string]string{"volume": volTags}}},
				Launches: []string{"on-demand/m6i.large/" + zone + " x1"}}},
		{name: "a capacity fault fails its pool",
			req: fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "c6i.large", AvailabilityZone: zone},
				ec2.FleetOverride{InstanceType: "m6i.large", AvailabilityZone: zone}), onDemand: 1},
			faults: []Fault{{ID: "fault-1", Kind: FaultInsufficientCapacity, InstanceType: "c6i.large"}},
			want: planView{Pools: []planRow{{CapType: "on-demand", InstanceType: "c6i.large", Err: wire.CodeInsufficientInstanceCapacity},
				{CapType: "on-demand", InstanceType: "m6i.large", Zone: zone, Price: od("m6i.large"), Tags: map[string]map[string]string{"volume": volTags}}},
				Launches: []string{"on-demand/m6i.large/" + zone + " x1"}, Faults: []string{"fault-1"}}},
		{name: "a dry run meets no capacity fault",
			req:    fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "c6i.large", AvailabilityZone: zone}), onDemand: 1},
			faults: []Fault{{ID: "fault-1", Kind: FaultInsufficientCapacity}}, dryRun: true,
			want: planView{Pools: []planRow{{CapType: "on-demand", InstanceType: "c6i.large", Zone: zone, Price: od("c6i.large"),
				Tags: map[string]map[string]string{"volume": volTags}}},
				Launches: []string{"on-demand/c6i.large/" + zone + " x1"}}},
		{name: "a placement denial is that pool's error",
			req: fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "c6i.large", AvailabilityZone: zone},
				ec2.FleetOverride{InstanceType: "m6i.large", AvailabilityZone: zone}), onDemand: 1},
			policy: authz.Policy{Statements: []authz.PolicyStatement{{AllowedInstanceFamilies: []string{"m6i"}}}},
			want: planView{Pools: []planRow{{CapType: "on-demand", InstanceType: "c6i.large", Err: wire.CodeUnauthorizedOperation},
				{CapType: "on-demand", InstanceType: "m6i.large", Zone: zone, Price: od("m6i.large"), Tags: map[string]map[string]string{"volume": volTags}}},
				Launches: []string{"on-demand/m6i.large/" + zone + " x1"}}},
		{name: "every pool denied denies the request",
			req:    fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "c6i.large"}, ec2.FleetOverride{InstanceType: "m6i.large"}), onDemand: 1},
			policy: authz.Policy{Statements: []authz.PolicyStatement{{AllowedInstanceFamilies: []string{"r6i"}}}},
			want: planView{Pools: []planRow{{CapType: "on-demand", InstanceType: "c6i.large", Err: wire.CodeUnauthorizedOperation},
				{CapType: "on-demand", InstanceType: "m6i.large", Err: wire.CodeUnauthorizedOperation}}, Denied: true}},
		{name: "a launch policy denies the request at its first pool",
			req:    fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "c6i.large"}), onDemand: 1},
			policy: authz.Policy{Statements: []authz.PolicyStatement{{RequiredTags: []string{"cost-center"}}}},
			want:   planView{Denied: true}},
		{name: "on-demand and spot are planned apart, request tags over the template's",
			req: fleetRequest{configs: one(ec2.FleetOverride{InstanceType: "c6i.large", AvailabilityZone: zone}), onDemand: 1, spot: 2,
				tagSpecs: []ec2.TagSpec{{ResourceType: "instance", Tags: []ec2.Tag{{Key: "Name", Value: "n"}}},
					{ResourceType: "fleet", Tags: []ec2.Tag{{Key: "only", Value: "fleet"}}}}},
			want: planView{Pools: []planRow{
				{CapType: "on-demand", InstanceType: "c6i.large", Zone: zone, Price: od("c6i.large"),
					Tags: map[string]map[string]string{"volume": volTags, "instance": {"Name": "n"}}},
				{CapType: "spot", InstanceType: "c6i.large", Zone: zone, Price: spot("c6i.large"),
					Tags: map[string]map[string]string{"volume": volTags, "instance": {"Name": "n"}}}},
				Launches: []string{"on-demand/c6i.large/" + zone + " x1", "spot/c6i.large/" + zone + " x2"}}},
		{name: "a missing template version fails the call",
			req:     fleetRequest{configs: []*ec2.FleetConfig{{TemplateName: "nodes", Version: "7"}}, onDemand: 1},
			wantErr: wire.CodeInvalidLaunchTemplateIDVersion},
		{name: "a missing template fails the call",
			req:     fleetRequest{configs: []*ec2.FleetConfig{{TemplateName: "absent"}}, onDemand: 1},
			wantErr: wire.CodeInvalidLaunchTemplateNameNF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.acct.(*testAccount).policy, s.faults = tt.policy, tt.faults
			seq, nInstances := s.seq, len(s.model.Instances)
			plan, err := s.planFleet(&tt.req, "tester", "req-1", tt.dryRun)
			if s.seq != seq || len(s.model.Instances) != nInstances || len(s.faults) != len(tt.faults) {
				t.Errorf("planning changed the store: seq %d -> %d, instances %d -> %d, faults %d -> %d",
					seq, s.seq, nInstances, len(s.model.Instances), len(tt.faults), len(s.faults))
			}
			if tt.wantErr != "" {
				if err == nil || err.Code != tt.wantErr {
					t.Fatalf("planFleet error = %v, want code %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("planFleet: %v", err)
			}
			if diff := cmp.Diff(tt.want, viewPlan(plan)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseCreateFleet(t *testing.T) {
	base := "Type=instant&LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName=nodes" +
		"&LaunchTemplateConfigs.1.Overrides.1.InstanceType=c6i.large&LaunchTemplateConfigs.1.Overrides.1.Priority=1.5"
	tests := []struct {
		name    string
		body    string
		want    fleetRequest
		wantErr string
	}{
		{name: "default capacity type takes the rest",
			body: base + "&TargetCapacitySpecification.TotalTargetCapacity=3&TargetCapacitySpecification.SpotTargetCapacity=1" +
				"&TargetCapacitySpecification.DefaultTargetCapacityType=spot&SpotOptions.AllocationStrategy=price-capacity-optimized" +
				"&TagSpecification.1.ResourceType=fleet&TagSpecification.1.Tag.1.Key=k&TagSpecification.1.Tag.1.Value=v&ClientToken=tok",
			want: fleetRequest{total: 3, spot: 3, defaultCapType: "spot", spotStrategy: "price-capacity-optimized",
				fleetTags: []ec2.Tag{{Key: "k", Value: "v"}}, clientToken: "tok"}},
		{name: "on-demand by default", body: base + "&TargetCapacitySpecification.TotalTargetCapacity=2",
			want: fleetRequest{total: 2, onDemand: 2, defaultCapType: "on-demand"}},
		{name: "maintain fleets refused", body: "Type=maintain&TargetCapacitySpecification.TotalTargetCapacity=1", wantErr: wire.CodeInvalidParameterValue},
		{name: "target required", body: base, wantErr: "MissingParameter"},
		{name: "shares above the total",
			body:    base + "&TargetCapacitySpecification.TotalTargetCapacity=1&TargetCapacitySpecification.OnDemandTargetCapacity=2",
			wantErr: wire.CodeInvalidParameterValue},
		{name: "fleet tags may not be reserved",
			body:    base + "&TargetCapacitySpecification.TotalTargetCapacity=1&TagSpecification.1.ResourceType=fleet&TagSpecification.1.Tag.1.Key=aws:x",
			wantErr: wire.CodeInvalidParameterValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := wire.ParseQueryString(tt.body)
			if err != nil {
				t.Fatalf("parse query: %v", err)
			}
			req, aerr := parseCreateFleet(&call{q: q})
			if tt.wantErr != "" {
				if aerr == nil || aerr.Code != tt.wantErr {
					t.Fatalf("parseCreateFleet error = %v, want code %s", aerr, tt.wantErr)
				}
				return
			}
			if aerr != nil {
				t.Fatalf("parseCreateFleet: %v", aerr)
			}
			if len(req.configs) != 1 || req.configs[0].TemplateName != "nodes" || len(req.configs[0].Overrides) != 1 ||
				*req.configs[0].Overrides[0].Priority != 1.5 {
				t.Errorf("configs = %+v", req.configs)
			}
			got := *req
			got.configs, got.tagSpecs = nil, nil
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(fleetRequest{}, ec2.Tag{})); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}
