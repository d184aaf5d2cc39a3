package ec2

// The emulator's instance-type catalog: c, m and r families of the 5th, 6th and 7th
// generations (Intel, AMD and Graviton), sizes large to 8xlarge (c5 has no 8xlarge), and
// three accelerated types (g4dn.xlarge, g4dn.2xlarge, p3.2xlarge).
// Sorted by name; catalog_data_test.go checks its invariants.
//
// Sources:
//   - On-demand Linux prices in eu-west-2 (USD per hour), both dumps of AWS Price List data:
//   - Apache Libcloud 3.4.1 libcloud/data/pricing.json, "ec2_linux" -> "eu-west-2"
//     (Debian package python3-libcloud 3.4.1-5, data of Nov 2021): every c5, m5, r5, c6g,
//     m6g and r6g price.
//   - skypilot-org/skypilot-catalog catalogs/v8/aws/vms.csv, column Price, rows with
//     Region eu-west-2: the c6a, c6i, c7g, c7i, m6i, m7g, r6i and r7g prices not marked
//     derived, plus the 12xlarge-48xlarge rows behind the m7i and r7i prices. It agrees
//     with libcloud where both were read (c5.large, c5.xlarge, c6g.2xlarge).
//     A size whose own row was not read has a price derived from sibling sizes of the same
//     family (Intel and AMD families are exactly linear in size; Graviton3 prices are
//     rounded per size, so they are only nearly so); such lines say "price derived: ...".
//   - VCPUs and MemoryMiB (MemoryGiB x 1024, as MemoryInfo.SizeInMiB reports): the same
//     two dumps.
//   - MaxENIs and IPv4PerENI: aws/amazon-vpc-resource-controller-k8s pkg/aws/vpc/limits.go
//     (vendored by karpenter-provider-aws as zz_generated.vpclimits.go; the table EKS
//     max-pods is computed from). All these Nitro families share one per-size pattern:
//     large 3x10, xlarge and 2xlarge 4x15, 4xlarge and 8xlarge 8x30. Rows checked against
//     published tables here: m5.large 3x10, m5.4xlarge 8 ENIs, c5.4xlarge 30 IPv4,
//     c7i.xlarge 4x15; the rest follow the pattern.
//   - NetworkPerformance, ClockSpeedGHz (SustainedClockSpeedInGhz), Manufacturer: the
//     values DescribeInstanceTypes reports per AWS's instance-type specification pages.
//     Libcloud's Price List attributes agree for m5, r5, c6g, r6g, c6i and m6i, with known
//     wording differences: the Price List gives c5 its 3 GHz base clock (DescribeInstanceTypes
//     reports 3.4 sustained), writes "12500 Megabit" for "12.5 Gigabit", and rates Graviton2
//     8xlarge at 10 Gigabit where DescribeInstanceTypes says "12 Gigabit". The 7th-generation
//     and c6a values (clock 3.2, 2.6, 3.6 GHz; Graviton3 "Up to 15 Gigabit" at 4xlarge) were
//     not checked against a dump here.
var catalog = []InstanceTypeInfo{
	{Name: "c5.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.4, Manufacturer: "Intel", OnDemandPrice: 0.404},
	{Name: "c5.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 32768, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.4, Manufacturer: "Intel", OnDemandPrice: 0.808},
	{Name: "c5.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.4, Manufacturer: "Intel", OnDemandPrice: 0.101},
	{Name: "c5.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 8192, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.4, Manufacturer: "Intel", OnDemandPrice: 0.202},
	{Name: "c6a.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.6, Manufacturer: "AMD", OnDemandPrice: 0.3636}, // price derived: 4xlarge/2
	{Name: "c6a.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 32768, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.6, Manufacturer: "AMD", OnDemandPrice: 0.7272},
	{Name: "c6a.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12.5 Gigabit", ClockSpeedGHz: 3.6, Manufacturer: "AMD", OnDemandPrice: 1.4544},
	{Name: "c6a.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.6, Manufacturer: "AMD", OnDemandPrice: 0.0909},
	{Name: "c6a.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 8192, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.6, Manufacturer: "AMD", OnDemandPrice: 0.1818},
	{Name: "c6g.2xlarge", Arch: "arm64", VCPUs: 8, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.3232},
	{Name: "c6g.4xlarge", Arch: "arm64", VCPUs: 16, MemoryMiB: 32768, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.6464},
	{Name: "c6g.8xlarge", Arch: "arm64", VCPUs: 32, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 1.2928},
	{Name: "c6g.large", Arch: "arm64", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.0808},
	{Name: "c6g.xlarge", Arch: "arm64", VCPUs: 4, MemoryMiB: 8192, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.1616},
	{Name: "c6i.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.404}, // price derived: 4xlarge/2 (large, xlarge, 4xlarge, 8xlarge rows are exactly linear)
	{Name: "c6i.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 32768, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.808},
	{Name: "c6i.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 1.616},
	{Name: "c6i.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.101},
	{Name: "c6i.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 8192, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.202},
	{Name: "c7g.2xlarge", Arch: "arm64", VCPUs: 8, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.3434}, // price derived: the eu-west-3 row, equal to eu-west-2 for every other c7g size; also 4xlarge/2
	{Name: "c7g.4xlarge", Arch: "arm64", VCPUs: 16, MemoryMiB: 32768, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 15 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.6869},
	{Name: "c7g.8xlarge", Arch: "arm64", VCPUs: 32, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "15 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 1.3738},
	{Name: "c7g.large", Arch: "arm64", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.0859},
	{Name: "c7g.xlarge", Arch: "arm64", VCPUs: 4, MemoryMiB: 8192, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.171725}, // price derived: 4xlarge/4
	{Name: "c7i.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.4242},
	{Name: "c7i.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 32768, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.8484},
	{Name: "c7i.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 1.6968},
	{Name: "c7i.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.10605}, // price derived: 2xlarge/4; 2xlarge..48xlarge rows are all 0.10605 per large
	{Name: "c7i.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 8192, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.2121}, // price derived: 2xlarge/2
	// Accelerated types (GPU instances, categories g and p), so an over-broad NodePool can
	// really buy one: eu-west-2 prices, vCPUs, memory, network and clock from libcloud 3.4.1
	// (pricing.json and compute/constants/ec2_instance_types.py); ENI limits from EKS max-pods
	// (g4dn.xlarge and 2xlarge 29, p3.2xlarge 58). Their GPUs (GpuInfo) are not modelled.
	{Name: "g4dn.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 32768, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 25 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "Intel", OnDemandPrice: 0.88},
	{Name: "g4dn.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 25 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "Intel", OnDemandPrice: 0.615},
	{Name: "m5.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.444},
	{Name: "m5.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.888},
	{Name: "m5.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 1.776},
	{Name: "m5.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.111},
	{Name: "m5.metal", Arch: "x86_64", VCPUs: 96, MemoryMiB: 393216, MaxENIs: 15, IPv4PerENI: 50, NetworkPerformance: "25 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 5.328, BareMetal: true},
	{Name: "m5.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.222},
	{Name: "m6g.2xlarge", Arch: "arm64", VCPUs: 8, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.3552},
	{Name: "m6g.4xlarge", Arch: "arm64", VCPUs: 16, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.7104},
	{Name: "m6g.8xlarge", Arch: "arm64", VCPUs: 32, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 1.4208},
	{Name: "m6g.large", Arch: "arm64", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.0888},
	{Name: "m6g.xlarge", Arch: "arm64", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.1776},
	{Name: "m6i.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.444}, // price derived: 4xlarge/2
	{Name: "m6i.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.888},
	{Name: "m6i.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 1.776},
	{Name: "m6i.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.111}, // price derived: xlarge/2 (xlarge, 4xlarge, 8xlarge, 32xlarge rows are exactly linear)
	{Name: "m6i.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.222},
	{Name: "m7g.2xlarge", Arch: "arm64", VCPUs: 8, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.37745}, // price derived: 4xlarge/2
	{Name: "m7g.4xlarge", Arch: "arm64", VCPUs: 16, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 15 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.7549},
	{Name: "m7g.8xlarge", Arch: "arm64", VCPUs: 32, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "15 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 1.5098},
	{Name: "m7g.large", Arch: "arm64", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.0944},
	{Name: "m7g.xlarge", Arch: "arm64", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.188725},    // price derived: 4xlarge/4
	{Name: "m7i.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.4662},  // price derived: 12xlarge 2.7972/24 and 16xlarge 3.7296/32 both give 0.11655 per large
	{Name: "m7i.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.9324}, // price derived: 12xlarge 2.7972/24 and 16xlarge 3.7296/32 both give 0.11655 per large
	{Name: "m7i.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 1.8648},      // price derived: 12xlarge 2.7972/24 and 16xlarge 3.7296/32 both give 0.11655 per large
	{Name: "m7i.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.11655},    // price derived: 12xlarge 2.7972/24 and 16xlarge 3.7296/32 both give 0.11655 per large
	{Name: "m7i.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.2331},   // price derived: 12xlarge 2.7972/24 and 16xlarge 3.7296/32 both give 0.11655 per large
	{Name: "p3.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 62464, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.3, Manufacturer: "Intel", OnDemandPrice: 3.589},
	{Name: "r5.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 65536, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.592},
	{Name: "r5.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 1.184},
	{Name: "r5.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 262144, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 2.368},
	{Name: "r5.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 16384, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.148},
	{Name: "r5.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.296},
	{Name: "r6g.2xlarge", Arch: "arm64", VCPUs: 8, MemoryMiB: 65536, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.4736},
	{Name: "r6g.4xlarge", Arch: "arm64", VCPUs: 16, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.9472},
	{Name: "r6g.8xlarge", Arch: "arm64", VCPUs: 32, MemoryMiB: 262144, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 1.8944},
	{Name: "r6g.large", Arch: "arm64", VCPUs: 2, MemoryMiB: 16384, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.1184},
	{Name: "r6g.xlarge", Arch: "arm64", VCPUs: 4, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.2368},
	{Name: "r6i.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 65536, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.592},
	{Name: "r6i.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 1.184},
	{Name: "r6i.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 262144, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 2.368},
	{Name: "r6i.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 16384, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.148},  // price derived: 2xlarge/4 (2xlarge, 4xlarge, 8xlarge, 32xlarge rows are exactly linear)
	{Name: "r6i.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.296}, // price derived: 2xlarge/2
	{Name: "r7g.2xlarge", Arch: "arm64", VCPUs: 8, MemoryMiB: 65536, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.5032},  // price derived: 8xlarge/4
	{Name: "r7g.4xlarge", Arch: "arm64", VCPUs: 16, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 15 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 1.0064},  // price derived: 8xlarge/2
	{Name: "r7g.8xlarge", Arch: "arm64", VCPUs: 32, MemoryMiB: 262144, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "15 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 2.0128},
	{Name: "r7g.large", Arch: "arm64", VCPUs: 2, MemoryMiB: 16384, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.1258},
	{Name: "r7g.xlarge", Arch: "arm64", VCPUs: 4, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 0.2516},       // price derived: 8xlarge/8
	{Name: "r7i.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 65536, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.6216},   // price derived: 12xlarge 3.7296/24, 16xlarge 4.9728/32, 24xlarge 7.4592/48 all give 0.1554 per large
	{Name: "r7i.4xlarge", Arch: "x86_64", VCPUs: 16, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 1.2432}, // price derived: 12xlarge 3.7296/24, 16xlarge 4.9728/32, 24xlarge 7.4592/48 all give 0.1554 per large
	{Name: "r7i.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 262144, MaxENIs: 8, IPv4PerENI: 30, NetworkPerformance: "12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 2.4864},       // price derived: 12xlarge 3.7296/24, 16xlarge 4.9728/32, 24xlarge 7.4592/48 all give 0.1554 per large
	{Name: "r7i.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 16384, MaxENIs: 3, IPv4PerENI: 10, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.1554},     // price derived: 12xlarge 3.7296/24, 16xlarge 4.9728/32, 24xlarge 7.4592/48 all give 0.1554 per large
	{Name: "r7i.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 32768, MaxENIs: 4, IPv4PerENI: 15, NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.2, Manufacturer: "Intel", OnDemandPrice: 0.3108},    // price derived: 12xlarge 3.7296/24, 16xlarge 4.9728/32, 24xlarge 7.4592/48 all give 0.1554 per large
}
