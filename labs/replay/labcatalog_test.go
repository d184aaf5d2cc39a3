package replay

import (
	"slices"
	"testing"
)

// The lab's catalog answers a captured us-east-1 cluster: its six zones, a type AWS sells
// there and one it does not, and a region the lab has no data for.
func TestLabCatalog(t *testing.T) {
	var c LabCatalog
	zones, ok := c.Zones("us-east-1")
	if !ok || len(zones) != 6 || zones[5] != "us-east-1f" {
		t.Errorf("Zones(us-east-1) = %v, %t", zones, ok)
	}
	if _, ok := c.Zones("mars-east-1"); ok {
		t.Error("Zones(mars-east-1) answered")
	}
	if !c.HasInstanceType("us-east-1", "r7i.48xlarge") || c.HasInstanceType("us-east-1", "m9z.huge") {
		t.Error("HasInstanceType: want r7i.48xlarge and not m9z.huge in us-east-1")
	}
	if !slices.Contains(c.Regions(), "eu-west-2") {
		t.Errorf("Regions() = %v", c.Regions())
	}
}
