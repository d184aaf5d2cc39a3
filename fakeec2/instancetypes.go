package fakeec2

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

func (s *Server) price(instanceType, zone, capacityType string) float64 {
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

type xmlInstanceTypeInfo struct {
	InstanceType                  string        `xml:"instanceType"`
	CurrentGeneration             string        `xml:"currentGeneration"`
	FreeTierEligible              string        `xml:"freeTierEligible"`
	SupportedUsageClasses         []string      `xml:"supportedUsageClasses>item"`
	SupportedRootDeviceTypes      []string      `xml:"supportedRootDeviceTypes>item"`
	SupportedVirtualizationTypes  []string      `xml:"supportedVirtualizationTypes>item"`
	BareMetal                     string        `xml:"bareMetal"`
	Hypervisor                    string        `xml:"hypervisor,omitempty"`
	ProcessorInfo                 xmlProcessor  `xml:"processorInfo"`
	VCPUInfo                      xmlVCPU       `xml:"vCpuInfo"`
	MemoryInfo                    xmlMemory     `xml:"memoryInfo"`
	InstanceStorageSupported      string        `xml:"instanceStorageSupported"`
	EbsInfo                       xmlEbsInfo    `xml:"ebsInfo"`
	NetworkInfo                   xmlNetworkInf `xml:"networkInfo"`
	PlacementGroupStrategies      []string      `xml:"placementGroupInfo>supportedStrategies>item"`
	HibernationSupported          string        `xml:"hibernationSupported"`
	BurstablePerformanceSupported string        `xml:"burstablePerformanceSupported"`
	DedicatedHostsSupported       string        `xml:"dedicatedHostsSupported"`
	AutoRecoverySupported         string        `xml:"autoRecoverySupported"`
	SupportedBootModes            []string      `xml:"supportedBootModes>item"`
	NitroEnclavesSupport          string        `xml:"nitroEnclavesSupport"`
	NitroTpmSupport               string        `xml:"nitroTpmSupport"`
}

type xmlProcessor struct {
	SupportedArchitectures []string `xml:"supportedArchitectures>item"`
	SustainedClockSpeed    float64  `xml:"sustainedClockSpeedInGhz"`
	Manufacturer           string   `xml:"manufacturer"`
}

type xmlVCPU struct {
	DefaultVCPUs          int32 `xml:"defaultVCpus"`
	DefaultCores          int32 `xml:"defaultCores"`
	DefaultThreadsPerCore int32 `xml:"defaultThreadsPerCore"`
}

type xmlMemory struct {
	SizeInMiB int64 `xml:"sizeInMiB"`
}

type xmlEbsInfo struct {
	EbsOptimizedSupport string `xml:"ebsOptimizedSupport"`
	EncryptionSupport   string `xml:"encryptionSupport"`
	NvmeSupport         string `xml:"nvmeSupport"`
}

type xmlNetworkCard struct {
	NetworkCardIndex         int32  `xml:"networkCardIndex"`
	NetworkPerformance       string `xml:"networkPerformance"`
	MaximumNetworkInterfaces int32  `xml:"maximumNetworkInterfaces"`
}

type xmlNetworkInf struct {
	NetworkPerformance        string           `xml:"networkPerformance"`
	MaximumNetworkInterfaces  int32            `xml:"maximumNetworkInterfaces"`
	MaximumNetworkCards       int32            `xml:"maximumNetworkCards"`
	DefaultNetworkCardIndex   int32            `xml:"defaultNetworkCardIndex"`
	NetworkCards              []xmlNetworkCard `xml:"networkCards>item"`
	IPv4AddressesPerInterface int32            `xml:"ipv4AddressesPerInterface"`
	IPv6AddressesPerInterface int32            `xml:"ipv6AddressesPerInterface"`
	IPv6Supported             string           `xml:"ipv6Supported"`
	EnaSupport                string           `xml:"enaSupport"`
	EfaSupported              string           `xml:"efaSupported"`
	EncryptionInTransit       string           `xml:"encryptionInTransitSupported"`
}

type describeInstanceTypesResponse struct {
	wire.Header
	InstanceTypes []xmlInstanceTypeInfo `xml:"instanceTypeSet>item"`
	NextToken     string                `xml:"nextToken,omitempty"`
}

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
	"supported-virtualization-type":   func(*ec2.InstanceTypeInfo) []string { return wire.One("hvm") },
	"supported-root-device-type":      func(*ec2.InstanceTypeInfo) []string { return wire.One("ebs") },
	"supported-usage-class":           func(*ec2.InstanceTypeInfo) []string { return []string{"on-demand", "spot"} },
	"current-generation":              func(*ec2.InstanceTypeInfo) []string { return wire.One("true") },
	"bare-metal":                      func(*ec2.InstanceTypeInfo) []string { return wire.One("false") },
	"burstable-performance-supported": func(*ec2.InstanceTypeInfo) []string { return wire.One("false") },
	"free-tier-eligible":              func(*ec2.InstanceTypeInfo) []string { return wire.One("false") },
	"hypervisor":                      func(*ec2.InstanceTypeInfo) []string { return wire.One("nitro") },
	"instance-storage-supported":      func(*ec2.InstanceTypeInfo) []string { return wire.One("false") },
	"vcpu-info.default-vcpus":         func(it *ec2.InstanceTypeInfo) []string { return i32s(it.VCPUs) },
	"memory-info.size-in-mib":         func(it *ec2.InstanceTypeInfo) []string { return i64s(it.MemoryMiB) },
	"network-info.maximum-network-interfaces": func(it *ec2.InstanceTypeInfo) []string {
		return i32s(it.MaxENIs)
	},
	"network-info.ipv4-addresses-per-interface": func(it *ec2.InstanceTypeInfo) []string {
		return i32s(it.IPv4PerENI)
	},
	"network-info.network-performance": func(it *ec2.InstanceTypeInfo) []string { return wire.One(it.NetworkPerformance) },
	"network-info.ena-support":         func(*ec2.InstanceTypeInfo) []string { return wire.One("required") },
	"ebs-info.encryption-support":      func(*ec2.InstanceTypeInfo) []string { return wire.One("supported") },
	"ebs-info.nvme-support":            func(*ec2.InstanceTypeInfo) []string { return wire.One("required") },
}

func (s *Server) describeInstanceTypes(c *call) (wire.Response, *wire.Error) {
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
	resp := &describeInstanceTypesResponse{NextToken: next}
	for _, it := range page {
		resp.InstanceTypes = append(resp.InstanceTypes, s.wireInstanceType(it))
	}
	return resp, nil
}

func (s *Server) wireInstanceType(it *ec2.InstanceTypeInfo) xmlInstanceTypeInfo {
	threads := int32(2)
	if it.IsGraviton() {
		threads = 1
	}
	boot := []string{"legacy-bios", "uefi"}
	if it.IsGraviton() {
		boot = []string{"uefi"}
	}
	bareMetal, hypervisor := "false", "nitro"
	if it.BareMetal {
		bareMetal, hypervisor = "true", ""
	}
	return xmlInstanceTypeInfo{
		InstanceType: it.Name, CurrentGeneration: "true", FreeTierEligible: "false",
		SupportedUsageClasses:        []string{"on-demand", "spot"},
		SupportedRootDeviceTypes:     []string{"ebs"},
		SupportedVirtualizationTypes: []string{"hvm"},
		BareMetal:                    bareMetal, Hypervisor: hypervisor,
		ProcessorInfo: xmlProcessor{SupportedArchitectures: []string{it.Arch}, SustainedClockSpeed: it.ClockSpeedGHz,
			Manufacturer: it.Manufacturer},
		VCPUInfo:                 xmlVCPU{DefaultVCPUs: it.VCPUs, DefaultCores: it.VCPUs / threads, DefaultThreadsPerCore: threads},
		MemoryInfo:               xmlMemory{SizeInMiB: it.MemoryMiB},
		InstanceStorageSupported: "false",
		EbsInfo:                  xmlEbsInfo{EbsOptimizedSupport: "default", EncryptionSupport: "supported", NvmeSupport: "required"},
		NetworkInfo: xmlNetworkInf{
			NetworkPerformance: it.NetworkPerformance, MaximumNetworkInterfaces: it.MaxENIs, MaximumNetworkCards: 1,
			NetworkCards: []xmlNetworkCard{{NetworkCardIndex: 0, NetworkPerformance: it.NetworkPerformance,
				MaximumNetworkInterfaces: it.MaxENIs}},
			IPv4AddressesPerInterface: it.IPv4PerENI, IPv6AddressesPerInterface: it.IPv4PerENI,
			IPv6Supported: "true", EnaSupport: "required", EfaSupported: "false", EncryptionInTransit: "true",
		},
		PlacementGroupStrategies: []string{"cluster", "partition", "spread"},
		HibernationSupported:     "true", BurstablePerformanceSupported: "false", DedicatedHostsSupported: "true",
		AutoRecoverySupported: "true", SupportedBootModes: boot, NitroEnclavesSupport: "supported",
		NitroTpmSupport: "supported",
	}
}

// --- DescribeInstanceTypeOfferings ---

type xmlOffering struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

type describeOfferingsResponse struct {
	wire.Header
	Offerings []xmlOffering `xml:"instanceTypeOfferingSet>item"`
	NextToken string        `xml:"nextToken,omitempty"`
}

type offering struct {
	seq                    uint64
	typ, locType, location string
}

var offeringAttrs = wire.AttrTable[offering]{
	"instance-type": func(o offering) []string { return wire.One(o.typ) },
	"location":      func(o offering) []string { return wire.One(o.location) },
}

func (s *Server) describeInstanceTypeOfferings(c *call) (wire.Response, *wire.Error) {
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
	resp := &describeOfferingsResponse{NextToken: next}
	for _, o := range page {
		resp.Offerings = append(resp.Offerings, xmlOffering{InstanceType: o.typ, LocationType: o.locType, Location: o.location})
	}
	return resp, nil
}

// --- DescribeSpotPriceHistory ---

type xmlSpotPrice struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
}

type describeSpotPricesResponse struct {
	wire.Header
	Prices    []xmlSpotPrice `xml:"spotPriceHistorySet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

type spotRow struct {
	seq             uint64
	typ, zone, desc string
	price           float64
}

var spotAttrs = wire.AttrTable[spotRow]{
	"instance-type":       func(r spotRow) []string { return wire.One(r.typ) },
	"availability-zone":   func(r spotRow) []string { return wire.One(r.zone) },
	"product-description": func(r spotRow) []string { return wire.One(r.desc) },
	"spot-price":          func(r spotRow) []string { return wire.One(strconv.FormatFloat(r.price, 'f', 6, 64)) },
}

// describeSpotPriceHistory answers one price per type, zone and product: the price in
// force, stamped at the start of the current hour (emulated prices do not move).
func (s *Server) describeSpotPriceHistory(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[spotRow]{Attrs: spotAttrs, Min: 1, Max: 1000,
		Seq: func(r spotRow) uint64 { return r.seq }})
	if err != nil {
		return nil, err
	}
	if _, _, err := c.q.Time("StartTime"); err != nil {
		return nil, err
	}
	if _, _, err := c.q.Time("EndTime"); err != nil {
		return nil, err
	}
	types, products, zone := c.q.Strs("InstanceType"), c.q.Strs("ProductDescription"), c.q.Str("AvailabilityZone")
	if len(products) == 0 {
		products = []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"}
	}
	stamp := c.now.Truncate(time.Hour)
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
				rows = append(rows, spotRow{seq: uint64(len(rows) + 1), typ: name, zone: z.Name, desc: pd, price: ec2.SpotPrice(it, z.Name)})
			}
		}
	}
	page, next := req.List(rows)
	resp := &describeSpotPricesResponse{NextToken: next}
	for _, r := range page {
		zid, _ := s.zoneID(r.zone)
		resp.Prices = append(resp.Prices, xmlSpotPrice{InstanceType: r.typ, ProductDescription: r.desc,
			SpotPrice: strconv.FormatFloat(r.price, 'f', 6, 64), Timestamp: wire.FormatTime(stamp),
			AvailabilityZone: r.zone, AvailabilityZoneID: zid})
	}
	return resp, nil
}

// --- DescribeCapacityReservations: the lab account has none ---

type describeCapacityReservationsResponse struct {
	wire.Header
	Reservations []struct{} `xml:"capacityReservationSet>item"`
}

var capacityReservationAttrs = wire.AttrTable[struct{}]{
	"instance-type": nil, "availability-zone": nil, "state": nil, "capacity-reservation-id": nil,
	"owner-id": nil, "instance-platform": nil, "tenancy": nil, "instance-match-criteria": nil,
	"capacity-reservation-type": nil,
}

func (s *Server) describeCapacityReservations(c *call) (wire.Response, *wire.Error) {
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
	return &describeCapacityReservationsResponse{}, nil
}
