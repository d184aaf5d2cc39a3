package ec2

import (
	"hash/fnv"
	"math"
)

// InstanceTypeInfo is one entry of the emulator's instance-type catalog: the facts
// DescribeInstanceTypes, DescribeInstanceTypeOfferings, DescribeSpotPriceHistory and billing
// need. Values are AWS's published figures for eu-west-2 (London), Linux, on-demand.
type InstanceTypeInfo struct {
	Name       string // "m6i.large"
	Arch       string // "x86_64" or "arm64" (ProcessorInfo.SupportedArchitectures)
	VCPUs      int32  // VCpuInfo.DefaultVCpus
	MemoryMiB  int64  // MemoryInfo.SizeInMiB
	MaxENIs    int32  // NetworkInfo.MaximumNetworkInterfaces
	IPv4PerENI int32  // NetworkInfo.Ipv4AddressesPerInterface
	// NetworkPerformance is NetworkInfo.NetworkPerformance, e.g. "Up to 12.5 Gigabit".
	NetworkPerformance string
	// ClockSpeedGHz is ProcessorInfo.SustainedClockSpeedInGhz.
	ClockSpeedGHz float64
	// Manufacturer is ProcessorInfo.Manufacturer: "Intel", "AMD" or "AWS".
	Manufacturer string
	// OnDemandPrice is the eu-west-2 Linux on-demand price in USD per hour.
	OnDemandPrice float64
	// BareMetal is a .metal type: no hypervisor (the Price List sells it as
	// "Compute Instance (bare metal)", which karpenter-provider-aws asks for).
	BareMetal bool
}

// IsGraviton is an AWS Graviton (arm64) type: one thread per core, UEFI boot only.
func (it *InstanceTypeInfo) IsGraviton() bool { return it.Arch == "arm64" }

// LookupInstanceType returns the catalog entry of name.
func LookupInstanceType(name string) (InstanceTypeInfo, bool) {
	for _, it := range catalog {
		if it.Name == name {
			return it, true
		}
	}
	return InstanceTypeInfo{}, false
}

// InstanceTypes returns a copy of the catalog, sorted by name.
func InstanceTypes() []InstanceTypeInfo { return append([]InstanceTypeInfo(nil), catalog...) }

// SpotPrice is the emulated spot price of it in zone: a stable 30-45% of the on-demand
// price, different per zone (a deterministic hash, so every run agrees).
func SpotPrice(it *InstanceTypeInfo, zone string) float64 {
	h := fnv.New32a()
	h.Write([]byte(it.Name + "/" + zone))
	factor := 0.30 + float64(h.Sum32()%151)/1000
	return math.Round(it.OnDemandPrice*factor*10000) / 10000
}
