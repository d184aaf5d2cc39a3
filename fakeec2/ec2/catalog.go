package ec2

import (
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"time"
)

//go:generate go run ./internal/gencatalog -out zz_generated_catalog.go

// InstanceTypeInfo is one entry of the emulator's instance-type catalog: the facts
// DescribeInstanceTypes, DescribeInstanceTypeOfferings, DescribeSpotPriceHistory, Pricing
// and billing need. The facts are AWS's (zz_generated_catalog.go cites each source); the
// price is the region's, set by Catalog.
type InstanceTypeInfo struct {
	Name       string // "m6i.large"
	Arch       string // "x86_64" or "arm64" (ProcessorInfo.SupportedArchitectures)
	VCPUs      int32  // VCpuInfo.DefaultVCpus
	MemoryMiB  int64  // MemoryInfo.SizeInMiB
	MaxENIs    int32  // NetworkInfo.MaximumNetworkInterfaces
	IPv4PerENI int32  // NetworkInfo.Ipv4AddressesPerInterface
	// NetworkCards is each card's MaximumNetworkInterfaces, by NetworkCardIndex; nil is one
	// card of MaxENIs. DefaultNetworkCard is NetworkInfo.DefaultNetworkCardIndex.
	NetworkCards       []int32
	DefaultNetworkCard int32
	// NetworkPerformance is NetworkInfo.NetworkPerformance, e.g. "Up to 12.5 Gigabit".
	NetworkPerformance string
	// NetworkMbps is the baseline network bandwidth (NetworkCards' BaselineBandwidthInGbps,
	// Karpenter's instance-network-bandwidth label); 0 when AWS publishes none.
	NetworkMbps int32
	// EBSMbps is EbsOptimizedInfo.MaximumBandwidthInMbps of a type EBS-optimized by
	// default; 0: not EBS-optimized by default.
	EBSMbps int32
	// ClockSpeedGHz is ProcessorInfo.SustainedClockSpeedInGhz.
	ClockSpeedGHz float64
	// Manufacturer is ProcessorInfo.Manufacturer: "Intel", "AMD" or "AWS".
	Manufacturer string
	// PhysicalProcessor is the Price List's "physicalProcessor" ("Intel Xeon Platinum 8175").
	PhysicalProcessor string
	// Family is the Price List's "instanceFamily" ("General purpose", "GPU instance").
	Family string
	// Hypervisor is "nitro" or "xen"; "" for bare metal.
	Hypervisor string
	// BareMetal is a .metal type: no hypervisor (the Price List sells it as
	// "Compute Instance (bare metal)", which karpenter-provider-aws asks for).
	BareMetal bool
	// PreviousGeneration is CurrentGeneration false.
	PreviousGeneration bool
	// Burstable is BurstablePerformanceSupported (the t families).
	Burstable bool
	// EncryptionInTransit is NetworkInfo.EncryptionInTransitSupported.
	EncryptionInTransit bool
	// EFAs is NetworkInfo.EfaInfo.MaximumEfaInterfaces; 0: EFA unsupported.
	EFAs int32
	// GPU is GpuInfo's one GPU kind (Count 0: none).
	GPU GPU
	// Accelerator is NeuronInfo's device (Neuron) or InferenceAcceleratorInfo's (Count 0: none).
	Accelerator Accelerator
	// LocalNVMeGB is InstanceStorageInfo.TotalSizeInGB of NVMe instance store; 0: none.
	LocalNVMeGB int64

	// OnDemandPrice is the region's Linux on-demand price in USD per hour (Catalog sets it).
	OnDemandPrice float64
	// PriceSource says where OnDemandPrice came from (PriceListed, PriceDerived, ...).
	PriceSource PriceSource
}

// GPU is one kind of GPU a type carries, as GpuInfo.Gpus' item.
type GPU struct {
	Name, Manufacturer string // "A10G", "NVIDIA"
	Count              int32
	MemoryMiB          int64 // each GPU's
}

// Accelerator is an inference or training accelerator: Neuron devices (Inferentia,
// Trainium: NeuronInfo, with their cores) or another kind (InferenceAcceleratorInfo).
type Accelerator struct {
	Name, Manufacturer string // "Inferentia2", "AWS"
	Count              int32
	CoresPerDevice     int32 // Neuron only
	Neuron             bool
}

// PriceSource is where a region's price of a type came from.
type PriceSource uint8

const (
	// PriceListed is a price a published price list gives for the type in the region.
	PriceListed PriceSource = iota
	// PriceDerived is derived: the us-east-1 price times the family's (or the region's)
	// ratio of the region's prices to us-east-1's.
	PriceDerived
)

// IsGraviton is an AWS Graviton (arm64) type: one thread per core, UEFI boot only.
func (it *InstanceTypeInfo) IsGraviton() bool { return it.Arch == "arm64" }

// Category is the family's letters before its generation ("m" of m6i, "u-" of u-6tb1).
func (it *InstanceTypeInfo) Category() string {
	fam, _, _ := strings.Cut(it.Name, ".")
	i := strings.IndexAny(fam, "0123456789")
	if i < 0 {
		return fam
	}
	return fam[:i]
}

// Cards returns each network card's MaximumNetworkInterfaces, by index.
func (it *InstanceTypeInfo) Cards() []int32 {
	if len(it.NetworkCards) == 0 {
		return []int32{it.MaxENIs}
	}
	return it.NetworkCards
}

var typeIndex = func() map[string]int {
	m := make(map[string]int, len(catalogTypes))
	for i, it := range catalogTypes {
		m[it.Name] = i
	}
	return m
}()

// LookupInstanceType returns the facts of name, wherever AWS offers it (no price).
func LookupInstanceType(name string) (InstanceTypeInfo, bool) {
	i, ok := typeIndex[name]
	if !ok {
		return InstanceTypeInfo{}, false
	}
	return catalogTypes[i], true
}

// Catalog returns every instance type AWS offers in region, with the region's on-demand
// prices, sorted by name; nil for a region the lab has no data for.
func Catalog(region string) []InstanceTypeInfo {
	prices, ok := regionPrices[region]
	if !ok {
		return nil
	}
	out := make([]InstanceTypeInfo, 0, len(prices))
	for _, p := range prices {
		it := catalogTypes[typeIndex[p.name]]
		it.OnDemandPrice, it.PriceSource = p.usd, p.source
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// OnDemandPrice is the Linux on-demand price of name in region, if the region offers it.
func OnDemandPrice(region, name string) (float64, bool) {
	it, ok := LookupInstanceTypeIn(region, name)
	return it.OnDemandPrice, ok
}

// LookupInstanceTypeIn returns name with its price in region, if the region offers it.
func LookupInstanceTypeIn(region, name string) (InstanceTypeInfo, bool) {
	for _, p := range regionPrices[region] {
		if p.name == name {
			it := catalogTypes[typeIndex[name]]
			it.OnDemandPrice, it.PriceSource = p.usd, p.source
			return it, true
		}
	}
	return InstanceTypeInfo{}, false
}

// PriceRatio is the median, over the types both offer, of region's on-demand price over
// us-east-1's: how much dearer the region is (1 in us-east-1).
func PriceRatio(region string) float64 {
	base := map[string]float64{}
	for _, p := range regionPrices["us-east-1"] {
		base[p.name] = p.usd
	}
	var ratios []float64
	for _, p := range regionPrices[region] {
		if b, ok := base[p.name]; ok && p.source == PriceListed {
			ratios = append(ratios, p.usd/b)
		}
	}
	if len(ratios) == 0 {
		return 1
	}
	sort.Float64s(ratios)
	return ratios[len(ratios)/2]
}

// regionPrice is one type's on-demand price in a region (zz_generated_catalog.go).
type regionPrice struct {
	name   string
	usd    float64
	source PriceSource
}

// SpotPricePeriod is how long an emulated spot price holds: the history has one price per
// period.
const SpotPricePeriod = 6 * time.Hour

// SpotPrice is the emulated spot price of it in zone in force now: a stable 30-45% of the
// on-demand price, different per zone (a deterministic hash, so every run agrees).
func SpotPrice(it *InstanceTypeInfo, zone string) float64 {
	return SpotPriceAt(it, zone, 0)
}

// SpotPriceAt is the spot price of it in zone epoch periods before the one in force (0:
// SpotPrice). Earlier prices wander within 5% of it, so the history moves and the price in
// force does not.
func SpotPriceAt(it *InstanceTypeInfo, zone string, epoch int) float64 {
	h := fnv.New32a()
	h.Write([]byte(it.Name + "/" + zone))
	factor := 0.30 + float64(h.Sum32()%151)/1000
	if epoch > 0 {
		h.Write([]byte{byte(epoch), byte(epoch >> 8)})
		factor *= 0.95 + float64(h.Sum32()%101)/1000
	}
	return math.Round(it.OnDemandPrice*factor*10000) / 10000
}
