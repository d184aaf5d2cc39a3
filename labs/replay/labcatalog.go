package replay

import "github.com/karplab/karplab/fakeec2/ec2"

// LabCatalog is the lab's own Catalog: the regions fakeec2/ec2 has data for, every zone AWS
// opens in each, and AWS's instance catalog of the region.
type LabCatalog struct{}

var _ Catalog = LabCatalog{}

// Zones are the region's zone names; false when the lab has no data for the region.
func (LabCatalog) Zones(region string) ([]string, bool) {
	r, err := ec2.LookupRegion(region)
	if err != nil {
		return nil, false
	}
	return r.ZoneNames(), true
}

// HasInstanceType reports whether AWS offers the type in the region, as the lab's catalog has it.
func (LabCatalog) HasInstanceType(region, name string) bool {
	_, ok := ec2.LookupInstanceTypeIn(region, name)
	return ok
}

// Regions are the regions the lab has data for.
func (LabCatalog) Regions() []string { return ec2.Regions() }
