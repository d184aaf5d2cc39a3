package ec2

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// DefaultRegion is the course's region, the lab's default.
const DefaultRegion = "eu-west-2"

// Zone is one availability zone: its name in the account and its ID, the same physical
// zone in every account (use1-az1).
type Zone struct {
	Name, ID string
}

// Region is what the lab knows of one AWS Region: its zones, as one account sees them.
type Region struct {
	Name  string
	Zones []Zone
}

// regions are the commercial Regions the catalog has prices for (the 16 of the Price List
// dump zz_generated_catalog.go cites), with the zones AWS opens to a new account. Zone
// names map to zone IDs per account in Regions opened before 2019 (AWS's "AZ IDs" page),
// so these are one account's mapping; eu-west-2's is the one the course's account has.
// us-east-1 has six zones and ap-northeast-1's b and ca-central-1's c are closed to new
// accounts, as on AWS.
var regions = map[string][]Zone{
	"us-east-1":      zones("us-east-1", "use1", "a:az1 b:az2 c:az3 d:az4 e:az5 f:az6"),
	"us-east-2":      zones("us-east-2", "use2", "a:az1 b:az2 c:az3"),
	"us-west-1":      zones("us-west-1", "usw1", "a:az1 c:az3"),
	"us-west-2":      zones("us-west-2", "usw2", "a:az1 b:az2 c:az3 d:az4"),
	"ca-central-1":   zones("ca-central-1", "cac1", "a:az1 b:az2 d:az4"),
	"sa-east-1":      zones("sa-east-1", "sae1", "a:az1 b:az2 c:az3"),
	"eu-west-1":      zones("eu-west-1", "euw1", "a:az1 b:az2 c:az3"),
	"eu-west-2":      zones("eu-west-2", "euw2", "a:az2 b:az3 c:az1"),
	"eu-west-3":      zones("eu-west-3", "euw3", "a:az1 b:az2 c:az3"),
	"eu-central-1":   zones("eu-central-1", "euc1", "a:az2 b:az3 c:az1"),
	"eu-north-1":     zones("eu-north-1", "eun1", "a:az1 b:az2 c:az3"),
	"ap-south-1":     zones("ap-south-1", "aps1", "a:az1 b:az3 c:az2"),
	"ap-southeast-1": zones("ap-southeast-1", "apse1", "a:az1 b:az2 c:az3"),
	"ap-southeast-2": zones("ap-southeast-2", "apse2", "a:az1 b:az3 c:az2"),
	"ap-northeast-1": zones("ap-northeast-1", "apne1", "a:az4 c:az1 d:az2"),
	"ap-northeast-2": zones("ap-northeast-2", "apne2", "a:az1 b:az2 c:az3 d:az4"),
}

func zones(region, short, spec string) []Zone {
	var out []Zone
	for _, f := range strings.Fields(spec) {
		letter, id, _ := strings.Cut(f, ":")
		out = append(out, Zone{Name: region + letter, ID: short + "-" + id})
	}
	return out
}

// Regions returns the names of the regions the lab has data for, sorted.
func Regions() []string {
	out := make([]string, 0, len(regions))
	for r := range regions {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// LookupRegion returns region with all its zones, or an error naming the regions the lab
// has.
func LookupRegion(name string) (Region, error) {
	zs, ok := regions[name]
	if !ok {
		return Region{}, fmt.Errorf("region %q: the lab has data for %s", name, strings.Join(Regions(), ", "))
	}
	return Region{Name: name, Zones: slices.Clone(zs)}, nil
}

// SelectZones returns region with only the named zones (names such as us-east-1a, or
// their letters), in the region's order; none named keeps every zone. An unknown zone is
// an error naming the region's zones.
func (r Region) SelectZones(names []string) (Region, error) {
	if len(names) == 0 {
		return r, nil
	}
	var keep []Zone
	for _, z := range r.Zones {
		for _, n := range names {
			if n == z.Name || r.Name+n == z.Name || n == z.ID {
				keep = append(keep, z)
				break
			}
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(keep, func(z Zone) bool { return n == z.Name || r.Name+n == z.Name || n == z.ID }) {
			return Region{}, fmt.Errorf("zone %q: %s has %s", n, r.Name, strings.Join(r.ZoneNames(), ", "))
		}
	}
	return Region{Name: r.Name, Zones: keep}, nil
}

// ZoneNames returns the region's zone names in order.
func (r Region) ZoneNames() []string {
	out := make([]string, len(r.Zones))
	for i, z := range r.Zones {
		out[i] = z.Name
	}
	return out
}

// ShortName is the region as zone IDs spell it: use1 for us-east-1.
func ShortName(region string) string {
	if zs, ok := regions[region]; ok && len(zs) > 0 {
		short, _, _ := strings.Cut(zs[0].ID, "-")
		return short
	}
	parts := strings.Split(region, "-")
	if len(parts) != 3 {
		return region
	}
	return parts[0] + parts[1][:1] + parts[2]
}
