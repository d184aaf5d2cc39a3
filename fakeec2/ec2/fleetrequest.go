package ec2

import "strconv"

// FleetOverride is one LaunchTemplateConfigs.N.Overrides.M as sent (echoed back in
// LaunchTemplateAndOverrides).
type FleetOverride struct {
	InstanceType     string
	SubnetID         string
	AvailabilityZone string
	ImageID          string
	MaxPrice         string
	Priority         *float64
	WeightedCapacity *float64
}

// FleetConfig is one LaunchTemplateConfigs.N as sent: the template and its overrides.
type FleetConfig struct {
	TemplateID, TemplateName, Version string
	Overrides                         []FleetOverride
}

// fmtFloat writes a number as EC2 echoes it back ("" when unset).
func fmtFloat(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// FleetError is a launch pool CreateFleet could not launch, as the fleet keeps it for
// DescribeFleets. Its fields (numbers as text) are those of the errorSet item fleet
// records have always been persisted with.
type FleetError struct {
	LaunchTemplateAndOverrides FleetPoolSpec
	Lifecycle                  string
	ErrorCode                  string
	ErrorMessage               string
}

// FleetPoolSpec names a launch pool: its template and, when one applies, its override.
type FleetPoolSpec struct {
	LaunchTemplateSpecification FleetTemplateSpec
	Overrides                   *FleetPoolOverride
}

// FleetTemplateSpec is the launch template a pool names.
type FleetTemplateSpec struct {
	LaunchTemplateID   string
	LaunchTemplateName string
	Version            string
}

// FleetPoolOverride is a pool's override, its numbers as EC2 echoes them.
type FleetPoolOverride struct {
	InstanceType     string
	MaxPrice         string
	SubnetID         string
	AvailabilityZone string
	WeightedCapacity string
	Priority         string
	ImageID          string
}

// PoolSpec names the pool of c and o (o only when hasOverride).
func (c *FleetConfig) PoolSpec(o FleetOverride, hasOverride bool) FleetPoolSpec {
	x := FleetPoolSpec{LaunchTemplateSpecification: FleetTemplateSpec{LaunchTemplateID: c.TemplateID,
		LaunchTemplateName: c.TemplateName, Version: c.Version}}
	if hasOverride {
		x.Overrides = &FleetPoolOverride{InstanceType: o.InstanceType, MaxPrice: o.MaxPrice, SubnetID: o.SubnetID,
			AvailabilityZone: o.AvailabilityZone, WeightedCapacity: fmtFloat(o.WeightedCapacity),
			Priority: fmtFloat(o.Priority), ImageID: o.ImageID}
	}
	return x
}
