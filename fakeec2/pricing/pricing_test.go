package pricing_test

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/pricing"
)

var testProducts = []pricing.Product{
	{InstanceType: "m6i.large", VCPU: 2, MemoryGiB: 8, OnDemandUSDPerHour: 0.111, Arch: "x86_64"},
	{InstanceType: "m6i.xlarge", VCPU: 4, MemoryGiB: 16, OnDemandUSDPerHour: 0.222, Arch: "x86_64"},
	{InstanceType: "c7g.medium", VCPU: 1, MemoryGiB: 2, OnDemandUSDPerHour: 0.0408, Arch: "arm64"},
	{InstanceType: "t3.nano", VCPU: 2, MemoryGiB: 0.5, OnDemandUSDPerHour: 0.0055, Arch: "x86_64"},
	{InstanceType: "m5.metal", VCPU: 96, MemoryGiB: 384, OnDemandUSDPerHour: 5.376, Arch: "x86_64"},
}

// start serves svc on a real listener and returns an SDK client for it.
func start(t testing.TB, host *account.MemoryHost, opts pricing.Options) *awspricing.Client {
	t.Helper()
	svc, err := pricing.New(host, opts)
	if err != nil {
		t.Fatalf("pricing.New: %v", err)
	}
	return awspricing.NewFromConfig(accounttest.Config(t, accounttest.Start(t, svc, host), accounttest.AccessKey))
}

func tm(field, value string) types.Filter {
	return types.Filter{Type: types.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
}

// karpenterFilters are the filters karpenter's pricing provider sends (pricing.go).
func karpenterFilters(region, tenancy, family string) []types.Filter {
	return []types.Filter{tm("regionCode", region), tm("serviceCode", "AmazonEC2"),
		tm("preInstalledSw", "NA"), tm("operatingSystem", "Linux"), tm("capacitystatus", "Used"),
		tm("marketoption", "OnDemand"), tm("tenancy", tenancy), tm("productFamily", family)}
}

// doc is the part of a product document the tests read.
type doc struct {
	Product struct {
		ProductFamily string
		Attributes    map[string]string
		SKU           string
	}
	ServiceCode string
	Terms       struct {
		OnDemand map[string]struct {
			OfferTermCode   string
			PriceDimensions map[string]struct {
				Unit         string
				PricePerUnit map[string]string
			}
		}
	}
}

func parse(t *testing.T, list []string) []doc {
	t.Helper()
	out := make([]doc, 0, len(list))
	for _, s := range list {
		var d doc
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			t.Fatalf("product document is not JSON: %v: %s", err, s)
		}
		out = append(out, d)
	}
	return out
}

// prices reads the documents as karpenter does: instance type -> USD of any dimension.
func prices(t *testing.T, list []string) map[string]float64 {
	out := map[string]float64{}
	for _, d := range parse(t, list) {
		for _, term := range d.Terms.OnDemand {
			for _, dim := range term.PriceDimensions {
				p, err := strconv.ParseFloat(dim.PricePerUnit["USD"], 64)
				if err != nil {
					t.Fatalf("price %q: %v", dim.PricePerUnit["USD"], err)
				}
				out[d.Product.Attributes["instanceType"]] = p
			}
		}
	}
	return out
}

func allProducts(t *testing.T, c *awspricing.Client, in *awspricing.GetProductsInput) []string {
	t.Helper()
	var out []string
	p := awspricing.NewGetProductsPaginator(c, in)
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("GetProducts: %v", err)
		}
		out = append(out, page.PriceList...)
	}
	return out
}

func TestGetProductsKarpenterQueries(t *testing.T) {
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: testProducts})
	tests := []struct {
		name    string
		filters []types.Filter
		want    map[string]float64
	}{
		{"shared compute instances", karpenterFilters("eu-west-2", "Shared", "Compute Instance"),
			map[string]float64{"m6i.large": 0.111, "m6i.xlarge": 0.222, "c7g.medium": 0.0408, "t3.nano": 0.0055}},
		{"dedicated bare metal", karpenterFilters("eu-west-2", "Dedicated", "Compute Instance (bare metal)"),
			map[string]float64{"m5.metal": 5.376}},
		{"another region has nothing", karpenterFilters("us-east-1", "Shared", "Compute Instance"), map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := allProducts(t, c, &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"),
				Filters: tt.filters, MaxResults: aws.Int32(100)})
			if diff := cmp.Diff(tt.want, prices(t, list)); diff != "" {
				t.Errorf("prices (-want +got):\n%s", diff)
			}
			if len(list) != len(tt.want) {
				t.Errorf("got %d documents, want one per type (%d)", len(list), len(tt.want))
			}
		})
	}
}

func TestProductDocumentShape(t *testing.T) {
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: testProducts})
	out, err := c.GetProducts(context.Background(), &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"),
		Filters: []types.Filter{tm("instanceType", "m6i.large"), tm("capacitystatus", "Used")}})
	if err != nil {
		t.Fatalf("GetProducts: %v", err)
	}
	if got := aws.ToString(out.FormatVersion); got != "aws_v1" {
		t.Errorf("FormatVersion = %q, want aws_v1", got)
	}
	docs := parse(t, out.PriceList)
	if len(docs) != 1 {
		t.Fatalf("got %d documents, want 1", len(docs))
	}
	d := docs[0]
	want := map[string]string{"instanceType": "m6i.large", "regionCode": "eu-west-2", "location": "EU (London)",
		"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used",
		"licenseModel": "No License required", "usagetype": "EUW2-BoxUsage:m6i.large", "operation": "RunInstances",
		"vcpu": "2", "memory": "8 GiB", "marketoption": "OnDemand", "servicecode": "AmazonEC2",
		"instanceFamily": "General purpose", "normalizationSizeFactor": "4"}
	got := map[string]string{}
	for k := range want {
		got[k] = d.Product.Attributes[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	if d.Product.ProductFamily != "Compute Instance" || d.ServiceCode != "AmazonEC2" || len(d.Product.SKU) != 16 {
		t.Errorf("family %q, serviceCode %q, sku %q", d.Product.ProductFamily, d.ServiceCode, d.Product.SKU)
	}
	term, ok := d.Terms.OnDemand[d.Product.SKU+".JRTCKXETXF"]
	if !ok || term.OfferTermCode != "JRTCKXETXF" {
		t.Fatalf("no JRTCKXETXF term keyed by SKU: %+v", d.Terms.OnDemand)
	}
	dim, ok := term.PriceDimensions[d.Product.SKU+".JRTCKXETXF.6YS6EN2CT7"]
	if !ok || dim.Unit != "Hrs" || dim.PricePerUnit["USD"] != "0.1110000000" {
		t.Errorf("price dimension = %+v, want Hrs at USD 0.1110000000", term.PriceDimensions)
	}
}

func TestGetProductsFilterTypes(t *testing.T) {
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: testProducts})
	base := []types.Filter{tm("capacitystatus", "Used"), tm("tenancy", "Shared")}
	tests := []struct {
		name   string
		filter types.Filter
		want   []string
	}{
		{"term match ignores case", tm("instanceType", "M6I.LARGE"), []string{"m6i.large"}},
		{"equals is exact", types.Filter{Type: types.FilterTypeEquals, Field: aws.String("instanceType"), Value: aws.String("M6I.LARGE")}, nil},
		{"contains", types.Filter{Type: types.FilterTypeContains, Field: aws.String("instanceType"), Value: aws.String("m6i")}, []string{"m6i.large", "m6i.xlarge"}},
		{"any of", types.Filter{Type: types.FilterTypeAnyOf, Field: aws.String("instanceType"), Value: aws.String("t3.nano, c7g.medium")}, []string{"c7g.medium", "t3.nano"}},
		{"none of", types.Filter{Type: types.FilterTypeNoneOf, Field: aws.String("productFamily"), Value: aws.String("Compute Instance")}, []string{"m5.metal"}},
		{"field names ignore case", tm("INSTANCETYPE", "t3.nano"), []string{"t3.nano"}},
		{"unknown field matches nothing", tm("colour", "blue"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := allProducts(t, c, &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"),
				Filters: append(append([]types.Filter{}, base...), tt.filter)})
			var got []string
			for _, d := range parse(t, list) {
				got = append(got, d.Product.Attributes["instanceType"])
			}
			sort.Strings(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("instance types (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetProductsPagination(t *testing.T) {
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: testProducts})
	var pages, total int
	seen := map[string]bool{}
	p := awspricing.NewGetProductsPaginator(c, &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"),
		MaxResults: aws.Int32(3)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if len(out.PriceList) > 3 {
			t.Errorf("page %d has %d documents, want at most 3", pages, len(out.PriceList))
		}
		for _, d := range parse(t, out.PriceList) {
			if seen[d.Product.SKU] {
				t.Errorf("SKU %s on two pages", d.Product.SKU)
			}
			seen[d.Product.SKU] = true
		}
		pages++
		total += len(out.PriceList)
	}
	// Two capacity statuses per type, twice that for the metal type's two tenancies.
	if want := 2*len(testProducts) + 2; total != want || pages != (want+2)/3 {
		t.Errorf("got %d documents over %d pages, want %d over %d", total, pages, want, (want+2)/3)
	}
}

func TestGetProductsErrors(t *testing.T) {
	host := account.NewMemoryHost()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	host.Clock = func() time.Time { return now }
	c := start(t, host, pricing.Options{Products: testProducts})
	first, err := c.GetProducts(context.Background(), &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(1)})
	if err != nil || first.NextToken == nil {
		t.Fatalf("first page: %v, token %v", err, first)
	}
	ec2 := aws.String("AmazonEC2")
	tests := []struct {
		name  string
		in    *awspricing.GetProductsInput
		later time.Duration
		want  string
	}{
		{"max results zero", &awspricing.GetProductsInput{ServiceCode: ec2, MaxResults: aws.Int32(0)}, 0, "InvalidParameterException"},
		{"max results over 100", &awspricing.GetProductsInput{ServiceCode: ec2, MaxResults: aws.Int32(101)}, 0, "InvalidParameterException"},
		{"bad filter type", &awspricing.GetProductsInput{ServiceCode: ec2, Filters: []types.Filter{{Type: "FUZZY", Field: aws.String("a"), Value: aws.String("b")}}}, 0, "InvalidParameterException"},
		{"empty filter value", &awspricing.GetProductsInput{ServiceCode: ec2, Filters: []types.Filter{tm("tenancy", "")}}, 0, "InvalidParameterException"},
		{"bad format version", &awspricing.GetProductsInput{ServiceCode: ec2, FormatVersion: aws.String("aws_v2")}, 0, "InvalidParameterException"},
		{"unknown service", &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonS4")}, 0, "NotFoundException"},
		{"garbage token", &awspricing.GetProductsInput{ServiceCode: ec2, NextToken: aws.String("!!")}, 0, "InvalidNextTokenException"},
		{"token of another query", &awspricing.GetProductsInput{ServiceCode: ec2, NextToken: first.NextToken, Filters: []types.Filter{tm("tenancy", "Shared")}}, 0, "InvalidNextTokenException"},
		{"token still fresh", &awspricing.GetProductsInput{ServiceCode: ec2, NextToken: first.NextToken, MaxResults: aws.Int32(1)}, 59 * time.Minute, ""},
		{"expired token", &awspricing.GetProductsInput{ServiceCode: ec2, NextToken: first.NextToken}, 2 * time.Hour, "ExpiredNextTokenException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).Add(tt.later)
			_, err := c.GetProducts(context.Background(), tt.in)
			if got := accounttest.APIErrorCode(err); got != tt.want {
				t.Errorf("error code = %q, want %q (%v)", got, tt.want, err)
			}
		})
	}
}

func TestPolicyDenial(t *testing.T) {
	host := account.NewMemoryHost()
	var asked []string
	host.Policy = func(caller, action, resource string) string {
		asked = append(asked, caller+" "+action+" "+resource)
		return "explicit deny"
	}
	c := start(t, host, pricing.Options{Products: testProducts})
	tests := []struct {
		name, action string
		call         func() error
	}{
		{"GetProducts", "pricing:GetProducts", func() error {
			_, err := c.GetProducts(context.Background(), &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2")})
			return err
		}},
		{"DescribeServices", "pricing:DescribeServices", func() error {
			_, err := c.DescribeServices(context.Background(), &awspricing.DescribeServicesInput{})
			return err
		}},
		{"GetAttributeValues", "pricing:GetAttributeValues", func() error {
			_, err := c.GetAttributeValues(context.Background(), &awspricing.GetAttributeValuesInput{ServiceCode: aws.String("AmazonEC2"), AttributeName: aws.String("tenancy")})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			err := tt.call()
			if got := accounttest.APIErrorCode(err); got != "AccessDeniedException" {
				t.Errorf("error code = %q, want AccessDeniedException", got)
			}
			if diff := cmp.Diff([]string{"AKIDLAB " + tt.action + " *"}, asked); diff != "" {
				t.Errorf("policy questions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeServicesAndAttributeValues(t *testing.T) {
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: testProducts})
	ctx := context.Background()
	ds, err := c.DescribeServices(ctx, &awspricing.DescribeServicesInput{ServiceCode: aws.String("AmazonEC2")})
	if err != nil {
		t.Fatalf("DescribeServices: %v", err)
	}
	if len(ds.Services) != 1 || aws.ToString(ds.Services[0].ServiceCode) != "AmazonEC2" {
		t.Fatalf("services = %+v", ds.Services)
	}
	names := map[string]bool{}
	for _, n := range ds.Services[0].AttributeNames {
		names[n] = true
	}
	for _, n := range []string{"instanceType", "regionCode", "capacitystatus", "tenancy", "vcpu", "memory"} {
		if !names[n] {
			t.Errorf("AttributeNames lacks %s", n)
		}
	}
	if _, err := c.DescribeServices(ctx, &awspricing.DescribeServicesInput{ServiceCode: aws.String("AmazonS4")}); accounttest.APIErrorCode(err) != "NotFoundException" {
		t.Errorf("unknown service: %v, want NotFoundException", err)
	}
	tests := []struct {
		name, attr string
		max        int32
		want       []string
		code       string
	}{
		{"tenancy", "tenancy", 0, []string{"Dedicated", "Shared"}, ""},
		{"instance types in pages of two", "instanceType", 2, []string{"c7g.medium", "m5.metal", "m6i.large", "m6i.xlarge", "t3.nano"}, ""},
		{"unknown attribute", "colour", 0, nil, "NotFoundException"},
		{"max results over 100", "tenancy", 101, nil, "InvalidParameterException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &awspricing.GetAttributeValuesInput{ServiceCode: aws.String("AmazonEC2"), AttributeName: aws.String(tt.attr)}
			if tt.max > 0 {
				in.MaxResults = aws.Int32(tt.max)
			}
			var got []string
			p := awspricing.NewGetAttributeValuesPaginator(c, in)
			for p.HasMorePages() {
				out, err := p.NextPage(ctx)
				if code := accounttest.APIErrorCode(err); code != tt.code {
					t.Fatalf("error code = %q, want %q (%v)", code, tt.code, err)
				}
				if err != nil {
					return
				}
				if tt.max > 0 && len(out.AttributeValues) > int(tt.max) {
					t.Errorf("page of %d, want at most %d", len(out.AttributeValues), tt.max)
				}
				for _, v := range out.AttributeValues {
					got = append(got, aws.ToString(v.Value))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRestart: nothing is durable, but a token handed out before a restart still pages on.
func TestRestart(t *testing.T) {
	host := account.NewMemoryHost()
	in := &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(4)}
	first, err := start(t, host, pricing.Options{Products: testProducts}).GetProducts(context.Background(), in)
	if err != nil {
		t.Fatalf("first page: %v", err)
	}
	again := start(t, host, pricing.Options{Products: testProducts})
	in.NextToken = first.NextToken
	second, err := again.GetProducts(context.Background(), in)
	if err != nil {
		t.Fatalf("second page after restart: %v", err)
	}
	firstSKUs := map[string]bool{}
	for _, d := range parse(t, first.PriceList) {
		firstSKUs[d.Product.SKU] = true
	}
	for _, d := range parse(t, second.PriceList) {
		if firstSKUs[d.Product.SKU] {
			t.Errorf("SKU %s again after restart: SKUs or order are not stable", d.Product.SKU)
		}
	}
	if len(second.PriceList) != 4 {
		t.Errorf("second page has %d documents, want 4", len(second.PriceList))
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name   string
		region string
		prods  []pricing.Product
	}{
		{"unknown region", "xx-nowhere-1", testProducts},
		{"no price", "eu-west-2", []pricing.Product{{InstanceType: "m6i.large", VCPU: 2, MemoryGiB: 8}}},
		{"twice", "eu-west-2", []pricing.Product{testProducts[0], testProducts[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := account.NewMemoryHost()
			host.RegionName = tt.region
			if _, err := pricing.New(host, pricing.Options{Products: tt.prods}); err == nil {
				t.Errorf("New accepted it")
			}
		})
	}
}

func TestUSEast1UsageType(t *testing.T) {
	host := account.NewMemoryHost()
	host.RegionName = "us-east-1"
	c := start(t, host, pricing.Options{Products: testProducts[:1]})
	out, err := c.GetProducts(context.Background(), &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"),
		Filters: karpenterFilters("us-east-1", "Shared", "Compute Instance")})
	if err != nil {
		t.Fatalf("GetProducts: %v", err)
	}
	docs := parse(t, out.PriceList)
	if len(docs) != 1 {
		t.Fatalf("got %d documents", len(docs))
	}
	got := []string{docs[0].Product.Attributes["usagetype"], docs[0].Product.Attributes["location"]}
	if diff := cmp.Diff([]string{"BoxUsage:m6i.large", "US East (N. Virginia)"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
