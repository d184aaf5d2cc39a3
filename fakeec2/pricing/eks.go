package pricing

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The AmazonEKS price list: what EKS sells in a region besides EC2's machines. Node
// viewers (eks-node-viewer's pricing provider) ask it for Fargate's rates (products whose
// usagetype names Fargate's vCPU and GB hours, by regionCode) and for EKS Auto Mode's
// management fee per instance type (operation EKSAutoUsage, attribute instanceType).

// EKSServiceCode is the AmazonEKS price list's service code.
const EKSServiceCode = "AmazonEKS"

// us-east-1's AmazonEKS rates (USD per hour; AWS's EKS and Fargate pricing pages): the
// cluster fee in standard and extended support (the same in every commercial region), and
// Fargate's per-vCPU, per-GB and ephemeral-storage-GB hours.
const (
	eksClusterUSD         = 0.10
	eksExtendedSupportUSD = 0.60
	fargateVCPUUSD        = 0.04048
	fargateGBUSD          = 0.004445
	fargateStorageGBUSD   = 0.000111
	// autoModeShare is EKS Auto Mode's management fee as a share of the instance's
	// on-demand price (derived: AWS's per-type fees are about 12% of it).
	autoModeShare = 0.12
)

// eksProduct is one AmazonEKS product before it becomes an offer.
type eksProduct struct {
	usage, operation, description string
	usd                           float64
	extra                         map[string]string
}

// eksOffers are region's AmazonEKS products: the cluster fees, Fargate's rates (us-east-1's
// times ratio, the region's EC2 prices over us-east-1's: derived) and an Auto Mode fee per
// EC2 product of the region.
func eksOffers(code string, r region, ratio float64, products []Product) []*Offer {
	prefix := r.prefix
	if prefix == "" {
		prefix = "USE1-" // EKS, newer than EC2, prefixes us-east-1's usage types too
	}
	if ratio <= 0 {
		ratio = 1
	}
	regional := func(usd float64) float64 { return math.Round(usd*ratio*1e7) / 1e7 }
	ps := []eksProduct{
		{"AmazonEKS-Hours:perCluster", "CreateOperation", "Amazon EKS cluster usage in " + r.location, eksClusterUSD, nil},
		{"AmazonEKS-Hours:extendedSupport", "ExtendedSupport", "Amazon EKS cluster extended support usage in " + r.location, eksExtendedSupportUSD, nil},
		{"Fargate-vCPU-Hours:perCPU", "FargateTask", "AWS Fargate - vCPU - " + r.location, regional(fargateVCPUUSD), map[string]string{"cputype": "perCPU"}},
		{"Fargate-GB-Hours", "FargateTask", "AWS Fargate - Memory - " + r.location, regional(fargateGBUSD), map[string]string{"memorytype": "perGB"}},
		{"Fargate-EphemeralStorage-GB-Hours", "FargateTask", "AWS Fargate - Ephemeral Storage - " + r.location, regional(fargateStorageGBUSD), map[string]string{"storagetype": "default"}},
	}
	for _, p := range products {
		ps = append(ps, eksProduct{"AutoMode-Usage:" + p.InstanceType, "EKSAutoUsage",
			fmt.Sprintf("Amazon EKS Auto Mode management of a %s instance in %s", p.InstanceType, r.location),
			math.Round(p.OnDemandUSDPerHour*autoModeShare*1e6) / 1e6, map[string]string{"instanceType": p.InstanceType}})
	}
	out := make([]*Offer, 0, len(ps))
	for _, p := range ps {
		attrs := map[string]string{
			"servicecode": EKSServiceCode, "servicename": "Amazon Elastic Container Service for Kubernetes",
			"location": r.location, "locationType": "AWS Region", "regionCode": code,
			"usagetype": prefix + p.usage, "operation": p.operation,
		}
		for k, v := range p.extra {
			attrs[k] = v
		}
		out = append(out, newOffer(sku(EKSServiceCode, code, p.usage), "Compute", attrs, p.usd,
			"$"+strconv.FormatFloat(p.usd, 'f', -1, 64)+" per hour: "+p.description))
	}
	return out
}

// newOffer is an offer with its filterable fields: productFamily, sku and each attribute.
func newOffer(skuCode, family string, attrs map[string]string, usd float64, description string) *Offer {
	o := &Offer{SKU: skuCode, ProductFamily: family, Attributes: attrs, USDPerHour: usd, Description: description}
	o.fields = map[string]string{"productfamily": family, "sku": o.SKU}
	for k, v := range attrs {
		o.fields[strings.ToLower(k)] = v
	}
	return o
}
