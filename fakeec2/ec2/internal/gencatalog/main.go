package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	var (
		out      = flag.String("out", "zz_generated_catalog.go", "the Go file to write")
		types    = flag.String("types", "../../../shared/data/aws-instance-types.json", "Karpenter's instance types (labels and resources)")
		libcloud = flag.String("libcloud", "/usr/lib/python3/dist-packages/libcloud", "an Apache Libcloud package (python3-libcloud)")
		earlier  = flag.String("earlier", "internal/gencatalog/eu-west-2.csv", "the lab's earlier eu-west-2 prices")
	)
	flag.Parse()
	log.SetFlags(0)
	if err := run(*out, *types, *libcloud, *earlier); err != nil {
		log.Fatalf("gencatalog: %v", err)
	}
}

func run(out, typesPath, libcloudDir, earlierPath string) error {
	src, kt, err := readKarpenterTypes(typesPath)
	if err != nil {
		return err
	}
	dir, err := moduleDir("github.com/aws/karpenter-provider-aws")
	if err != nil {
		return err
	}
	kd, err := readKarpenterData(dir)
	if err != nil {
		return err
	}
	lc, err := readLibcloud(libcloudDir)
	if err != nil {
		return fmt.Errorf("%w (apt-get install python3-libcloud)", err)
	}
	earlierRows, err := readEarlier(earlierPath)
	if err != nil {
		return err
	}
	g := &generator{kt: kt, kd: kd, lc: lc, earlier: earlierRows}
	g.buildTypes()
	g.buildPrices()
	text := g.render(sources{types: src, typesPath: "../shared/data/" + filepath.Base(typesPath), karpenterDir: dir, karpenterStamp: kd.stamp, libcloudUpdated: lc.updated})
	return os.WriteFile(out, []byte(text), 0o644)
}

// generator holds the sources and what is built from them.
type generator struct {
	kt      map[string]karpenterType
	kd      *karpenterData
	lc      *libcloudData
	earlier map[string]earlierRow

	types   []typeFacts            // sorted by name
	byName  map[string]*typeFacts  // into types
	prices  map[string][]priceRow  // region -> rows sorted by name
	skipped map[string][]string    // reason -> types left out
	ratios  map[string]regionRatio // region -> how its derived prices were made
}

type priceRow struct {
	name    string
	usd     float64
	derived bool
}

type regionRatio struct {
	median   float64
	families int // families whose own ratio was used
}

// buildTypes collects every type of Karpenter's reference that has ENI limits, and the few
// older types the Price List and the ENI table still know but the reference no longer
// lists (p3, f1, dl1).
func (g *generator) buildTypes() {
	g.byName = map[string]*typeFacts{}
	g.skipped = map[string][]string{}
	for name, t := range g.kt {
		lim, ok := g.kd.limits[name]
		if !ok {
			g.skipped["no ENI limits in zz_generated.vpclimits.go"] = append(g.skipped["no ENI limits in zz_generated.vpclimits.go"], name)
			continue
		}
		f := factsFromLabels(name, t, lim, g.kd.bandwidth)
		g.addAttrs(&f)
		g.types = append(g.types, f)
	}
	for name, attrs := range g.lc.attrs {
		lim, ok := g.kd.limits[name]
		if _, listed := g.kt[name]; listed || !ok || len(g.lc.prices[name]) == 0 {
			continue
		}
		f, ok := factsFromPriceList(name, attrs, lim, g.kd.bandwidth)
		if !ok {
			continue
		}
		g.addAttrs(&f)
		g.types = append(g.types, f)
	}
	sort.Slice(g.types, func(i, j int) bool { return g.types[i].Name < g.types[j].Name })
	for i := range g.types {
		g.byName[g.types[i].Name] = &g.types[i]
	}
}

// addAttrs sets what the Price List says of a type, or derives it.
func (g *generator) addAttrs(f *typeFacts) {
	a := g.lc.attrs[f.Name]
	f.NetworkPerformance = a["networkPerformance"]
	if e, ok := g.earlier[f.Name]; ok && f.NetworkPerformance == "" {
		f.NetworkPerformance = e.networkPerformance
	}
	if f.NetworkPerformance == "" {
		f.NetworkPerformance, f.derived = derivedNetworkPerformance(f.NetworkMbps), append(f.derived, "network performance")
	}
	f.PhysicalProcessor = a["physicalProcessor"]
	f.Family = a["instanceFamily"]
	if f.Family == "" {
		f.Family, f.derived = familyOfCategory(f.category()), append(f.derived, "price-list family")
	}
	f.PreviousGeneration = a["currentGeneration"] == "No"
}

// usEast1 is a type's us-east-1 price: Karpenter's (newest), else the Price List dump's.
func (g *generator) usEast1(name string) (float64, bool) {
	if p, ok := g.kd.usEast1[name]; ok && p > 0 {
		return p, true
	}
	p, ok := g.lc.prices[name]["us-east-1"]
	return p, ok
}

// regionNames are the commercial regions the Price List dump prices.
func (g *generator) regionNames() []string {
	set := map[string]bool{}
	for _, rs := range g.lc.prices {
		for r := range rs {
			if !strings.HasPrefix(r, "us-gov-") {
				set[r] = true
			}
		}
	}
	var out []string
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func (g *generator) buildPrices() {
	g.prices, g.ratios = map[string][]priceRow{}, map[string]regionRatio{}
	for _, r := range g.regionNames() {
		if r == "us-east-1" {
			g.prices[r] = g.usEast1Rows()
			continue
		}
		g.prices[r] = g.regionRows(r)
	}
}

func (g *generator) usEast1Rows() []priceRow {
	var rows []priceRow
	for _, f := range g.types {
		if p, ok := g.usEast1(f.Name); ok {
			rows = append(rows, priceRow{name: f.Name, usd: p})
		} else {
			g.skipped["no us-east-1 on-demand price"] = append(g.skipped["no us-east-1 on-demand price"], f.Name)
		}
	}
	return rows
}

// regionRows are the types the Price List dump prices in region (and, in eu-west-2, the
// lab's earlier catalog), plus every other size of a family the region has, priced from
// us-east-1 by the family's ratio of the two regions' prices.
func (g *generator) regionRows(region string) []priceRow {
	listed := map[string]priceRow{}
	for _, f := range g.types {
		if p, ok := g.lc.prices[f.Name][region]; ok {
			listed[f.Name] = priceRow{name: f.Name, usd: p}
		}
		if e, ok := g.earlier[f.Name]; ok && region == "eu-west-2" {
			listed[f.Name] = priceRow{name: f.Name, usd: e.usd, derived: e.derived}
		}
	}
	byFamily := map[string][]float64{}
	var all []float64
	for name, row := range listed {
		if base, ok := g.lc.prices[name]["us-east-1"]; ok {
			byFamily[family(name)] = append(byFamily[family(name)], row.usd/base)
			all = append(all, row.usd/base)
		}
	}
	ratio := regionRatio{median: median(all)}
	families := map[string]bool{}
	for name := range listed {
		families[family(name)] = true
	}
	var rows []priceRow
	for _, f := range g.types {
		if row, ok := listed[f.Name]; ok {
			rows = append(rows, row)
			continue
		}
		if !families[family(f.Name)] {
			continue
		}
		base, ok := g.usEast1(f.Name)
		if !ok {
			continue
		}
		r := ratio.median
		if rs := byFamily[family(f.Name)]; len(rs) > 0 {
			r = median(rs)
			ratio.families++
		}
		rows = append(rows, priceRow{name: f.Name, usd: round6(base * r), derived: true})
	}
	g.ratios[region] = ratio
	return rows
}

func family(name string) string { f, _, _ := strings.Cut(name, "."); return f }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 1
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
