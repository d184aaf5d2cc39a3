package service

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

func (s *Service) price(instanceType, zone, capacityType string) float64 {
	it := s.types[instanceType]
	if it == nil {
		return 0
	}
	if capacityType == "spot" {
		return ec2.SpotPrice(it, zone)
	}
	return it.OnDemandPrice
}

// --- DescribeInstanceTypes ---

func i32s(n int32) []string   { return []string{strconv.Itoa(int(n))} }
func i64s(n int64) []string   { return []string{strconv.FormatInt(n, 10)} }
func f64s(f float64) []string { return []string{strconv.FormatFloat(f, 'f', -1, 64)} }

var instanceTypeAttrs = wire.AttrTable[*ec2.InstanceTypeInfo]{
	"instance-type":                         func(it *ec2.InstanceTypeInfo) []string { return wire.One(it.Name) },
	"processor-info.supported-architecture": func(it *ec2.InstanceTypeInfo) []string { return wire.One(it.Arch) },
	"processor-info.manufacturer":           func(it *ec2.InstanceTypeInfo) []string { return wire.One(it.Manufacturer) },
	"processor-info.sustained-clock-speed-in-ghz": func(it *ec2.InstanceTypeInfo) []string {
		return f64s(it.ClockSpeedGHz)
	},
	"supported-virtualization-type":          func(*ec2.InstanceTypeInfo) []string { return wire.One("hvm") },
	"supported-root-device-type":             func(*ec2.InstanceTypeInfo) []string { return wire.One("ebs") },
	"supported-usage-class":                  func(*ec2.InstanceTypeInfo) []string { return []string{"on-demand", "spot"} },
	"current-generation":                     func(it *ec2.InstanceTypeInfo) []string { return wire.One(wire.FormatBool(!it.PreviousGeneration)) },
	"bare-metal":                             func(it *ec2.InstanceTypeInfo) []string { return wire.One(wire.FormatBool(it.BareMetal)) },
	"burstable-performance-supported":        func(it *ec2.InstanceTypeInfo) []string { return wire.One(wire.FormatBool(it.Burstable)) },
	"free-tier-eligible":                     func(*ec2.InstanceTypeInfo) []string { return wire.One("false") },
	"hypervisor":                             func(it *ec2.InstanceTypeInfo) []string { return wire.One(it.Hypervisor) },
	"instance-storage-supported":             func(it *ec2.InstanceTypeInfo) []string { return wire.One(wire.FormatBool(it.LocalNVMeGB > 0)) },
	"instance-storage-info.total-size-in-gb": func(it *ec2.InstanceTypeInfo) []string { return i64s(it.LocalNVMeGB) },
	"network-info.efa-supported":             func(it *ec2.InstanceTypeInfo) []string { return wire.One(wire.FormatBool(it.EFAs > 0)) },
	"network-info.encryption-in-transit-supported": func(it *ec2.InstanceTypeInfo) []string {
		return wire.One(wire.FormatBool(it.EncryptionInTransit))
	},
	"processor-info.supported-features": func(*ec2.InstanceTypeInfo) []string { return nil },
	"vcpu-info.default-vcpus":           func(it *ec2.InstanceTypeInfo) []string { return i32s(it.VCPUs) },
	"memory-info.size-in-mib":           func(it *ec2.InstanceTypeInfo) []string { return i64s(it.MemoryMiB) },
	"network-info.maximum-network-interfaces": func(it *ec2.InstanceTypeInfo) []string {
		return i32s(it.MaxENIs)
	},
	"network-info.ipv4-addresses-per-interface": func(it *ec2.InstanceTypeInfo) []string {
		return i32s(it.IPv4PerENI)
	},
	"network-info.network-performance": func(it *ec2.InstanceTypeInfo) []string { return wire.One(it.NetworkPerformance) },
	"network-info.ena-support":         func(*ec2.InstanceTypeInfo) []string { return wire.One("required") },
	"ebs-info.encryption-support":      func(*ec2.InstanceTypeInfo) []string { return wire.One("supported") },
	"ebs-info.nvme-support":            func(it *ec2.InstanceTypeInfo) []string { return wire.One(wire.InstanceType(it).EbsInfo.NvmeSupport) },
}

func (s *Service) describeInstanceTypes(c *call) (wire.Response, *wire.Error) {
	// Pages are cut by position in the catalog (seq = index + 1).
	idx := map[*ec2.InstanceTypeInfo]uint64{}
	for i := range s.catalog {
		idx[&s.catalog[i]] = uint64(i + 1)
	}
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.InstanceTypeInfo]{Attrs: instanceTypeAttrs, Min: 5, Max: 100,
		IDParam: "InstanceType", Dedupe: true, Seq: func(it *ec2.InstanceTypeInfo) uint64 { return idx[it] }})
	if err != nil {
		return nil, err
	}
	page, next, err := req.Run(s.types, func(n string) *wire.Error { // the catalog is fixed: no lock
		return wire.BadRequest(wire.CodeInvalidInstanceType, "The following supplied instance types do not exist: [%s]", n)
	})
	if err != nil {
		return nil, err
	}
	resp := &wire.DescribeInstanceTypesResponse{NextToken: next}
	for _, it := range page {
		resp.InstanceTypes = append(resp.InstanceTypes, wire.InstanceType(it))
	}
	return resp, nil
}

// --- DescribeInstanceTypeOfferings ---

type offering struct {
	seq                    uint64
	typ, locType, location string
}

var offeringAttrs = wire.AttrTable[offering]{
	"instance-type": func(o offering) []string { return wire.One(o.typ) },
	"location":      func(o offering) []string { return wire.One(o.location) },
}

func (s *Service) describeInstanceTypeOfferings(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[offering]{Attrs: offeringAttrs, Min: 5, Max: 1000,
		Seq: func(o offering) uint64 { return o.seq }})
	if err != nil {
		return nil, err
	}
	lt := c.q.Str("LocationType")
	if lt == "" {
		lt = "region"
	}
	var locs []string
	switch lt {
	case "region":
		locs = []string{s.region}
	case "availability-zone":
		for _, z := range s.zones {
			locs = append(locs, z.Name)
		}
	case "availability-zone-id":
		for _, z := range s.zones {
			locs = append(locs, z.ID)
		}
	default:
		return nil, wire.InvalidValue("Value (%s) for parameter locationType is invalid. Valid values: region, availability-zone, availability-zone-id", lt)
	}
	var items []offering
	for _, it := range s.catalog {
		for _, l := range locs {
			o := offering{seq: uint64(len(items) + 1), typ: it.Name, locType: lt, location: l}
			items = append(items, o)
		}
	}
	page, next := req.List(items)
	resp := &wire.DescribeOfferingsResponse{NextToken: next}
	for _, o := range page {
		resp.Offerings = append(resp.Offerings, wire.OfferingItem{InstanceType: o.typ, LocationType: o.locType, Location: o.location})
	}
	return resp, nil
}

// --- DescribeSpotPriceHistory ---

type spotRow struct {
	seq             uint64
	typ, zone, desc string
	price           float64
	stamp           time.Time
}

// spotPeriod is one period of the spot price history: epoch periods before the one in force.
type spotPeriod struct {
	epoch int
	start time.Time
}

// spotPeriods are the periods whose prices a request's StartTime..EndTime spans, newest
// first: the one in force at StartTime and every later one up to EndTime (and now).
func spotPeriods(c *call) ([]spotPeriod, *wire.Error) {
	start, hasStart, err := c.q.Time("StartTime")
	if err != nil {
		return nil, err
	}
	end, hasEnd, err := c.q.Time("EndTime")
	if err != nil {
		return nil, err
	}
	current := c.now.Truncate(ec2.SpotPricePeriod)
	if !hasEnd || end.After(c.now) {
		end = c.now
	}
	if !hasStart {
		start = c.now.Add(-24 * time.Hour)
	}
	var out []spotPeriod
	for epoch := 0; epoch < 4*90; epoch++ { // AWS keeps 90 days
		at := current.Add(-time.Duration(epoch) * ec2.SpotPricePeriod)
		if at.After(end) {
			continue
		}
		out = append(out, spotPeriod{epoch: epoch, start: at})
		if !at.After(start) {
			break
		}
	}
	return out, nil
}

var spotAttrs = wire.AttrTable[spotRow]{
	"instance-type":       func(r spotRow) []string { return wire.One(r.typ) },
	"availability-zone":   func(r spotRow) []string { return wire.One(r.zone) },
	"product-description": func(r spotRow) []string { return wire.One(r.desc) },
	"spot-price":          func(r spotRow) []string { return wire.One(strconv.FormatFloat(r.price, 'f', 6, 64)) },
}

// describeSpotPriceHistory answers, per type, zone and product, the price in force at
// StartTime and each later one up to EndTime (default now), newest first, as AWS does.
// Prices change every ec2.SpotPricePeriod; the one in force now never moves (ec2.SpotPrice),
// so Karpenter's choices are stable. Without a StartTime the history is the last day's.
func (s *Service) describeSpotPriceHistory(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[spotRow]{Attrs: spotAttrs, Min: 1, Max: 1000,
		Seq: func(r spotRow) uint64 { return r.seq }})
	if err != nil {
		return nil, err
	}
	periods, err := spotPeriods(c)
	if err != nil {
		return nil, err
	}
	types, products, zone := c.q.Strs("InstanceType"), c.q.Strs("ProductDescription"), c.q.Str("AvailabilityZone")
	if len(products) == 0 {
		products = []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"}
	}
	var rows []spotRow
	names := append([]string(nil), s.typeNames...)
	sort.Strings(names)
	for _, name := range names {
		if len(types) > 0 && !slices.Contains(types, name) {
			continue
		}
		it := s.types[name]
		for _, z := range s.zones {
			if zone != "" && z.Name != zone {
				continue
			}
			for _, pd := range products {
				if pd != "Linux/UNIX" && pd != "Linux/UNIX (Amazon VPC)" {
					continue
				}
				for _, p := range periods {
					rows = append(rows, spotRow{seq: uint64(len(rows) + 1), typ: name, zone: z.Name, desc: pd,
						price: ec2.SpotPriceAt(it, z.Name, p.epoch), stamp: p.start})
				}
			}
		}
	}
	page, next := req.List(rows)
	resp := &wire.DescribeSpotPricesResponse{NextToken: next}
	for _, r := range page {
		zid, _ := s.zoneID(r.zone)
		resp.Prices = append(resp.Prices, wire.SpotPriceItem{InstanceType: r.typ, ProductDescription: r.desc,
			SpotPrice: strconv.FormatFloat(r.price, 'f', 6, 64), Timestamp: wire.FormatTime(r.stamp),
			AvailabilityZone: r.zone, AvailabilityZoneID: zid})
	}
	return resp, nil
}

// --- DescribeCapacityReservations: the lab account has none ---

var capacityReservationAttrs = wire.AttrTable[struct{}]{
	"instance-type": nil, "availability-zone": nil, "state": nil, "capacity-reservation-id": nil,
	"owner-id": nil, "instance-platform": nil, "tenancy": nil, "instance-match-criteria": nil,
	"capacity-reservation-type": nil,
}

func (s *Service) describeCapacityReservations(c *call) (wire.Response, *wire.Error) {
	// Names are checked, never matched; tag-value is refused and empty values are not.
	vet := func(fs []wire.Filter) (func(struct{}) bool, *wire.Error) {
		for _, f := range fs {
			if _, ok := capacityReservationAttrs[f.Name]; !ok && !strings.HasPrefix(f.Name, "tag:") && f.Name != "tag-key" {
				return nil, wire.InvalidValue("The filter '%s' is invalid", f.Name)
			}
		}
		return func(struct{}) bool { return false }, nil
	}
	if err := describeNone(c, wire.Describe[struct{}]{Compile: vet, Min: 1, Max: 1000, IDParam: "CapacityReservationId"},
		func(id string) *wire.Error {
			return wire.BadRequest("InvalidCapacityReservationId.NotFound", "The capacity reservation ID '%s' does not exist", id)
		}); err != nil {
		return nil, err
	}
	return &wire.DescribeCapacityReservationsResponse{}, nil
}
