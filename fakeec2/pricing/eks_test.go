package pricing_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/pricing"
)

// TestEKSPriceListAsNodeViewersAskIt asks AmazonEKS what eks-node-viewer's pricing
// provider asks: every product of the region, of which it keeps Fargate's vCPU and GB
// hours, and Auto Mode's fee per instance type (operation EKSAutoUsage).
func TestEKSPriceListAsNodeViewersAskIt(t *testing.T) {
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: testProducts, RegionRatio: 1.15})
	fargate := map[string]float64{}
	for _, d := range parse(t, allProducts(t, c, &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEKS"),
		Filters: []types.Filter{tm("regionCode", "eu-west-2")}, MaxResults: aws.Int32(100)})) {
		if d.ServiceCode != "AmazonEKS" || d.Product.ProductFamily != "Compute" {
			t.Errorf("product %+v: want service AmazonEKS, family Compute", d.Product)
		}
		if usage := d.Product.Attributes["usagetype"]; strings.Contains(usage, "Fargate") {
			fargate[usage] = usd(t, d)
		}
	}
	want := map[string]float64{"EUW2-Fargate-vCPU-Hours:perCPU": 0.046552, "EUW2-Fargate-GB-Hours": 0.0051118,
		"EUW2-Fargate-EphemeralStorage-GB-Hours": 0.0001276}
	if diff := cmp.Diff(want, fargate); diff != "" {
		t.Errorf("Fargate's rates in eu-west-2 (-want +got):\n%s", diff)
	}

	auto := map[string]float64{}
	for _, d := range parse(t, allProducts(t, c, &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEKS"),
		Filters: []types.Filter{tm("operation", "EKSAutoUsage"), tm("regionCode", "eu-west-2")}})) {
		auto[d.Product.Attributes["instanceType"]] = usd(t, d)
	}
	if len(auto) != len(testProducts) || auto["m6i.large"] != 0.01332 {
		t.Errorf("Auto Mode fees %v, want one per EC2 product, m6i.large 12%% of 0.111", auto)
	}
	cluster := allProducts(t, c, &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEKS"),
		Filters: []types.Filter{tm("usagetype", "EUW2-AmazonEKS-Hours:perCluster")}})
	if got := parse(t, cluster); len(got) != 1 || usd(t, got[0]) != 0.10 {
		t.Errorf("the cluster fee: %v, want one product at 0.10 USD/h", cluster)
	}
}

func TestDescribeServicesListsEC2AndEKS(t *testing.T) {
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: testProducts})
	ctx := context.Background()
	ds, err := c.DescribeServices(ctx, &awspricing.DescribeServicesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, s := range ds.Services {
		codes = append(codes, aws.ToString(s.ServiceCode))
	}
	if diff := cmp.Diff([]string{"AmazonEC2", "AmazonEKS"}, codes); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	vals, err := c.GetAttributeValues(ctx, &awspricing.GetAttributeValuesInput{ServiceCode: aws.String("AmazonEKS"), AttributeName: aws.String("operation")})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, v := range vals.AttributeValues {
		ops = append(ops, aws.ToString(v.Value))
	}
	if diff := cmp.Diff([]string{"CreateOperation", "EKSAutoUsage", "ExtendedSupport", "FargateTask"}, ops); diff != "" {
		t.Errorf("AmazonEKS operations (-want +got):\n%s", diff)
	}
}

func usd(t *testing.T, d doc) float64 {
	t.Helper()
	for _, term := range d.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			p, err := strconv.ParseFloat(dim.PricePerUnit["USD"], 64)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no price in %+v", d)
	return 0
}
