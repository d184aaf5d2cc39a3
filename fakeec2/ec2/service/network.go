package service

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// DiscoveryTagKey is the tag Karpenter's EC2NodeClass selects the lab's subnets and
// security group by; its value is the account's discovery tag (Config.DiscoveryTag), the
// course's ziba-production by default, as Karpenter's getting-started guide tags them with
// the cluster's name.
const (
	DiscoveryTagKey     = "karpenter.sh/discovery"
	DefaultDiscoveryTag = "ziba-production"
)

// seedDefaults creates the default VPC (10.0.0.0/16), one /19 subnet per zone, the VPC's
// default security group, the node security group and the AL2023 images. Callers hold s.mu.
func (s *Service) seedDefaults() {
	v := &ec2.VPC{Seq: s.nextSeq(), ID: s.newID("vpc"), CIDR: "10.0.0.0/16", IsDefault: true,
		Tags: []ec2.Tag{{Key: "Name", Value: s.discovery}}}
	s.model.VPCs[v.ID] = v
	s.save(bucketVPCs, v.ID, v)
	for i, z := range s.zones {
		sn := &ec2.Subnet{Seq: s.nextSeq(), ID: s.newID("subnet"), VpcID: v.ID, Zone: z.Name, ZoneID: z.ID,
			CIDR: fmt.Sprintf("10.0.%d.0/19", i*32), IsDefault: true, Tags: []ec2.Tag{
				{Key: "Name", Value: s.discovery + "-private-" + z.Name},
				{Key: DiscoveryTagKey, Value: s.discovery},
				{Key: "kubernetes.io/role/internal-elb", Value: "1"},
			}}
		s.model.Subnets[sn.ID] = sn
		s.save(bucketSubnets, sn.ID, sn)
	}
	for _, g := range []*ec2.SecurityGroup{
		{Name: "default", Description: "default VPC security group"},
		{Name: s.discovery + "-node", Description: "EKS node security group for " + s.discovery,
			Tags: []ec2.Tag{{Key: "Name", Value: s.discovery + "-node"}, {Key: DiscoveryTagKey, Value: s.discovery}}},
	} {
		g.Seq, g.ID, g.VpcID = s.nextSeq(), s.newID("sg"), v.ID
		s.model.Groups[g.ID] = g
		s.save(bucketGroups, g.ID, g)
	}
	s.seedImages()
}

func (s *Service) zoneID(zone string) (string, bool) {
	for _, z := range s.zones {
		if z.Name == zone {
			return z.ID, true
		}
	}
	return "", false
}

// privateDNS is EC2's internal host name for an address (ip-10-0-1-23.eu-west-2.compute.internal).
func (s *Service) privateDNS(ip string) string {
	return "ip-" + strings.ReplaceAll(ip, ".", "-") + "." + s.region + ".compute.internal"
}

// --- DescribeVpcs ---

var vpcAttrs = wire.AttrTable[*ec2.VPC]{
	"vpc-id":     func(v *ec2.VPC) []string { return wire.One(v.ID) },
	"cidr":       func(v *ec2.VPC) []string { return wire.One(v.CIDR) },
	"cidr-block": func(v *ec2.VPC) []string { return wire.One(v.CIDR) },
	"is-default": func(v *ec2.VPC) []string { return wire.One(wire.FormatBool(v.IsDefault)) },
	"state":      func(v *ec2.VPC) []string { return wire.One("available") },
	"owner-id":   func(v *ec2.VPC) []string { return nil },
}

func (s *Service) describeVpcs(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.VPC]{Attrs: vpcAttrs, Tags: func(v *ec2.VPC) []ec2.Tag { return v.Tags },
		Min: 5, Max: 1000, IDParam: "VpcId", Seq: func(v *ec2.VPC) uint64 { return v.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.VPCs, func(id string) *wire.Error {
		return wire.BadRequest("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", id)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeVpcsResponse{Vpcs: wire.Items(page, s.env().Vpc), NextToken: next}, nil
}

func filterSlice[T any](items []T, pred func(T) bool) []T {
	out := items[:0:0]
	for _, it := range items {
		if pred(it) {
			out = append(out, it)
		}
	}
	return out
}

// --- DescribeSubnets ---

var subnetAttrs = wire.AttrTable[*ec2.Subnet]{
	"subnet-id":            func(x *ec2.Subnet) []string { return wire.One(x.ID) },
	"vpc-id":               func(x *ec2.Subnet) []string { return wire.One(x.VpcID) },
	"availability-zone":    func(x *ec2.Subnet) []string { return wire.One(x.Zone) },
	"availability-zone-id": func(x *ec2.Subnet) []string { return wire.One(x.ZoneID) },
	"cidr-block":           func(x *ec2.Subnet) []string { return wire.One(x.CIDR) },
	"cidr":                 func(x *ec2.Subnet) []string { return wire.One(x.CIDR) },
	"default-for-az":       func(x *ec2.Subnet) []string { return wire.One(wire.FormatBool(x.IsDefault)) },
	"defaultForAz":         func(x *ec2.Subnet) []string { return wire.One(wire.FormatBool(x.IsDefault)) },
	"state":                func(x *ec2.Subnet) []string { return wire.One("available") },
	"map-public-ip-on-launch": func(x *ec2.Subnet) []string {
		return wire.One("false")
	},
}

func (s *Service) describeSubnets(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Subnet]{Attrs: subnetAttrs, Tags: func(x *ec2.Subnet) []ec2.Tag { return x.Tags },
		Min: 5, Max: 1000, IDParam: "SubnetId", Seq: func(x *ec2.Subnet) uint64 { return x.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.Subnets, func(id string) *wire.Error {
		return wire.BadRequest(wire.CodeInvalidSubnetIDNotFound, "The subnet ID '%s' does not exist", id)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeSubnetsResponse{Subnets: wire.Items(page, s.env().Subnet), NextToken: next}, nil
}

// --- DescribeSecurityGroups ---

var groupAttrs = wire.AttrTable[*ec2.SecurityGroup]{
	"group-id":    func(g *ec2.SecurityGroup) []string { return wire.One(g.ID) },
	"group-name":  func(g *ec2.SecurityGroup) []string { return wire.One(g.Name) },
	"description": func(g *ec2.SecurityGroup) []string { return wire.One(g.Description) },
	"vpc-id":      func(g *ec2.SecurityGroup) []string { return wire.One(g.VpcID) },
	"owner-id":    func(g *ec2.SecurityGroup) []string { return nil },
}

func (s *Service) describeSecurityGroups(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.SecurityGroup]{Attrs: groupAttrs, Tags: func(g *ec2.SecurityGroup) []ec2.Tag { return g.Tags },
		Min: 5, Max: 1000, IDParam: "GroupId", NameParam: "GroupName", ByName: s.groupByName,
		Seq: func(g *ec2.SecurityGroup) uint64 { return g.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.Groups, func(id string) *wire.Error {
		return wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist", id)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeSecurityGroupsResponse{Groups: wire.Items(page, s.env().SecurityGroup), NextToken: next}, nil
}

// groupByName finds a security group by name in any VPC. Callers hold s.mu.
func (s *Service) groupByName(name string) (*ec2.SecurityGroup, *wire.Error) {
	var found *ec2.SecurityGroup
	for _, g := range s.model.Groups {
		if g.Name == name {
			found = g
		}
	}
	if found == nil {
		return nil, wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist in default VPC", name)
	}
	return found, nil
}

// --- DescribeAvailabilityZones ---

var zoneAttrs = wire.AttrTable[zoneInfo]{
	"zone-name":            func(z zoneInfo) []string { return wire.One(z.Name) },
	"zone-id":              func(z zoneInfo) []string { return wire.One(z.ID) },
	"state":                func(z zoneInfo) []string { return wire.One("available") },
	"zone-type":            func(z zoneInfo) []string { return wire.One("availability-zone") },
	"opt-in-status":        func(z zoneInfo) []string { return wire.One("opt-in-not-required") },
	"group-name":           func(z zoneInfo) []string { return wire.One(regionOf(z.Name)) },
	"network-border-group": func(z zoneInfo) []string { return wire.One(regionOf(z.Name)) },
	"region-name":          func(z zoneInfo) []string { return wire.One(regionOf(z.Name)) },
}

func regionOf(zone string) string { return strings.TrimRight(zone, "abcdefghijklmnopqrstuvwxyz") }

func (s *Service) describeAvailabilityZones(c *call) (wire.Response, *wire.Error) {
	zids := c.q.Strs("ZoneId")
	zones, pos := map[string]zoneInfo{}, map[string]uint64{}
	for i, z := range s.zones {
		zones[z.Name], pos[z.Name] = z, uint64(i+1)
	}
	req, err := wire.ParseDescribe(c.q, wire.Describe[zoneInfo]{Attrs: zoneAttrs, NoPaging: true, IDParam: "ZoneName", Dedupe: true,
		Keep: func(z zoneInfo) bool { return len(zids) == 0 || slices.Contains(zids, z.ID) },
		Seq:  func(z zoneInfo) uint64 { return pos[z.Name] }})
	if err != nil {
		return nil, err
	}
	page, _, err := req.Run(zones, func(n string) *wire.Error { return wire.InvalidValue("The zone '%s' does not exist.", n) })
	if err != nil {
		return nil, err
	}
	env := s.env()
	return &wire.DescribeAvailabilityZonesResponse{Zones: wire.Items(page, func(z zoneInfo) wire.ZoneItem { return env.Zone(z.Name, z.ID) })}, nil
}

// macFor derives a stable MAC address from a resource ID.
func macFor(id string) string {
	h := uint64(1469598103934665603)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	b := []string{"02"}
	for i := 0; i < 5; i++ {
		b = append(b, fmt.Sprintf("%02x", byte(h>>(8*i))))
	}
	return strings.Join(b, ":")
}

func itoa(i int) string { return strconv.Itoa(i) }
