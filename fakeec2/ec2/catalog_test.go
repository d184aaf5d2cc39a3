package ec2

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalogTypesUniqueSortedAndWhole(t *testing.T) {
	for i, it := range catalogTypes {
		if i > 0 && catalogTypes[i-1].Name >= it.Name {
			t.Errorf("catalogTypes not sorted and unique at %q after %q", it.Name, catalogTypes[i-1].Name)
		}
		switch {
		case it.Arch != "x86_64" && it.Arch != "arm64":
			t.Errorf("%s: arch %q", it.Name, it.Arch)
		case it.VCPUs <= 0 || it.MemoryMiB <= 0 || it.MaxENIs <= 0 || it.IPv4PerENI <= 0:
			t.Errorf("%s: non-positive count: %+v", it.Name, it)
		case it.NetworkPerformance == "" || it.Family == "":
			t.Errorf("%s: no network performance or price-list family", it.Name)
		case it.IsGraviton() != (it.Manufacturer == "AWS"):
			t.Errorf("%s: arch %s with manufacturer %q", it.Name, it.Arch, it.Manufacturer)
		case it.BareMetal != (it.Hypervisor == ""):
			t.Errorf("%s: bare metal %t with hypervisor %q", it.Name, it.BareMetal, it.Hypervisor)
		case it.BareMetal != strings.Contains(it.Name, ".metal"):
			t.Errorf("%s: bare metal %t", it.Name, it.BareMetal)
		}
		var sum int32
		for _, c := range it.Cards() {
			sum += c
		}
		if sum != it.MaxENIs || int(it.DefaultNetworkCard) >= len(it.Cards()) {
			t.Errorf("%s: cards %v (default %d) for %d ENIs", it.Name, it.Cards(), it.DefaultNetworkCard, it.MaxENIs)
		}
		if it.GPU.Count > 0 && (it.GPU.Name == "" || it.GPU.Manufacturer == "" || it.GPU.MemoryMiB <= 0) {
			t.Errorf("%s: GPU %+v", it.Name, it.GPU)
		}
	}
	if n := len(catalogTypes); n < 1300 {
		t.Errorf("catalog has %d types, want AWS's whole catalog (1,300 and more)", n)
	}
}

// TestCatalogMatchesKarpentersReference reads Karpenter's instance-type reference (the
// generator's source) and checks that the labels and pod capacity Karpenter derives from
// the catalog's facts are the reference's.
func TestCatalogMatchesKarpentersReference(t *testing.T) {
	b, err := os.ReadFile("../../../shared/data/aws-instance-types.json")
	if err != nil {
		t.Skipf("no reference beside the repository: %v", err)
	}
	var doc struct {
		Types map[string]struct {
			Labels    map[string]string `json:"labels"`
			Resources map[string]string `json:"resources"`
		} `json:"types"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, ref := range doc.Types {
		it, ok := LookupInstanceType(name)
		if !ok {
			continue
		}
		checked++
		l := func(k string) string { return ref.Labels["karpenter.k8s.aws/instance-"+k] }
		arch := map[string]string{"x86_64": "amd64", "arm64": "arm64"}[it.Arch]
		cards := it.Cards()
		pods := int64(cards[it.DefaultNetworkCard])*int64(it.IPv4PerENI-1) + 2
		got := []string{arch, fmt.Sprint(it.VCPUs), fmt.Sprint(it.MemoryMiB), strings.ToLower(it.Manufacturer),
			fmt.Sprint(int(it.ClockSpeedGHz*1000 + 0.5)), it.Hypervisor, fmt.Sprint(it.GPU.Count), fmt.Sprint(it.LocalNVMeGB),
			fmt.Sprint(it.EBSMbps), fmt.Sprint(pods), fmt.Sprint(it.EFAs)}
		want := []string{ref.Labels["kubernetes.io/arch"], l("cpu"), l("memory"), l("cpu-manufacturer"),
			l("cpu-sustained-clock-speed-mhz"), l("hypervisor"), orZero(l("gpu-count")), orZero(l("local-nvme")),
			orZero(l("ebs-bandwidth")), ref.Resources["pods"], orZero(ref.Resources["vpc.amazonaws.com/efa"])}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: arch, cpu, memory, manufacturer, MHz, hypervisor, GPUs, NVMe, EBS, pods, EFAs (-reference +catalog):\n%s", name, diff)
		}
	}
	if checked < 1300 {
		t.Errorf("checked %d types against the reference, want 1,300 and more", checked)
	}
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func TestRegionsHaveZonesAndCatalogs(t *testing.T) {
	if len(Regions()) != len(regionPrices) {
		t.Errorf("regions %v, prices for %d regions", Regions(), len(regionPrices))
	}
	for _, name := range Regions() {
		r, err := LookupRegion(name)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, z := range r.Zones {
			if !strings.HasPrefix(z.Name, name) || !strings.HasPrefix(z.ID, ShortName(name)+"-az") || ids[z.ID] {
				t.Errorf("%s: zone %+v", name, z)
			}
			ids[z.ID] = true
		}
		cat := Catalog(name)
		if len(r.Zones) < 2 || len(cat) < 100 {
			t.Errorf("%s: %d zones, %d types", name, len(r.Zones), len(cat))
		}
		for _, it := range cat {
			if it.OnDemandPrice <= 0 {
				t.Errorf("%s %s: price %v", name, it.Name, it.OnDemandPrice)
			}
			if sp := SpotPrice(&it, r.Zones[0].Name); sp <= 0 || sp >= it.OnDemandPrice {
				t.Errorf("%s %s: spot %v, on-demand %v", name, it.Name, sp, it.OnDemandPrice)
			}
		}
	}
	if _, err := LookupRegion("mars-east-1"); err == nil || !strings.Contains(err.Error(), "eu-west-2") {
		t.Errorf("LookupRegion(mars-east-1) = %v, want an error listing the regions", err)
	}
	use1, _ := LookupRegion("us-east-1")
	if got := use1.ZoneNames(); len(got) != 6 || use1.Zones[0].ID != "use1-az1" {
		t.Errorf("us-east-1 zones %v, want six from use1-az1", use1.Zones)
	}
	if _, err := use1.SelectZones([]string{"us-east-1g"}); err == nil || !strings.Contains(err.Error(), "us-east-1f") {
		t.Errorf("SelectZones(us-east-1g) = %v, want an error listing the zones", err)
	}
}

// TestCatalogPricesScaleWithinFamily: within a family and region, a virtualized size with
// more vCPUs or memory never costs less than a smaller one, listed or derived (GPU sizes
// are priced by their GPUs: g4dn.12xlarge costs less than g4dn.16xlarge).
func TestCatalogPricesScaleWithinFamily(t *testing.T) {
	for _, region := range Regions() {
		byFamily := map[string][]InstanceTypeInfo{}
		for _, it := range Catalog(region) {
			if !it.BareMetal && it.GPU.Count == 0 && it.Accelerator.Count == 0 { // AWS prices GPUs apart
				fam, _, _ := strings.Cut(it.Name, ".")
				byFamily[fam] = append(byFamily[fam], it)
			}
		}
		for fam, its := range byFamily {
			sort.Slice(its, func(i, j int) bool {
				if its[i].VCPUs != its[j].VCPUs {
					return its[i].VCPUs < its[j].VCPUs
				}
				return its[i].MemoryMiB < its[j].MemoryMiB
			})
			for i := 1; i < len(its); i++ {
				if its[i].OnDemandPrice < its[i-1].OnDemandPrice*0.99 {
					t.Errorf("%s %s: %s at %v costs less than %s at %v", region, fam, its[i].Name, its[i].OnDemandPrice, its[i-1].Name, its[i-1].OnDemandPrice)
				}
			}
		}
	}
}

// TestCourseRegionCatalog: eu-west-2 keeps the course's families and the earlier catalog's
// prices, and now sells their large sizes and metal too.
func TestCourseRegionCatalog(t *testing.T) {
	cat := map[string]InstanceTypeInfo{}
	for _, it := range Catalog(DefaultRegion) {
		cat[it.Name] = it
	}
	for _, fam := range []string{"c5", "c6i", "c6g", "c7i", "c7g", "m5", "m6i", "m6g", "m7i", "m7g", "r5", "r6i", "r6g", "r7i", "r7g"} {
		for _, size := range []string{"large", "xlarge", "2xlarge", "4xlarge", "12xlarge"} {
			if _, ok := cat[fam+"."+size]; !ok {
				t.Errorf("eu-west-2 lacks %s.%s", fam, size)
			}
		}
	}
	for name, usd := range map[string]float64{"m5.large": 0.111, "c5.large": 0.101, "r5.large": 0.148, "m6i.large": 0.111, "m5.24xlarge": 5.328} {
		if got := cat[name].OnDemandPrice; got != usd {
			t.Errorf("eu-west-2 %s costs %v, want %v", name, got, usd)
		}
	}
	if it := cat["m5.metal"]; !it.BareMetal || it.VCPUs != 96 {
		t.Errorf("m5.metal %+v", it)
	}
	if it := cat["g4dn.xlarge"]; it.GPU != (GPU{Name: "T4", Manufacturer: "NVIDIA", Count: 1, MemoryMiB: 16384}) {
		t.Errorf("g4dn.xlarge GPU %+v", it.GPU)
	}
	if p, _ := OnDemandPrice("us-east-1", "m5.large"); p != 0.096 {
		t.Errorf("us-east-1 m5.large %v, want 0.096", strconv.FormatFloat(p, 'f', -1, 64))
	}
}
