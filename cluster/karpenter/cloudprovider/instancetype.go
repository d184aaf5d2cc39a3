package cloudprovider

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/mitchellh/hashstructure/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// CatalogTTL is how long the EC2 instance-type data (types, zonal offerings, spot prices)
// is reused before the provider asks EC2 again.
const CatalogTTL = time.Minute

// instanceTypeScheme splits "m6i.large" into category "m", generation "6".
var instanceTypeScheme = regexp.MustCompile(`(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`)

// subnetZone is one zone the EC2NodeClass's subnets offer.
type subnetZone struct {
	Name string
	ID   string
}

// catalog is EC2's answer about instance types, as of fetched.
type catalog struct {
	fetched    time.Time
	types      []ec2types.InstanceTypeInfo
	zones      map[string]sets.Set[string]   // instance type -> zones offering it
	spotPrices map[string]map[string]float64 // instance type -> zone -> latest spot price
}

// instanceTypeProvider turns EC2's catalog into Karpenter InstanceTypes for a node
// configuration (zones, kubelet settings, root volume), with offerings per zone and capacity
// type priced and marked unavailable after an ICE.
type instanceTypeProvider struct {
	ec2         EC2API
	region      string
	prices      func(instanceType string) (float64, bool)
	unavailable *unavailableOfferings
	ttl         time.Duration
	now         func() time.Time

	mu    sync.Mutex
	cat   *catalog
	built map[string][]*cloudprovider.InstanceType // by buildKey
}

// typeConfig is what, besides EC2's catalog, the built instance types depend on.
type typeConfig struct {
	Zones []subnetZone
	Node  nodeConfig
}

func (p *instanceTypeProvider) catalog(ctx context.Context) (*catalog, error) {
	if p.cat != nil && p.now().Sub(p.cat.fetched) < p.ttl {
		return p.cat, nil
	}
	cat := &catalog{fetched: p.now(), zones: map[string]sets.Set[string]{}, spotPrices: map[string]map[string]float64{}}
	types := ec2.NewDescribeInstanceTypesPaginator(p.ec2, &ec2.DescribeInstanceTypesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("supported-virtualization-type"), Values: []string{"hvm"}},
			{Name: aws.String("processor-info.supported-architecture"), Values: []string{"x86_64", "arm64"}},
		},
	})
	for types.HasMorePages() {
		page, err := types.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance types: %w", err)
		}
		cat.types = append(cat.types, page.InstanceTypes...)
	}
	sort.Slice(cat.types, func(i, j int) bool { return cat.types[i].InstanceType < cat.types[j].InstanceType })

	offerings := ec2.NewDescribeInstanceTypeOfferingsPaginator(p.ec2, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone,
	})
	for offerings.HasMorePages() {
		page, err := offerings.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance type offerings: %w", err)
		}
		for _, o := range page.InstanceTypeOfferings {
			name := string(o.InstanceType)
			if cat.zones[name] == nil {
				cat.zones[name] = sets.New[string]()
			}
			cat.zones[name].Insert(aws.ToString(o.Location))
		}
	}

	// The latest price per type and zone: with StartTime now EC2 answers the price in force.
	spot := ec2.NewDescribeSpotPriceHistoryPaginator(p.ec2, &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX"},
		StartTime:           aws.Time(p.now()),
	})
	latest := map[string]map[string]time.Time{}
	for spot.HasMorePages() {
		page, err := spot.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing spot price history: %w", err)
		}
		for _, sp := range page.SpotPriceHistory {
			name, zone := string(sp.InstanceType), aws.ToString(sp.AvailabilityZone)
			price, err := strconv.ParseFloat(aws.ToString(sp.SpotPrice), 64)
			if err != nil {
				continue
			}
			ts := aws.ToTime(sp.Timestamp)
			if cat.spotPrices[name] == nil {
				cat.spotPrices[name] = map[string]float64{}
				latest[name] = map[string]time.Time{}
			}
			if prev, ok := latest[name][zone]; ok && prev.After(ts) {
				continue
			}
			cat.spotPrices[name][zone] = price
			latest[name][zone] = ts
		}
	}
	p.cat = cat
	p.built = map[string][]*cloudprovider.InstanceType{}
	return cat, nil
}

// List returns every instance type EC2 describes, with offerings for the configured zones.
// Types not offered in those zones are returned too, with no offerings (Karpenter's contract).
func (p *instanceTypeProvider) List(ctx context.Context, cfg typeConfig) ([]*cloudprovider.InstanceType, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cat, err := p.catalog(ctx)
	if err != nil {
		return nil, err
	}
	cfgHash, err := hashstructure.Hash(cfg, hashstructure.FormatV2, &hashstructure.HashOptions{SlicesAsSets: true})
	if err != nil {
		return nil, fmt.Errorf("hashing node configuration: %w", err)
	}
	key := fmt.Sprintf("%016x-%d", cfgHash, p.unavailable.SeqNum())
	if its, ok := p.built[key]; ok {
		return its, nil
	}
	its := make([]*cloudprovider.InstanceType, 0, len(cat.types))
	for _, info := range cat.types {
		its = append(its, p.newInstanceType(info, cat, cfg))
	}
	if len(p.built) > 64 { // configurations come and go; keep the cache bounded
		p.built = map[string][]*cloudprovider.InstanceType{}
	}
	p.built[key] = its
	return its, nil
}

// Info returns EC2's description of one instance type from the cached catalog.
func (p *instanceTypeProvider) Info(ctx context.Context, name string) (ec2types.InstanceTypeInfo, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cat, err := p.catalog(ctx)
	if err != nil {
		return ec2types.InstanceTypeInfo{}, false, err
	}
	i := sort.Search(len(cat.types), func(i int) bool { return string(cat.types[i].InstanceType) >= name })
	if i < len(cat.types) && string(cat.types[i].InstanceType) == name {
		return cat.types[i], true, nil
	}
	return ec2types.InstanceTypeInfo{}, false, nil
}

func (p *instanceTypeProvider) newInstanceType(info ec2types.InstanceTypeInfo, cat *catalog, cfg typeConfig) *cloudprovider.InstanceType {
	name := string(info.InstanceType)
	subnetZones := sets.New[string]()
	for _, z := range cfg.Zones {
		subnetZones.Insert(z.Name)
	}
	zones := subnetZones.Intersection(cat.zones[name])

	var offerings cloudprovider.Offerings
	for _, zone := range sets.List(zones) {
		if price, ok := p.prices(name); ok {
			offerings = append(offerings, p.offering(name, zone, karpv1.CapacityTypeOnDemand, price))
		}
		if supportsUsageClass(info, ec2types.UsageClassTypeSpot) {
			if price, ok := cat.spotPrices[name][zone]; ok {
				offerings = append(offerings, p.offering(name, zone, karpv1.CapacityTypeSpot, price))
			}
		}
	}
	capacityTypes := sets.New[string]()
	for _, o := range offerings {
		capacityTypes.Insert(o.CapacityType())
	}
	capacity, overhead := nodeResources(info, cfg.Node)
	return &cloudprovider.InstanceType{
		Name:         name,
		Requirements: p.requirements(info, sets.List(zones), cfg.Zones, sets.List(capacityTypes)),
		Offerings:    offerings,
		Capacity:     capacity,
		Overhead:     overhead,
	}
}

func (p *instanceTypeProvider) offering(instanceType, zone, capacityType string, price float64) *cloudprovider.Offering {
	return &cloudprovider.Offering{
		Requirements: scheduling.NewRequirements(
			scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType),
			scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone),
		),
		Price:     price,
		Available: !p.unavailable.IsUnavailable(instanceType, zone, capacityType),
	}
}

func supportsUsageClass(info ec2types.InstanceTypeInfo, uc ec2types.UsageClassType) bool {
	if len(info.SupportedUsageClasses) == 0 {
		return true // an emulator that leaves the list out offers both
	}
	for _, c := range info.SupportedUsageClasses {
		if c == uc {
			return true
		}
	}
	return false
}

// requirements are the instance type's labels as Karpenter scheduling requirements. Every
// well-known label gets one, DoesNotExist where the type has no value, as Karpenter expects.
func (p *instanceTypeProvider) requirements(info ec2types.InstanceTypeInfo, zones []string, subnetZones []subnetZone, capacityTypes []string) scheduling.Requirements {
	name := string(info.InstanceType)
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, name),
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, arch(info)),
		scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, string(corev1.Linux)),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...),
		scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, p.region),
		scheduling.NewRequirement(corev1.LabelWindowsBuild, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityTypes...),
		scheduling.NewRequirement(apisv1.LabelInstanceCPU, corev1.NodeSelectorOpIn, fmt.Sprint(derefInt32(vcpus(info)))),
		scheduling.NewRequirement(apisv1.LabelInstanceMemory, corev1.NodeSelectorOpIn, fmt.Sprint(memoryMiB(info))),
	)
	for _, key := range []string{
		apisv1.LabelInstanceCategory, apisv1.LabelInstanceFamily, apisv1.LabelInstanceGeneration, apisv1.LabelInstanceSize,
		apisv1.LabelInstanceCPUManufacturer, apisv1.LabelInstanceCPUSustainedClockSpeedMhz, apisv1.LabelInstanceHypervisor,
		apisv1.LabelInstanceEncryptionInTransitSupported, apisv1.LabelInstanceNetworkBandwidth, apisv1.LabelInstanceEBSBandwidth,
		apisv1.LabelInstanceLocalNVME, apisv1.LabelInstanceGPUName, apisv1.LabelInstanceGPUManufacturer, apisv1.LabelInstanceGPUCount,
		apisv1.LabelInstanceGPUMemory, apisv1.LabelInstanceAcceleratorName, apisv1.LabelInstanceAcceleratorManufacturer,
		apisv1.LabelInstanceAcceleratorCount,
	} {
		reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
	}
	if parts := instanceTypeScheme.FindStringSubmatch(name); len(parts) == 4 {
		reqs.Get(apisv1.LabelInstanceCategory).Insert(parts[1])
		reqs.Get(apisv1.LabelInstanceGeneration).Insert(parts[3])
	}
	if family, size, ok := strings.Cut(name, "."); ok {
		reqs.Get(apisv1.LabelInstanceFamily).Insert(family)
		reqs.Get(apisv1.LabelInstanceSize).Insert(size)
	}
	if info.Hypervisor != "" {
		reqs.Get(apisv1.LabelInstanceHypervisor).Insert(string(info.Hypervisor))
	}
	if n := info.NetworkInfo; n != nil && n.EncryptionInTransitSupported != nil {
		reqs.Get(apisv1.LabelInstanceEncryptionInTransitSupported).Insert(fmt.Sprint(*n.EncryptionInTransitSupported))
	}
	if pi := info.ProcessorInfo; pi != nil {
		if pi.Manufacturer != nil {
			reqs.Get(apisv1.LabelInstanceCPUManufacturer).Insert(strings.ToLower(strings.ReplaceAll(*pi.Manufacturer, " ", "-")))
		}
		if pi.SustainedClockSpeedInGhz != nil {
			reqs.Get(apisv1.LabelInstanceCPUSustainedClockSpeedMhz).Insert(fmt.Sprint(int(math.Round(*pi.SustainedClockSpeedInGhz * 1000))))
		}
	}
	if e := info.EbsInfo; e != nil && e.EbsOptimizedInfo != nil && e.EbsOptimizedInfo.MaximumBandwidthInMbps != nil {
		reqs.Get(apisv1.LabelInstanceEBSBandwidth).Insert(fmt.Sprint(*e.EbsOptimizedInfo.MaximumBandwidthInMbps))
	}
	var zoneIDs []string
	for _, z := range subnetZones {
		if z.ID != "" && contains(zones, z.Name) {
			zoneIDs = append(zoneIDs, z.ID)
		}
	}
	if len(zoneIDs) > 0 {
		reqs.Add(scheduling.NewRequirement(apisv1.LabelTopologyZoneID, corev1.NodeSelectorOpIn, zoneIDs...))
	}
	return reqs
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
