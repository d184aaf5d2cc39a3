package fakeec2

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
