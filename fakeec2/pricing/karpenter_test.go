//go:build karpenter

// This test runs Karpenter's own pricing provider against the server. Its module graph
// needs go.sum entries the repo's go.sum lacks (arczonalshift, timestreamwrite,
// endpoint-discovery), so it is behind a tag and run with an alternate mod file:
//
//	cp go.mod /tmp/karpmod/go.mod; cp go.sum /tmp/karpmod/go.sum
//	go test -mod=mod -modfile=/tmp/karpmod/go.mod -tags karpenter -run Karpenter ./fakeec2/pricing/
package pricing_test

import (
	"context"
	"testing"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	karpricing "github.com/aws/karpenter-provider-aws/pkg/providers/pricing"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/pricing"
)

func TestKarpenterPricingProvider(t *testing.T) {
	// Odd prices, so none can come from Karpenter's built-in static table.
	prods := []pricing.Product{
		{InstanceType: "m6i.large", VCPU: 2, MemoryGiB: 8, OnDemandUSDPerHour: 0.1234567},
		{InstanceType: "c7g.xlarge", VCPU: 4, MemoryGiB: 8, OnDemandUSDPerHour: 0.17171717},
		{InstanceType: "t3.micro", VCPU: 2, MemoryGiB: 1, OnDemandUSDPerHour: 0.0111},
		{InstanceType: "m5.metal", VCPU: 96, MemoryGiB: 384, OnDemandUSDPerHour: 5.4321},
	}
	for i := range 150 { // more than one page of 100
		prods = append(prods, pricing.Product{InstanceType: "x" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + ".large",
			VCPU: 2, MemoryGiB: 16, OnDemandUSDPerHour: 0.5 + float64(i)/997})
	}
	c := start(t, account.NewMemoryHost(), pricing.Options{Products: prods})
	p := karpricing.NewDefaultProvider(c, nil, "eu-west-2", false)
	if err := p.UpdateOnDemandPricing(context.Background()); err != nil {
		t.Fatalf("UpdateOnDemandPricing: %v", err)
	}
	want, got := map[string]float64{}, map[string]float64{}
	for _, pr := range prods {
		want[pr.InstanceType] = pr.OnDemandUSDPerHour
		if price, ok := p.OnDemandPrice(ec2types.InstanceType(pr.InstanceType)); ok {
			got[pr.InstanceType] = price
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prices karpenter learned (-want +got):\n%s", diff)
	}
}
