package pricing

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServiceCode is EC2's price list's service code (AmazonEKS's is EKSServiceCode).
const ServiceCode = "AmazonEC2"

// Product is one instance type of the region's catalog as fakeec2 knows it.
type Product struct {
	InstanceType       string  // "m6i.large"
	VCPU               int     // the "vcpu" attribute
	MemoryGiB          float64 // the "memory" attribute, "8 GiB"
	OnDemandUSDPerHour float64 // the Linux, shared-tenancy on-demand price

	// Optional descriptive attributes; empty ones are derived or left out.
	Arch               string  // "x86_64" or "arm64"
	PhysicalProcessor  string  // "Intel Xeon 8375C (Ice Lake)"
	ClockSpeedGHz      float64 // "3.5 GHz"
	NetworkPerformance string  // "Up to 12.5 Gigabit"
	InstanceFamily     string  // "General purpose"; derived from the type's family letter
	GPU                int

	// BareMetal lists the type under "Compute Instance (bare metal)" with Shared and
	// Dedicated tenancy, as AWS does; types whose size starts with "metal" always are.
	BareMetal bool
	// PreviousGeneration lists it with currentGeneration "No".
	PreviousGeneration bool
	// DedicatedUSDPerHour, when set, adds a Dedicated-tenancy offer of a virtualized type.
	DedicatedUSDPerHour float64
}

// Options configures a Service.
type Options struct {
	Products []Product
	// PublicationDate stamps every document (publicationDate, effectiveDate, version).
	// Zero: 2025-06-01.
	PublicationDate time.Time
	// RegionRatio is the region's EC2 prices over us-east-1's (0: 1): AmazonEKS's Fargate
	// rates are us-east-1's times it.
	RegionRatio float64
}

// Offer is one product (SKU) of the price list: a product family, its attributes and its
// one on-demand price dimension.
type Offer struct {
	SKU           string
	ProductFamily string
	Attributes    map[string]string
	USDPerHour    float64
	Description   string // the price dimension's description

	fields map[string]string // lower-cased field name -> value, for filters
}

// Field is an offer's value for a filter field (case-insensitive name), and whether it has one.
func (o *Offer) Field(name string) (string, bool) {
	v, ok := o.fields[strings.ToLower(name)]
	return v, ok
}

// Catalog is one service's price list in the region, immutable once built.
type Catalog struct {
	ServiceCode string
	Region      string
	Published   time.Time
	Offers      []*Offer // in product order, then tenancy and capacity status
	attrNames   []string

	mu    sync.Mutex
	cache map[string][]*Offer // query key -> result, shared read-only
}

// emptyCatalog is service code's price list of region, with no offers yet.
func emptyCatalog(serviceCode, regionCode string, opts Options) (*Catalog, region, error) {
	r, ok := regions[regionCode]
	if !ok {
		return nil, r, fmt.Errorf("pricing: no price list location for region %q", regionCode)
	}
	pub := opts.PublicationDate
	if pub.IsZero() {
		pub = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	}
	return &Catalog{ServiceCode: serviceCode, Region: regionCode, Published: pub.UTC(), cache: map[string][]*Offer{}}, r, nil
}

// NewCatalog builds the price list of region from products.
func NewCatalog(regionCode string, opts Options) (*Catalog, error) {
	c, r, err := emptyCatalog(ServiceCode, regionCode, opts)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range opts.Products {
		if err := validProduct(p); err != nil {
			return nil, fmt.Errorf("pricing: product %q: %w", p.InstanceType, err)
		}
		if seen[p.InstanceType] {
			return nil, fmt.Errorf("pricing: product %q listed twice", p.InstanceType)
		}
		seen[p.InstanceType] = true
		c.Offers = append(c.Offers, offersOf(regionCode, r, p)...)
	}
	c.indexAttributes()
	return c, nil
}

// NewEKSCatalog builds the region's AmazonEKS price list; opts.Products (the region's EC2
// products) get Auto Mode's fee each.
func NewEKSCatalog(regionCode string, opts Options) (*Catalog, error) {
	c, r, err := emptyCatalog(EKSServiceCode, regionCode, opts)
	if err != nil {
		return nil, err
	}
	c.Offers = eksOffers(regionCode, r, opts.RegionRatio, opts.Products)
	c.indexAttributes()
	return c, nil
}

func (c *Catalog) indexAttributes() {
	names := map[string]bool{}
	for _, o := range c.Offers {
		for k := range o.Attributes {
			names[k] = true
		}
	}
	for k := range names {
		c.attrNames = append(c.attrNames, k)
	}
	sort.Strings(c.attrNames)
}

func validProduct(p Product) error {
	switch {
	case p.InstanceType == "" || !strings.Contains(p.InstanceType, "."):
		return fmt.Errorf("instance type must be family.size")
	case p.VCPU <= 0 || p.MemoryGiB <= 0:
		return fmt.Errorf("vcpu and memory must be positive")
	case p.OnDemandUSDPerHour <= 0:
		return fmt.Errorf("on-demand price must be positive")
	}
	return nil
}

// variant is one (tenancy, capacity status) product AWS lists per instance type.
type variant struct {
	tenancy, capacity, usage, what string
	price                          float64
}

func offersOf(code string, r region, p Product) []*Offer {
	_, size, _ := strings.Cut(p.InstanceType, ".")
	metal := p.BareMetal || strings.HasPrefix(size, "metal")
	family := "Compute Instance"
	if metal {
		family = "Compute Instance (bare metal)"
	}
	vs := []variant{
		{"Shared", "Used", "BoxUsage", "On Demand", p.OnDemandUSDPerHour},
		// An unused On-Demand Capacity Reservation bills at the on-demand rate.
		{"Shared", "UnusedCapacityReservation", "UnusedBox", "Unused Reservation", p.OnDemandUSDPerHour},
	}
	dedicated := p.DedicatedUSDPerHour
	if metal && dedicated == 0 {
		dedicated = p.OnDemandUSDPerHour
	}
	if dedicated > 0 {
		vs = append(vs,
			variant{"Dedicated", "Used", "DedicatedUsage", "Dedicated", dedicated},
			variant{"Dedicated", "UnusedCapacityReservation", "UnusedDed", "Unused Dedicated Reservation", dedicated})
	}
	out := make([]*Offer, 0, len(vs))
	for _, v := range vs {
		attrs := attributes(code, r, p, family)
		attrs["tenancy"] = v.tenancy
		attrs["capacitystatus"] = v.capacity
		attrs["usagetype"] = r.prefix + v.usage + ":" + p.InstanceType
		out = append(out, newOffer(sku(code, p.InstanceType, v.tenancy, v.capacity), family, attrs, v.price,
			fmt.Sprintf("$%s per %s Linux %s Instance Hour", strconv.FormatFloat(v.price, 'f', -1, 64), v.what, p.InstanceType)))
	}
	return out
}

// attributes are the product attributes AWS lists for a Linux EC2 instance product.
func attributes(code string, r region, p Product, family string) map[string]string {
	a := map[string]string{
		"servicecode":              ServiceCode,
		"servicename":              "Amazon Elastic Compute Cloud",
		"location":                 r.location,
		"locationType":             "AWS Region",
		"regionCode":               code,
		"instanceType":             p.InstanceType,
		"instanceFamily":           p.InstanceFamily,
		"currentGeneration":        map[bool]string{false: "Yes", true: "No"}[p.PreviousGeneration],
		"vcpu":                     strconv.Itoa(p.VCPU),
		"memory":                   strconv.FormatFloat(p.MemoryGiB, 'f', -1, 64) + " GiB",
		"storage":                  "EBS only",
		"processorArchitecture":    "64-bit",
		"operatingSystem":          "Linux",
		"licenseModel":             "No License required",
		"preInstalledSw":           "NA",
		"operation":                "RunInstances",
		"marketoption":             "OnDemand",
		"availabilityzone":         "NA",
		"ecu":                      "NA",
		"gpuMemory":                "NA",
		"vpcnetworkingsupport":     "true",
		"classicnetworkingsupport": "false",
		"normalizationSizeFactor":  normalization(p.InstanceType),
	}
	if a["instanceFamily"] == "" {
		a["instanceFamily"] = instanceFamily(p.InstanceType, family)
	}
	if p.PhysicalProcessor != "" {
		a["physicalProcessor"] = p.PhysicalProcessor
	} else if p.Arch == "arm64" {
		a["physicalProcessor"] = "AWS Graviton"
	}
	if p.ClockSpeedGHz > 0 {
		a["clockSpeed"] = strconv.FormatFloat(p.ClockSpeedGHz, 'f', -1, 64) + " GHz"
	}
	if p.NetworkPerformance != "" {
		a["networkPerformance"] = p.NetworkPerformance
	}
	if p.GPU > 0 {
		a["gpu"] = strconv.Itoa(p.GPU)
	}
	return a
}

// instanceFamily is the price list's wording of what a family is for.
func instanceFamily(instanceType, productFamily string) string {
	switch fam, _, _ := strings.Cut(instanceType, "."); {
	case strings.HasPrefix(fam, "inf"), strings.HasPrefix(fam, "trn"), strings.HasPrefix(fam, "dl"):
		return "Machine Learning ASIC Instances"
	case strings.HasPrefix(fam, "p"), strings.HasPrefix(fam, "g"):
		return "GPU instance"
	case strings.HasPrefix(fam, "c"):
		return "Compute optimized"
	case strings.HasPrefix(fam, "r"), strings.HasPrefix(fam, "x"), strings.HasPrefix(fam, "z"), strings.HasPrefix(fam, "u-"):
		return "Memory optimized"
	case strings.HasPrefix(fam, "i"), strings.HasPrefix(fam, "d"), strings.HasPrefix(fam, "h"):
		return "Storage optimized"
	}
	return "General purpose"
}

// normalization is the size's normalization factor (nano 0.25 ... 1xlarge 8); metal and
// unknown sizes answer "NA".
func normalization(instanceType string) string {
	_, size, _ := strings.Cut(instanceType, ".")
	fixed := map[string]string{"nano": "0.25", "micro": "0.5", "small": "1", "medium": "2",
		"large": "4", "xlarge": "8"}
	if f, ok := fixed[size]; ok {
		return f
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(size, "xlarge")); err == nil && strings.HasSuffix(size, "xlarge") {
		return strconv.Itoa(8 * n)
	}
	return "NA"
}

// sku is a stable 16-character SKU, as AWS's look, for one product.
func sku(parts ...string) string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	sum := sha256.Sum256([]byte(strings.Join(parts, "|")))
	b := make([]byte, 16)
	for i := range b {
		b[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(b)
}

// Filter is one GetProducts constraint.
type Filter struct {
	Type, Field, Value string
}

// FilterTypes are the filter types the service accepts.
var FilterTypes = []string{"TERM_MATCH", "EQUALS", "CONTAINS", "ANY_OF", "NONE_OF"}

// ValidFilter says what is wrong with f, or "".
func ValidFilter(f Filter) string {
	switch {
	case !contains(FilterTypes, f.Type):
		return fmt.Sprintf("invalid filter type %q: valid types are %s", f.Type, strings.Join(FilterTypes, ", "))
	case f.Field == "" || len(f.Field) > 1024:
		return "filter Field must be 1 to 1024 characters long"
	case f.Value == "" || len(f.Value) > 1024:
		return "filter Value must be 1 to 1024 characters long"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// matches says whether o satisfies f. TERM_MATCH, CONTAINS and ANY_OF compare without
// regard to case, as the price list's terms do; EQUALS is exact.
// f.Field must already be lower case.
func matches(o *Offer, f Filter) bool {
	v, ok := o.fields[f.Field]
	switch f.Type {
	case "TERM_MATCH":
		return ok && strings.EqualFold(v, f.Value)
	case "EQUALS":
		return ok && v == f.Value
	case "CONTAINS":
		return ok && strings.Contains(strings.ToLower(v), strings.ToLower(f.Value))
	case "ANY_OF":
		return ok && anyOf(v, f.Value)
	case "NONE_OF":
		return !ok || !anyOf(v, f.Value)
	}
	return false
}

// anyOf matches v against a comma-separated list of values.
func anyOf(v, list string) bool {
	for _, want := range strings.Split(list, ",") {
		if strings.EqualFold(v, strings.TrimSpace(want)) {
			return true
		}
	}
	return false
}

// Query returns the offers matching every filter, in catalog order.
// Results are cached: a paginating client asks the same query once per page.
func (c *Catalog) Query(filters []Filter) []*Offer {
	lower := make([]Filter, len(filters))
	var key strings.Builder
	for i, f := range filters {
		lower[i] = Filter{Type: f.Type, Field: strings.ToLower(f.Field), Value: f.Value}
		fmt.Fprintf(&key, "%s\x00%s\x00%s\x00", lower[i].Type, lower[i].Field, f.Value)
	}
	c.mu.Lock()
	hit, ok := c.cache[key.String()]
	c.mu.Unlock()
	if ok {
		return hit
	}
	out := c.scan(lower)
	c.mu.Lock()
	if len(c.cache) >= maxCached {
		clear(c.cache)
	}
	c.cache[key.String()] = out
	c.mu.Unlock()
	return out
}

// maxCached bounds the query cache; past it the cache starts over.
const maxCached = 64

func (c *Catalog) scan(lower []Filter) []*Offer {
	var out []*Offer
next:
	for _, o := range c.Offers {
		for _, f := range lower {
			if !matches(o, f) {
				continue next
			}
		}
		out = append(out, o)
	}
	return out
}

// AttributeNames are the attribute names the price list's products carry, sorted.
func (c *Catalog) AttributeNames() []string { return c.attrNames }

// AttributeValues are the distinct values of attribute name (case-insensitive), sorted;
// false when no product has the attribute.
func (c *Catalog) AttributeValues(name string) ([]string, bool) {
	set := map[string]bool{}
	for _, o := range c.Offers {
		if v, ok := o.Field(name); ok {
			set[v] = true
		}
	}
	if len(set) == 0 {
		return nil, false
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, true
}
