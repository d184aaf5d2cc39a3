package service

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// What a person asks about the account itself: DescribeRegions,
// DescribeAccountAttributes, DescribeKeyPairs, DescribeAddresses, DescribePlacementGroups,
// DescribeRouteTables. The lab has no key pairs, Elastic IPs or placement groups; each VPC
// has its main route table with the local route.

// optInRegions need opting in (AllRegions shows them as not-opted-in); the others are
// enabled in every account.
var (
	defaultRegions = []string{"ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ap-south-1", "ap-southeast-1",
		"ap-southeast-2", "ca-central-1", "eu-central-1", "eu-north-1", "eu-west-1", "eu-west-2", "eu-west-3",
		"sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2"}
	optInRegions = []string{"af-south-1", "ap-east-1", "ap-south-2", "ap-southeast-3", "ap-southeast-4", "ca-west-1",
		"eu-central-2", "eu-south-1", "eu-south-2", "il-central-1", "me-central-1", "me-south-1"}
)

type regionRow struct {
	seq          uint64
	name, status string
}

var regionAttrs = wire.AttrTable[regionRow]{
	"region-name":   func(r regionRow) []string { return wire.One(r.name) },
	"endpoint":      func(r regionRow) []string { return wire.One("ec2." + r.name + ".amazonaws.com") },
	"opt-in-status": func(r regionRow) []string { return wire.One(r.status) },
}

func (s *Service) describeRegions(c *call) (wire.Response, *wire.Error) {
	var all bool
	req, err := wire.ParseDescribe(c.q, wire.Describe[regionRow]{Attrs: regionAttrs, NoPaging: true,
		Params: func(q *wire.Query) (e *wire.Error) {
			all, _, e = q.Bool("AllRegions")
			return e
		},
		IDParam: "RegionName", Dedupe: true, Seq: func(r regionRow) uint64 { return r.seq }})
	if err != nil {
		return nil, err
	}
	rows := map[string]regionRow{}
	for _, r := range defaultRegions {
		rows[r] = regionRow{name: r, status: "opt-in-not-required"}
	}
	if _, ok := rows[s.region]; !ok {
		rows[s.region] = regionRow{name: s.region, status: "opted-in"}
	}
	if all {
		for _, r := range optInRegions {
			if _, ok := rows[r]; !ok {
				rows[r] = regionRow{name: r, status: "not-opted-in"}
			}
		}
	}
	for i, name := range sortedKeys(rows) { // answered by name
		r := rows[name]
		r.seq = uint64(i + 1)
		rows[name] = r
	}
	page, _, err := req.Run(rows, func(n string) *wire.Error { return wire.InvalidValue("Invalid region names: [%s]", n) })
	if err != nil {
		return nil, err
	}
	return &wire.DescribeRegionsResponse{Regions: wire.Items(page, func(r regionRow) wire.RegionItem { return wire.Region(r.name, r.status) })}, nil
}

// --- DescribeAccountAttributes ---

func (s *Service) describeAccountAttributes(c *call) (wire.Response, *wire.Error) {
	s.mu.RLock()
	defVPC := "none"
	if v := s.defaultVPC(); v != nil {
		defVPC = v.ID
	}
	s.mu.RUnlock()
	attrs := map[string][]string{
		"supported-platforms":                   {"VPC"},
		"default-vpc":                           {defVPC},
		"max-instances":                         {"1000"},
		"vpc-max-security-groups-per-interface": {"5"},
		"max-elastic-ips":                       {"5"},
		"vpc-max-elastic-ips":                   {"5"},
	}
	order := []string{"supported-platforms", "vpc-max-security-groups-per-interface", "max-elastic-ips", "max-instances",
		"vpc-max-elastic-ips", "default-vpc"}
	names := c.q.Strs("AttributeName")
	for _, n := range names {
		if attrs[n] == nil {
			return nil, wire.InvalidValue("Value (%s) for parameter attributeName is invalid. Unknown attribute.", n)
		}
	}
	resp := &wire.DescribeAccountAttributesResponse{}
	for _, n := range order {
		if len(names) > 0 && !slices.Contains(names, n) {
			continue
		}
		resp.Attributes = append(resp.Attributes, wire.AccountAttribute(n, attrs[n]))
	}
	return resp, nil
}

// --- DescribeKeyPairs / DescribeAddresses: the lab has none ---

// describeNone answers a Describe of records the lab never has: the filters are checked,
// the first ID or name asked for is not found, and the list is empty.
func describeNone(c *call, d wire.Describe[struct{}], idNotFound func(string) *wire.Error) *wire.Error {
	req, err := wire.ParseDescribe(c.q, d)
	if err != nil {
		return err
	}
	_, _, err = req.Run(nil, idNotFound)
	return err
}

func noTags(struct{}) []ec2.Tag { return nil }

func (s *Service) describeKeyPairs(c *call) (wire.Response, *wire.Error) {
	notFound := func(name string) *wire.Error {
		return wire.BadRequest("InvalidKeyPair.NotFound", "The key pair '%s' does not exist", name)
	}
	// KeyName is looked up before KeyPairId, as EC2 does.
	if err := describeNone(c, wire.Describe[struct{}]{Attrs: wire.NoneTable[struct{}]("key-name", "key-pair-id", "fingerprint", "key-type"),
		Tags: noTags, NoPaging: true, IDParam: "KeyName", NameParam: "KeyPairId",
		ByName: func(id string) (struct{}, *wire.Error) { return struct{}{}, notFound(id) }}, notFound); err != nil {
		return nil, err
	}
	if _, _, err := c.q.Bool("IncludePublicKey"); err != nil {
		return nil, err
	}
	return &wire.DescribeKeyPairsResponse{}, nil
}

func (s *Service) describeAddresses(c *call) (wire.Response, *wire.Error) {
	attrs := wire.NoneTable[struct{}]("allocation-id", "association-id", "domain", "instance-id", "network-border-group",
		"network-interface-id", "network-interface-owner-id", "private-ip-address", "public-ip")
	if err := describeNone(c, wire.Describe[struct{}]{Attrs: attrs, Tags: noTags, NoPaging: true,
		IDParam: "PublicIp", NameParam: "AllocationId",
		ByName: func(id string) (struct{}, *wire.Error) {
			return struct{}{}, wire.BadRequest("InvalidAllocationID.NotFound", "The allocation ID '%s' does not exist", id)
		}}, func(ip string) *wire.Error {
		return wire.BadRequest("InvalidAddress.NotFound", "Address '%s' not found.", ip)
	}); err != nil {
		return nil, err
	}
	return &wire.DescribeAddressesResponse{}, nil
}

// --- DescribePlacementGroups ---

// The lab has no placement groups (nothing creates them), so every answer is an empty
// list or, for a group asked for by name or ID, the not-found error AWS gives.

// placementGroupFilters are the filter names AWS documents for DescribePlacementGroups
// (tag-key and tag-value come with the tags).
var placementGroupFilters = wire.NoneTable[struct{}]("group-name", "group-arn", "spread-level", "state", "strategy")

func (s *Service) describePlacementGroups(c *call) (wire.Response, *wire.Error) {
	err := describeNone(c, wire.Describe[struct{}]{Attrs: placementGroupFilters, Tags: noTags, NoPaging: true,
		IDParam: "GroupId", NameParam: "GroupName",
		CheckIDs: func(ids []string) *wire.Error {
			for _, id := range ids {
				if !validID(id, "pg") {
					return wire.BadRequest(wire.CodeInvalidPlacementGroupIDMalformed, "Invalid id: \"%s\" (expecting \"pg-...\")", id)
				}
			}
			return nil
		},
		ByName: func(name string) (struct{}, *wire.Error) {
			return struct{}{}, wire.BadRequest(wire.CodeInvalidPlacementGroupUnknown, "The Placement Group '%s' is unknown.", name)
		}}, func(id string) *wire.Error {
		return wire.BadRequest(wire.CodeInvalidPlacementGroupIDNotFound, "The Placement Group ID '%s' is unknown.", id)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribePlacementGroupsResponse{}, nil
}

// --- DescribeRouteTables ---

type routeTable struct {
	seq            uint64
	id, assocID    string
	vpcID, vpcCIDR string
}

// hexID derives a stable 17-hex-digit ID for a resource the emulator does not store.
func hexID(prefix, from string) string {
	h := fnv.New64a()
	h.Write([]byte(prefix + "/" + from))
	return fmt.Sprintf("%s-0%016x", prefix, h.Sum64())
}

// routeTables are the VPCs' main route tables. Callers hold s.mu.
func (s *Service) routeTables() map[string]routeTable {
	out := map[string]routeTable{}
	for _, v := range s.model.VPCs {
		rt := routeTable{seq: v.Seq, id: hexID("rtb", v.ID), assocID: hexID("rtbassoc", v.ID), vpcID: v.ID, vpcCIDR: v.CIDR}
		out[rt.id] = rt
	}
	return out
}

var routeTableAttrs = wire.AttrTable[routeTable]{
	"route-table-id":                         func(r routeTable) []string { return wire.One(r.id) },
	"vpc-id":                                 func(r routeTable) []string { return wire.One(r.vpcID) },
	"owner-id":                               func(r routeTable) []string { return nil }, // set per call
	"association.main":                       func(r routeTable) []string { return wire.One("true") },
	"association.route-table-association-id": func(r routeTable) []string { return wire.One(r.assocID) },
	"association.route-table-id":             func(r routeTable) []string { return wire.One(r.id) },
	"association.subnet-id":                  func(r routeTable) []string { return nil },
	"association.gateway-id":                 func(r routeTable) []string { return nil },
	"association.association-state":          func(r routeTable) []string { return wire.One("associated") },
	"route.destination-cidr-block":           func(r routeTable) []string { return wire.One(r.vpcCIDR) },
	"route.gateway-id":                       func(r routeTable) []string { return wire.One("local") },
	"route.origin":                           func(r routeTable) []string { return wire.One("CreateRouteTable") },
	"route.state":                            func(r routeTable) []string { return wire.One("active") },
	"route.nat-gateway-id":                   func(r routeTable) []string { return nil },
	"route.destination-ipv6-cidr-block":      func(r routeTable) []string { return nil },
	"route.destination-prefix-list-id":       func(r routeTable) []string { return nil },
	"route.transit-gateway-id":               func(r routeTable) []string { return nil },
	"route.vpc-peering-connection-id":        func(r routeTable) []string { return nil },
	"route.instance-id":                      func(r routeTable) []string { return nil },
	"route.egress-only-internet-gateway-id":  func(r routeTable) []string { return nil },
	"association.carrier-gateway-id":         func(r routeTable) []string { return nil },
}

func (s *Service) describeRouteTables(c *call) (wire.Response, *wire.Error) {
	attrs := wire.AttrTable[routeTable]{}
	for k, f := range routeTableAttrs {
		attrs[k] = f
	}
	attrs["owner-id"] = func(routeTable) []string { return wire.One(s.account) }
	req, err := wire.ParseDescribe(c.q, wire.Describe[routeTable]{Attrs: attrs, Tags: func(routeTable) []ec2.Tag { return nil },
		Min: 5, Max: 100, IDParam: "RouteTableId", Seq: func(r routeTable) uint64 { return r.seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, aerr := req.Run(s.routeTables(), func(id string) *wire.Error {
		return wire.BadRequest("InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist", id)
	})
	if aerr != nil {
		return nil, aerr
	}
	env := s.env()
	return &wire.DescribeRouteTablesResponse{NextToken: next, RouteTables: wire.Items(page, func(r routeTable) wire.RouteTableItem {
		return env.MainRouteTable(r.id, r.assocID, r.vpcID, r.vpcCIDR)
	})}, nil
}
