package fakeec2_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/trail"
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
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{{RequireIMDSv2: true}}}))
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
		mut, err := e.admin.Audit(e.ctx, trail.AuditQuery{MutatingOnly: true})
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

// TestIntegrationAuditQuery filters the trail by time, caller, action, resource and error.
func TestIntegrationAuditQuery(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	first := e.launch("m5.large", amd64, subnets[0], 1, nil)[0]
	e.clock.Advance(time.Minute)
	since := e.clock.Now()
	other := newClient(t, e.url, "AKIAOTHER")
	out, err := other.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	e.must(err)
	second := aws.ToString(out.Instances[0].InstanceId)
	_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	if errCode(err) != "InvalidInstanceID.NotFound" {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    trail.AuditQuery
		want []string // action:caller
	}{
		{"since", trail.AuditQuery{Since: since, MutatingOnly: true}, []string{"RunInstances:AKIAOTHER", "TerminateInstances:" + karpenterKey}},
		{"caller", trail.AuditQuery{Caller: "AKIAOTHER"}, []string{"RunInstances:AKIAOTHER"}},
		{"resource", trail.AuditQuery{ResourceID: first}, []string{"RunInstances:" + karpenterKey}},
		{"resource created by other", trail.AuditQuery{ResourceID: second}, []string{"RunInstances:AKIAOTHER"}},
		{"error code", trail.AuditQuery{ErrorCode: "InvalidInstanceID.NotFound"}, []string{"TerminateInstances:" + karpenterKey}},
		{"until", trail.AuditQuery{Until: since.Add(-time.Second), Action: "RunInstances"}, []string{"RunInstances:" + karpenterKey}},
		{"limit keeps the newest", trail.AuditQuery{Action: "RunInstances", Limit: 1}, []string{"RunInstances:AKIAOTHER"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := e.admin.Audit(e.ctx, tt.q)
			e.must(err)
			var got []string
			for _, x := range ev {
				got = append(got, x.Action+":"+x.Caller)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	ev, err := e.admin.Audit(e.ctx, trail.AuditQuery{ResourceID: second})
	e.must(err)
	if p := ev[0].Parameters; p["InstanceType"] != "m5.large" || p["MinCount"] != "1" || ev[0].RequestID == "" || !ev[0].Time.Equal(since) {
		t.Errorf("recorded event %+v", ev[0])
	}
}
