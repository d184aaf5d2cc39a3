package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// The XML shapes of the fleet actions (CreateFleet, DescribeFleets, DeleteFleets) and the
// conversions that render a fleet, its launch pools, errors and instances in them.

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

// PoolItem is a launch pool (a template and its override) as the fleet actions answer it.
type PoolItem struct {
	LaunchTemplateSpecification xmlFleetLTSpec     `xml:"launchTemplateSpecification"`
	Overrides                   *xmlFleetOverrides `xml:"overrides,omitempty"`
}

// Pool renders the launch pool p.
func Pool(p ec2.FleetPoolSpec) PoolItem {
	x := PoolItem{LaunchTemplateSpecification: xmlFleetLTSpec(p.LaunchTemplateSpecification)}
	if p.Overrides != nil {
		o := xmlFleetOverrides(*p.Overrides)
		x.Overrides = &o
	}
	return x
}

// FleetInstanceItem is the instances a fleet launched from one pool.
type FleetInstanceItem struct {
	LaunchTemplateAndOverrides PoolItem `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string   `xml:"lifecycle"`
	InstanceIDs                []string `xml:"instanceIds>item"`
	InstanceType               string   `xml:"instanceType"`
	Platform                   string   `xml:"platform,omitempty"`
}

// FleetErrorItem is a pool a fleet could not launch in, with EC2's error.
type FleetErrorItem struct {
	LaunchTemplateAndOverrides PoolItem `xml:"launchTemplateAndOverrides"`
	Lifecycle                  string   `xml:"lifecycle"`
	ErrorCode                  string   `xml:"errorCode"`
	ErrorMessage               string   `xml:"errorMessage"`
}

// FleetErrors renders a fleet's errorSet (nil when it has none).
func FleetErrors(errs []ec2.FleetError) []FleetErrorItem {
	return Items(errs, func(e ec2.FleetError) FleetErrorItem {
		return FleetErrorItem{LaunchTemplateAndOverrides: Pool(e.LaunchTemplateAndOverrides),
			Lifecycle: e.Lifecycle, ErrorCode: e.ErrorCode, ErrorMessage: e.ErrorMessage}
	})
}

// CreateFleetResponse is the body of its action's answer.
type CreateFleetResponse struct {
	Header
	FleetID   string              `xml:"fleetId"`
	Errors    []FleetErrorItem    `xml:"errorSet>item"`
	Instances []FleetInstanceItem `xml:"fleetInstanceSet>item"`
}

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

// FleetItem is a fleet as DescribeFleets answers it.
type FleetItem struct {
	FleetID                   string              `xml:"fleetId"`
	FleetState                string              `xml:"fleetState"`
	ClientToken               string              `xml:"clientToken,omitempty"`
	CreateTime                string              `xml:"createTime"`
	Type                      string              `xml:"type"`
	ExcessPolicy              string              `xml:"excessCapacityTerminationPolicy"`
	FulfilledCapacity         float64             `xml:"fulfilledCapacity"`
	FulfilledOnDemandCapacity float64             `xml:"fulfilledOnDemandCapacity"`
	LaunchTemplateConfigs     []xmlFleetLTConfig  `xml:"launchTemplateConfigs>item"`
	Target                    xmlFleetTarget      `xml:"targetCapacitySpecification"`
	TerminateWithExpiration   bool                `xml:"terminateInstancesWithExpiration"`
	ReplaceUnhealthy          bool                `xml:"replaceUnhealthyInstances"`
	Tags                      []Tag               `xml:"tagSet>item"`
	Errors                    []FleetErrorItem    `xml:"errorSet>item"`
	Instances                 []FleetInstanceItem `xml:"fleetInstanceSet>item"`
}

// Fleet renders fl, in state, as DescribeFleets does: an instant fleet with the instances
// it launched that env's model still holds, grouped by pool.
func (env Env) Fleet(fl *ec2.Fleet, state string) FleetItem {
	x := FleetItem{FleetID: fl.ID, FleetState: state, ClientToken: fl.ClientToken, CreateTime: FormatTime(fl.CreateTime),
		Type: "instant", ExcessPolicy: "termination", Tags: Tags(fl.Tags), Errors: FleetErrors(fl.Errors),
		Target: xmlFleetTarget{Total: fl.TotalTarget, OnDemand: fl.OnDemandTarget, Spot: fl.SpotTarget, Default: fl.DefaultCapType}}
	for _, cfg := range fl.Configs {
		lc := xmlFleetLTConfig{Spec: xmlFleetLTSpec{LaunchTemplateID: cfg.TemplateID, LaunchTemplateName: cfg.TemplateName, Version: cfg.Version}}
		for _, o := range cfg.Overrides {
			lc.Overrides = append(lc.Overrides, *Pool(cfg.PoolSpec(o, true)).Overrides)
		}
		x.LaunchTemplateConfigs = append(x.LaunchTemplateConfigs, lc)
	}
	x.Instances = env.fleetInstances(fl)
	for _, fi := range x.Instances {
		x.FulfilledCapacity += float64(len(fi.InstanceIDs))
		if fi.Lifecycle == "on-demand" {
			x.FulfilledOnDemandCapacity += float64(len(fi.InstanceIDs))
		}
	}
	return x
}

// fleetInstances groups the fleet's instances that still exist by launch pool, as
// CreateFleet reported them.
func (env Env) fleetInstances(fl *ec2.Fleet) []FleetInstanceItem {
	var out []FleetInstanceItem
	idx := map[string]int{}
	for _, id := range fl.Instances {
		in := env.Model.Instances[id]
		if in == nil {
			continue
		}
		key := in.InstanceType + "/" + in.SubnetID + "/" + in.CapacityType
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, FleetInstanceItem{LaunchTemplateAndOverrides: fleetPool(fl, in),
				Lifecycle: in.CapacityType, InstanceType: in.InstanceType})
		}
		out[i].InstanceIDs = append(out[i].InstanceIDs, id)
	}
	return out
}

// fleetPool is the pool of fl that instance in was launched from.
func fleetPool(fl *ec2.Fleet, in *ec2.Instance) PoolItem {
	for _, cfg := range fl.Configs {
		if cfg.TemplateID != "" && cfg.TemplateID != in.LaunchTemplateID || cfg.TemplateName != "" && cfg.TemplateName != in.LaunchTemplateName {
			continue
		}
		for _, o := range cfg.Overrides {
			if (o.InstanceType == "" || o.InstanceType == in.InstanceType) && (o.SubnetID == "" || o.SubnetID == in.SubnetID) &&
				(o.AvailabilityZone == "" || o.AvailabilityZone == in.Zone) {
				return Pool(cfg.PoolSpec(o, true))
			}
		}
		return Pool(cfg.PoolSpec(ec2.FleetOverride{}, false))
	}
	return PoolItem{LaunchTemplateSpecification: xmlFleetLTSpec{LaunchTemplateID: in.LaunchTemplateID}}
}

// DescribeFleetsResponse is the body of its action's answer.
type DescribeFleetsResponse struct {
	Header
	Fleets    []FleetItem `xml:"fleetSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

// DeleteFleetSuccessItem is a fleet DeleteFleets deleted, with its states before and after.
type DeleteFleetSuccessItem struct {
	FleetID  string `xml:"fleetId"`
	Current  string `xml:"currentFleetState"`
	Previous string `xml:"previousFleetState"`
}

// DeleteFleetErrorItem is a fleet DeleteFleets could not delete, with why.
type DeleteFleetErrorItem struct {
	FleetID string `xml:"fleetId"`
	Error   struct {
		Code    string `xml:"code"`
		Message string `xml:"message"`
	} `xml:"error"`
}

// DeleteFleetError is fleet id's failure to delete, with DeleteFleets' code and message.
func DeleteFleetError(id, code, message string) DeleteFleetErrorItem {
	e := DeleteFleetErrorItem{FleetID: id}
	e.Error.Code, e.Error.Message = code, message
	return e
}

// DeleteFleetsResponse is the body of its action's answer.
type DeleteFleetsResponse struct {
	Header
	Successful   []DeleteFleetSuccessItem `xml:"successfulFleetDeletionSet>item"`
	Unsuccessful []DeleteFleetErrorItem   `xml:"unsuccessfulFleetDeletionSet>item"`
}
