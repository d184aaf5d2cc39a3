package pricing_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/pricing"
)

// BenchmarkGetProducts times one full page (100 documents) of karpenter's query over a
// 400-type catalog, through the SDK, and reports the median.
func BenchmarkGetProducts(b *testing.B) {
	var prods []pricing.Product
	for i := range 400 {
		prods = append(prods, pricing.Product{InstanceType: fmt.Sprintf("m%d.%dxlarge", i/8, 1+i%8),
			VCPU: 4, MemoryGiB: 16, OnDemandUSDPerHour: 0.1 + float64(i)/1000})
	}
	c := start(b, account.NewMemoryHost(), pricing.Options{Products: prods})
	in := &awspricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"),
		Filters: karpenterFilters("eu-west-2", "Shared", "Compute Instance"), MaxResults: aws.Int32(100)}
	ctx := context.Background()
	lat := make([]time.Duration, 0, max(b.N, 200))
	b.ResetTimer()
	// A median of one call is a cold call: make bench runs -benchtime 1x, so take a
	// sample of at least 200 whatever b.N is.
	for range max(b.N, 200) {
		t0 := time.Now()
		out, err := c.GetProducts(ctx, in)
		lat = append(lat, time.Since(t0))
		if err != nil || len(out.PriceList) != 100 {
			b.Fatalf("GetProducts: %v (%d documents)", err, len(out.PriceList))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
