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
	InstanceStorageInfo           *xmlStorage   `xml:"instanceStorageInfo,omitempty"`
	EbsInfo                       xmlEbsInfo    `xml:"ebsInfo"`
	NetworkInfo                   xmlNetworkInf `xml:"networkInfo"`
	GpuInfo                       *xmlGpuInfo   `xml:"gpuInfo,omitempty"`
	InferenceAcceleratorInfo      *xmlInference `xml:"inferenceAcceleratorInfo,omitempty"`
	NeuronInfo                    *xmlNeuron    `xml:"neuronInfo,omitempty"`
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
	EbsOptimizedSupport string               `xml:"ebsOptimizedSupport"`
	EbsOptimizedInfo    *xmlEbsOptimizedInfo `xml:"ebsOptimizedInfo,omitempty"`
	EncryptionSupport   string               `xml:"encryptionSupport"`
	NvmeSupport         string               `xml:"nvmeSupport"`
}

type xmlEbsOptimizedInfo struct {
	BaselineBandwidthInMbps int32 `xml:"baselineBandwidthInMbps"`
	MaximumBandwidthInMbps  int32 `xml:"maximumBandwidthInMbps"`
}

type xmlNetworkCard struct {
	NetworkCardIndex         int32    `xml:"networkCardIndex"`
	NetworkPerformance       string   `xml:"networkPerformance"`
	MaximumNetworkInterfaces int32    `xml:"maximumNetworkInterfaces"`
	BaselineBandwidthInGbps  *float64 `xml:"baselineBandwidthInGbps,omitempty"`
	PeakBandwidthInGbps      *float64 `xml:"peakBandwidthInGbps,omitempty"`
}

type xmlStorage struct {
	TotalSizeInGB     int64     `xml:"totalSizeInGB"`
	Disks             []xmlDisk `xml:"disks>item"`
	NvmeSupport       string    `xml:"nvmeSupport"`
	EncryptionSupport string    `xml:"encryptionSupport"`
}

type xmlDisk struct {
	SizeInGB int64  `xml:"sizeInGB"`
	Count    int32  `xml:"count"`
	Type     string `xml:"type"`
}

type xmlGpuInfo struct {
	Gpus                []xmlDevice `xml:"gpus>item"`
	TotalGpuMemoryInMiB int64       `xml:"totalGpuMemoryInMiB"`
}

// xmlDevice is a GPU or an inference accelerator: GpuDeviceInfo and
// InferenceDeviceInfo share these fields.
type xmlDevice struct {
	Name         string     `xml:"name"`
	Manufacturer string     `xml:"manufacturer"`
	Count        int32      `xml:"count"`
	MemoryInfo   *xmlMemory `xml:"memoryInfo,omitempty"`
}

type xmlInference struct {
	Accelerators []xmlDevice `xml:"accelerators>item"`
}

type xmlNeuron struct {
	NeuronDevices []xmlNeuronDevice `xml:"neuronDevices>item"`
}

type xmlNeuronDevice struct {
	Name     string `xml:"name"`
	Count    int32  `xml:"count"`
	CoreInfo struct {
		Count int32 `xml:"count"`
	} `xml:"coreInfo"`
}

type xmlEfaInfo struct {
	MaximumEfaInterfaces int32 `xml:"maximumEfaInterfaces"`
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
	EfaInfo                   *xmlEfaInfo      `xml:"efaInfo,omitempty"`
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
	boot := []string{"legacy-bios", "uefi"}
	if it.IsGraviton() {
		threads, boot = 1, []string{"uefi"}
	}
	nitro := it.Hypervisor == "nitro" || it.BareMetal
	item := InstanceTypeItem{
		InstanceType: it.Name, CurrentGeneration: FormatBool(!it.PreviousGeneration), FreeTierEligible: "false",
		SupportedUsageClasses:        []string{"on-demand", "spot"},
		SupportedRootDeviceTypes:     []string{"ebs"},
		SupportedVirtualizationTypes: []string{"hvm"},
		BareMetal:                    FormatBool(it.BareMetal), Hypervisor: it.Hypervisor,
		ProcessorInfo: xmlProcessor{SupportedArchitectures: []string{it.Arch}, SustainedClockSpeed: it.ClockSpeedGHz,
			Manufacturer: it.Manufacturer},
		VCPUInfo:                 xmlVCPU{DefaultVCPUs: it.VCPUs, DefaultCores: max(it.VCPUs/threads, 1), DefaultThreadsPerCore: threads},
		MemoryInfo:               xmlMemory{SizeInMiB: it.MemoryMiB},
		InstanceStorageSupported: FormatBool(it.LocalNVMeGB > 0),
		EbsInfo:                  ebsInfo(it, nitro),
		NetworkInfo:              networkInfo(it, nitro),
		PlacementGroupStrategies: []string{"cluster", "partition", "spread"},
		HibernationSupported:     "true", BurstablePerformanceSupported: FormatBool(it.Burstable), DedicatedHostsSupported: "true",
		AutoRecoverySupported: "true", SupportedBootModes: boot, NitroEnclavesSupport: "unsupported", NitroTpmSupport: "unsupported",
	}
	if nitro {
		item.NitroEnclavesSupport, item.NitroTpmSupport = "supported", "supported"
	}
	if it.LocalNVMeGB > 0 {
		item.InstanceStorageInfo = &xmlStorage{TotalSizeInGB: it.LocalNVMeGB, NvmeSupport: "required", EncryptionSupport: "required",
			Disks: []xmlDisk{{SizeInGB: it.LocalNVMeGB, Count: 1, Type: "ssd"}}}
	}
	if g := it.GPU; g.Count > 0 {
		item.GpuInfo = &xmlGpuInfo{TotalGpuMemoryInMiB: g.MemoryMiB * int64(g.Count),
			Gpus: []xmlDevice{{Name: g.Name, Manufacturer: g.Manufacturer, Count: g.Count, MemoryInfo: &xmlMemory{SizeInMiB: g.MemoryMiB}}}}
	}
	if a := it.Accelerator; a.Count > 0 && a.Neuron {
		d := xmlNeuronDevice{Name: a.Name, Count: a.Count}
		d.CoreInfo.Count = a.CoresPerDevice
		item.NeuronInfo = &xmlNeuron{NeuronDevices: []xmlNeuronDevice{d}}
	} else if a.Count > 0 {
		item.InferenceAcceleratorInfo = &xmlInference{Accelerators: []xmlDevice{{Name: a.Name, Manufacturer: a.Manufacturer, Count: a.Count}}}
	}
	return item
}

func ebsInfo(it *ec2.InstanceTypeInfo, nitro bool) xmlEbsInfo {
	info := xmlEbsInfo{EbsOptimizedSupport: "supported", EncryptionSupport: "supported", NvmeSupport: "unsupported"}
	if nitro {
		info.NvmeSupport = "required"
	}
	if it.EBSMbps > 0 {
		info.EbsOptimizedSupport = "default"
		info.EbsOptimizedInfo = &xmlEbsOptimizedInfo{BaselineBandwidthInMbps: it.EBSMbps, MaximumBandwidthInMbps: it.EBSMbps}
	}
	return info
}

func networkInfo(it *ec2.InstanceTypeInfo, nitro bool) xmlNetworkInf {
	n := xmlNetworkInf{
		NetworkPerformance: it.NetworkPerformance, MaximumNetworkInterfaces: it.MaxENIs,
		DefaultNetworkCardIndex:   it.DefaultNetworkCard,
		IPv4AddressesPerInterface: it.IPv4PerENI, IPv6AddressesPerInterface: it.IPv4PerENI,
		IPv6Supported: FormatBool(nitro), EnaSupport: "supported", EfaSupported: FormatBool(it.EFAs > 0),
		EncryptionInTransit: FormatBool(it.EncryptionInTransit),
	}
	if nitro {
		n.EnaSupport = "required"
	}
	if it.EFAs > 0 {
		n.EfaInfo = &xmlEfaInfo{MaximumEfaInterfaces: it.EFAs}
	}
	cards := it.Cards()
	n.MaximumNetworkCards = int32(len(cards))
	for i, c := range cards {
		card := xmlNetworkCard{NetworkCardIndex: int32(i), NetworkPerformance: it.NetworkPerformance, MaximumNetworkInterfaces: c}
		if it.NetworkMbps > 0 {
			gbps := float64(it.NetworkMbps) / 1000 / float64(len(cards))
			card.BaselineBandwidthInGbps, card.PeakBandwidthInGbps = &gbps, &gbps
		}
		n.NetworkCards = append(n.NetworkCards, card)
	}
	return n
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
