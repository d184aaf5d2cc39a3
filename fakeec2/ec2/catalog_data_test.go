package ec2

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sizeUnits is each size in units of "large"; the catalog covers these sizes only.
var sizeUnits = map[string]int{"large": 1, "xlarge": 2, "2xlarge": 4, "4xlarge": 8, "8xlarge": 16}

func splitName(t *testing.T, name string) (family, size string) {
	t.Helper()
	family, size, ok := strings.Cut(name, ".")
	if !ok || family == "" {
		t.Fatalf("instance type %q is not FAMILY.SIZE", name)
	}
	if _, ok := sizeUnits[size]; !ok {
		t.Fatalf("instance type %q has unexpected size %q", name, size)
	}
	return family, size
}

// accelerated are the catalog's GPU types; the family invariants below hold for the c, m and
// r categories only.
var accelerated = map[string]bool{"g4dn.xlarge": true, "g4dn.2xlarge": true, "p3.2xlarge": true}

// generalPurpose returns the catalog's c, m and r types.
func generalPurpose() []InstanceTypeInfo {
	var out []InstanceTypeInfo
	for _, it := range catalog {
		if !accelerated[it.Name] && !it.BareMetal { // a metal size is the whole host, off the ladder
			out = append(out, it)
		}
	}
	return out
}

func TestCatalogNamesUniqueAndSorted(t *testing.T) {
	seen := map[string]bool{}
	for _, it := range catalog {
		if seen[it.Name] {
			t.Errorf("duplicate instance type %q", it.Name)
		}
		seen[it.Name] = true
	}
	if !sort.SliceIsSorted(catalog, func(i, j int) bool { return catalog[i].Name < catalog[j].Name }) {
		t.Error("catalog is not sorted by Name")
	}
}

func TestCatalogCoversRequiredFamilies(t *testing.T) {
	families := []string{
		"c5", "c6i", "c6g", "c7i", "c7g",
		"m5", "m6i", "m6g", "m7i", "m7g",
		"r5", "r6i", "r6g", "r7i", "r7g",
	}
	have := map[string]bool{}
	for _, it := range catalog {
		have[it.Name] = true
	}
	for _, f := range families {
		for _, s := range []string{"large", "xlarge", "2xlarge", "4xlarge"} {
			if !have[f+"."+s] {
				t.Errorf("catalog lacks %s.%s", f, s)
			}
		}
	}
}

func TestCatalogEveryFieldSet(t *testing.T) {
	for _, it := range catalog {
		if it.Name == "" || it.Arch == "" || it.NetworkPerformance == "" || it.Manufacturer == "" {
			t.Errorf("%+v: empty string field", it)
		}
		if it.VCPUs <= 0 || it.MemoryMiB <= 0 || it.MaxENIs <= 0 || it.IPv4PerENI <= 0 {
			t.Errorf("%+v: non-positive count", it)
		}
		if it.ClockSpeedGHz <= 0 || it.OnDemandPrice <= 0 {
			t.Errorf("%+v: non-positive clock or price", it)
		}
		if !strings.HasSuffix(it.NetworkPerformance, " Gigabit") {
			t.Errorf("%s: network performance %q is not in DescribeInstanceTypes form", it.Name, it.NetworkPerformance)
		}
	}
}

func TestCatalogArchAndManufacturerMatchFamily(t *testing.T) {
	for _, it := range generalPurpose() {
		family, _ := splitName(t, it.Name)
		// The letter after the generation digit: g = Graviton, a = AMD, i or none = Intel.
		var wantArch, wantMfr string
		switch suffix := strings.TrimLeft(family[1:], "0123456789"); suffix {
		case "g":
			wantArch, wantMfr = "arm64", "AWS"
		case "a":
			wantArch, wantMfr = "x86_64", "AMD"
		case "i", "":
			wantArch, wantMfr = "x86_64", "Intel"
		default:
			t.Errorf("%s: unknown family suffix %q", it.Name, suffix)
			continue
		}
		if diff := cmp.Diff([2]string{wantArch, wantMfr}, [2]string{it.Arch, it.Manufacturer}); diff != "" {
			t.Errorf("%s arch/manufacturer (-want +got):\n%s", it.Name, diff)
		}
	}
}

func TestCatalogMemoryPerVCPUMatchesCategory(t *testing.T) {
	wantMiBPerVCPU := map[byte]int64{'c': 2048, 'm': 4096, 'r': 8192}
	for _, it := range generalPurpose() {
		want, ok := wantMiBPerVCPU[it.Name[0]]
		if !ok {
			t.Errorf("%s: unknown category %q", it.Name, it.Name[0])
			continue
		}
		if got := it.MemoryMiB / int64(it.VCPUs); got != want || it.MemoryMiB%int64(it.VCPUs) != 0 {
			t.Errorf("%s: %d MiB for %d vCPUs, want %d MiB per vCPU", it.Name, it.MemoryMiB, it.VCPUs, want)
		}
	}
}

func TestCatalogSizesScaleWithinFamily(t *testing.T) {
	byFamily := map[string][]InstanceTypeInfo{}
	for _, it := range generalPurpose() {
		family, _ := splitName(t, it.Name)
		byFamily[family] = append(byFamily[family], it)
	}
	for family, types := range byFamily {
		units := func(it InstanceTypeInfo) int { _, s := splitName(t, it.Name); return sizeUnits[s] }
		sort.Slice(types, func(i, j int) bool { return units(types[i]) < units(types[j]) })
		if types[0].VCPUs != 2 {
			t.Errorf("%s: smallest size %s has %d vCPUs, want 2 (large)", family, types[0].Name, types[0].VCPUs)
		}
		for i := 1; i < len(types); i++ {
			prev, cur := types[i-1], types[i]
			if units(cur) != 2*units(prev) {
				t.Errorf("%s: gap between %s and %s", family, prev.Name, cur.Name)
				continue
			}
			if cur.VCPUs != 2*prev.VCPUs || cur.MemoryMiB != 2*prev.MemoryMiB {
				t.Errorf("%s -> %s: vCPUs %d -> %d, memory %d -> %d MiB; want both doubled",
					prev.Name, cur.Name, prev.VCPUs, cur.VCPUs, prev.MemoryMiB, cur.MemoryMiB)
			}
			// Graviton3 prices are rounded per size to 4 decimals, so allow 0.2%.
			if ratio := cur.OnDemandPrice / prev.OnDemandPrice; math.Abs(ratio-2) > 0.004 {
				t.Errorf("%s -> %s: price %g -> %g (x%.4f), want x2",
					prev.Name, cur.Name, prev.OnDemandPrice, cur.OnDemandPrice, ratio)
			}
			if cur.MaxENIs < prev.MaxENIs || cur.IPv4PerENI < prev.IPv4PerENI {
				t.Errorf("%s -> %s: ENI limits shrink", prev.Name, cur.Name)
			}
			if cur.ClockSpeedGHz != prev.ClockSpeedGHz || cur.Arch != prev.Arch || cur.Manufacturer != prev.Manufacturer {
				t.Errorf("%s -> %s: processor differs within a family", prev.Name, cur.Name)
			}
		}
	}
}

func TestCatalogKnownFacts(t *testing.T) {
	tests := []struct {
		name string
		want InstanceTypeInfo
	}{
		{
			name: "m5.large",
			want: InstanceTypeInfo{Name: "m5.large", Arch: "x86_64", VCPUs: 2, MemoryMiB: 8192, MaxENIs: 3, IPv4PerENI: 10,
				NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 0.111},
		},
		{
			name: "m5.8xlarge",
			want: InstanceTypeInfo{Name: "m5.8xlarge", Arch: "x86_64", VCPUs: 32, MemoryMiB: 131072, MaxENIs: 8, IPv4PerENI: 30,
				NetworkPerformance: "10 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 1.776},
		},
		{
			name: "c6g.large",
			want: InstanceTypeInfo{Name: "c6g.large", Arch: "arm64", VCPUs: 2, MemoryMiB: 4096, MaxENIs: 3, IPv4PerENI: 10,
				NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "AWS", OnDemandPrice: 0.0808},
		},
		{
			name: "r6i.2xlarge",
			want: InstanceTypeInfo{Name: "r6i.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 65536, MaxENIs: 4, IPv4PerENI: 15,
				NetworkPerformance: "Up to 12.5 Gigabit", ClockSpeedGHz: 3.5, Manufacturer: "Intel", OnDemandPrice: 0.592},
		},
		{
			name: "c7g.8xlarge",
			want: InstanceTypeInfo{Name: "c7g.8xlarge", Arch: "arm64", VCPUs: 32, MemoryMiB: 65536, MaxENIs: 8, IPv4PerENI: 30,
				NetworkPerformance: "15 Gigabit", ClockSpeedGHz: 2.6, Manufacturer: "AWS", OnDemandPrice: 1.3738},
		},
	}
	byName := map[string]InstanceTypeInfo{}
	for _, it := range catalog {
		byName[it.Name] = it
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := byName[tt.name]
			if !ok {
				t.Fatalf("%s not in catalog", tt.name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("catalog entry (-want +got):\n%s", diff)
			}
		})
	}
}

// EKS max-pods with the VPC CNI is ENIs*(IPv4-1)+2: 29 for every large, 58 for xlarge and
// 2xlarge, 234 for 4xlarge and 8xlarge (amazon-vpc-cni-k8s misc/eni-max-pods.txt).
func TestCatalogMaxPods(t *testing.T) {
	want := map[string]int32{"large": 29, "xlarge": 58, "2xlarge": 58, "4xlarge": 234, "8xlarge": 234}
	for _, it := range generalPurpose() {
		_, size := splitName(t, it.Name)
		if got := it.MaxENIs*(it.IPv4PerENI-1) + 2; got != want[size] {
			t.Errorf("%s: max pods %d, want %d", it.Name, got, want[size])
		}
	}
}

// The bare-metal type the Price List needs (karpenter-provider-aws asks for one):
// m5.metal is 24xlarge-sized, 15 ENIs of 50 addresses (EKS max pods 737), 48x m5.large's price.
func TestCatalogBareMetal(t *testing.T) {
	it, ok := LookupInstanceType("m5.metal")
	want := InstanceTypeInfo{Name: "m5.metal", Arch: "x86_64", VCPUs: 96, MemoryMiB: 393216, MaxENIs: 15, IPv4PerENI: 50,
		NetworkPerformance: "25 Gigabit", ClockSpeedGHz: 3.1, Manufacturer: "Intel", OnDemandPrice: 5.328, BareMetal: true}
	if diff := cmp.Diff(want, it); !ok || diff != "" {
		t.Errorf("m5.metal (-want +got):\n%s", diff)
	}
	if pods := it.MaxENIs*(it.IPv4PerENI-1) + 2; pods != 737 {
		t.Errorf("m5.metal max pods %d, want 737", pods)
	}
}

// The accelerated types, as libcloud's data and EKS max-pods give them.
func TestCatalogAccelerated(t *testing.T) {
	want := []InstanceTypeInfo{
		{Name: "g4dn.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 32768, MaxENIs: 3, IPv4PerENI: 10,
			NetworkPerformance: "Up to 25 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "Intel", OnDemandPrice: 0.88},
		{Name: "g4dn.xlarge", Arch: "x86_64", VCPUs: 4, MemoryMiB: 16384, MaxENIs: 3, IPv4PerENI: 10,
			NetworkPerformance: "Up to 25 Gigabit", ClockSpeedGHz: 2.5, Manufacturer: "Intel", OnDemandPrice: 0.615},
		{Name: "p3.2xlarge", Arch: "x86_64", VCPUs: 8, MemoryMiB: 62464, MaxENIs: 4, IPv4PerENI: 15,
			NetworkPerformance: "Up to 10 Gigabit", ClockSpeedGHz: 2.3, Manufacturer: "Intel", OnDemandPrice: 3.589},
	}
	var got []InstanceTypeInfo
	for _, it := range catalog {
		if accelerated[it.Name] {
			got = append(got, it)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accelerated types (-want +got):\n%s", diff)
	}
	maxPods := map[string]int32{"g4dn.xlarge": 29, "g4dn.2xlarge": 29, "p3.2xlarge": 58}
	for _, it := range got {
		if pods := it.MaxENIs*(it.IPv4PerENI-1) + 2; pods != maxPods[it.Name] {
			t.Errorf("%s: max pods %d, want %d", it.Name, pods, maxPods[it.Name])
		}
	}
}
