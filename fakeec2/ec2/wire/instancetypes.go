package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// The XML shapes of DescribeInstanceTypes, DescribeInstanceTypeOfferings,
// DescribeSpotPriceHistory and DescribeCapacityReservations: bytes on the wire only, filled
// by fakeec2's handlers from the model's catalog.

// InstanceTypeItem is one item of DescribeInstanceTypes' instanceTypeSet.
type InstanceTypeItem struct {
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

// DescribeInstanceTypesResponse is the body of its action's answer.
type DescribeInstanceTypesResponse struct {
	Header
	InstanceTypes []InstanceTypeItem `xml:"instanceTypeSet>item"`
	NextToken     string             `xml:"nextToken,omitempty"`
}

// InstanceType is it as DescribeInstanceTypes answers it; what the catalog does not
// record is the same for every type the lab sells.
func InstanceType(it *ec2.InstanceTypeInfo) InstanceTypeItem {
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
	return InstanceTypeItem{
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

// OfferingItem is one item of DescribeInstanceTypeOfferings' instanceTypeOfferingSet.
type OfferingItem struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

// DescribeOfferingsResponse is the body of its action's answer.
type DescribeOfferingsResponse struct {
	Header
	Offerings []OfferingItem `xml:"instanceTypeOfferingSet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

// SpotPriceItem is one item of DescribeSpotPriceHistory's spotPriceHistorySet.
type SpotPriceItem struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
}

// DescribeSpotPricesResponse is the body of its action's answer.
type DescribeSpotPricesResponse struct {
	Header
	Prices    []SpotPriceItem `xml:"spotPriceHistorySet>item"`
	NextToken string          `xml:"nextToken,omitempty"`
}

// DescribeCapacityReservationsResponse is the body of its action's answer.
type DescribeCapacityReservationsResponse struct {
	Header
	Reservations []struct{} `xml:"capacityReservationSet>item"`
}
