package fakeec2_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2"
)

// TestIntegrationAdminReset: reset wipes what the lab created and keeps the network and
// images with their IDs, durably.
func TestIntegrationAdminReset(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	h, err := e.admin.Health(e.ctx)
	e.must(err)
	if h.Status != "ok" || h.Region != "eu-west-2" || !h.Persisted || len(h.Zones) != 3 {
		t.Errorf("health %+v", h)
	}
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("reset", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	_, err = e.fleet(e.ec2, "reset", "spot", []ec2types.FleetLaunchTemplateOverridesRequest{override("m5.large", subnets[0])}, nil)
	e.must(err)
	e.must(e.admin.SetPolicy(e.ctx, fakeec2.Policy{Statements: []fakeec2.PolicyStatement{{RequireIMDSv2: true}}}))
	_, err = e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultLeak})
	e.must(err)

	e.must(e.admin.Reset(e.ctx))
	e.clock.Advance(time.Second)
	check := func(when string) {
		if n := len(e.describe()); n != 0 {
			t.Errorf("%s: %d instances", when, n)
		}
		vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{})
		e.must(err)
		enis, err := e.ec2.DescribeNetworkInterfaces(e.ctx, &ec2.DescribeNetworkInterfacesInput{})
		e.must(err)
		lts, err := e.ec2.DescribeLaunchTemplates(e.ctx, &ec2.DescribeLaunchTemplatesInput{})
		e.must(err)
		bill, err := e.admin.Billing(e.ctx)
		e.must(err)
		mut, err := e.admin.Audit(e.ctx, fakeec2.AuditQuery{MutatingOnly: true})
		e.must(err)
		faults, err := e.admin.Faults(e.ctx)
		e.must(err)
		pol, err := e.admin.Policy(e.ctx)
		e.must(err)
		if len(vols.Volumes)+len(enis.NetworkInterfaces)+len(lts.LaunchTemplates)+len(bill.Entries)+len(mut)+len(faults)+len(pol.Statements) != 0 {
			t.Errorf("%s: left volumes %d, ENIs %d, templates %d, ledger %d, mutating audit %d, faults %d, policy %d", when,
				len(vols.Volumes), len(enis.NetworkInterfaces), len(lts.LaunchTemplates), len(bill.Entries), len(mut), len(faults), len(pol.Statements))
		}
		s2, g2, a2, _ := e.discover()
		if diff := cmp.Diff([]string{aws.ToString(subnets[0].SubnetId), groups[0], amd64}, []string{aws.ToString(s2[0].SubnetId), g2[0], a2}); diff != "" {
			t.Errorf("%s: network and images changed (-before +after):\n%s", when, diff)
		}
	}
	check("after reset")
	e.restart()
	check("after reset and restart")
	// The lab goes on: a template of the same name and a launch work again.
	e.createTemplate("reset", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	if _, err := e.fleet(e.ec2, "reset", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{override("m5.large", subnets[1])}, nil); err != nil {
		t.Fatal(err)
	}
}
