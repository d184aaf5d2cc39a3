package fakeec2_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestIntegrationSpotInterruption: EC2 reclaims a spot instance; DescribeInstances, volumes,
// interfaces, billing and the audit trail show it as AWS would, and an on-demand or unknown
// instance is refused without changing anything.
func TestIntegrationSpotInterruption(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("spot", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	spotOut, err := e.fleet(e.ec2, "spot", "spot", []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[0])}, seedTags)
	e.must(err)
	odOut, err := e.fleet(e.ec2, "spot", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[1])}, seedTags)
	e.must(err)
	spot, od := spotOut.Instances[0].InstanceIds[0], odOut.Instances[0].InstanceIds[0]
	e.clock.Advance(time.Hour)

	for _, tc := range []struct {
		name string
		ids  []string
		want string
	}{
		{name: "on-demand", ids: []string{spot, od}, want: "only spot instances are interrupted"},
		{name: "unknown", ids: []string{"i-0000000000000dead"}, want: "does not exist"},
		{name: "none", want: "no instance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.admin.InterruptSpot(e.ctx, 0, tc.ids...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("InterruptSpot(%v) = %v, want an error containing %q", tc.ids, err, tc.want)
			}
			if st := e.describe(spot)[0].State.Name; st != ec2types.InstanceStateNameRunning {
				t.Errorf("after a refused interruption the spot instance is %s", st)
			}
		})
	}

	interruptedAt := e.clock.Now()
	events, err := e.admin.InterruptSpot(e.ctx, 0, spot)
	e.must(err)
	if len(events) != 1 || events[0].Action != fakeec2.ActionBidEvicted || events[0].Caller != fakeec2.AWSServiceCaller ||
		!cmp.Equal(events[0].Terminated, []string{spot}) || events[0].Seq == 0 {
		t.Errorf("interruption events %+v", events)
	}
	in := e.describe(spot)[0]
	if in.State.Name != ec2types.InstanceStateNameShuttingDown || aws.ToString(in.StateReason.Code) != fakeec2.StateReasonSpotTermination ||
		!strings.HasPrefix(aws.ToString(in.StateTransitionReason), "Service initiated") {
		t.Errorf("interrupted instance: state %s, reason %s %q, transition %q", in.State.Name,
			aws.ToString(in.StateReason.Code), aws.ToString(in.StateReason.Message), aws.ToString(in.StateTransitionReason))
	}
	e.clock.Advance(time.Minute)
	e.restart() // the interruption is durable
	in = e.describe(spot)[0]
	if in.State.Name != ec2types.InstanceStateNameTerminated || aws.ToString(in.StateReason.Code) != fakeec2.StateReasonSpotTermination {
		t.Errorf("a minute later: state %s, reason %s", in.State.Name, aws.ToString(in.StateReason.Code))
	}
	if st := e.describe(od)[0].State.Name; st != ec2types.InstanceStateNameRunning {
		t.Errorf("the on-demand instance is %s", st)
	}
	vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{spot}}}})
	e.must(err)
	enis, err := e.ec2.DescribeNetworkInterfaces(e.ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{spot}}}})
	e.must(err)
	if len(vols.Volumes)+len(enis.NetworkInterfaces) != 0 {
		t.Errorf("the reclaimed instance left %d volumes and %d interfaces", len(vols.Volumes), len(enis.NetworkInterfaces))
	}
	bill, err := e.admin.Billing(e.ctx)
	e.must(err)
	for _, le := range bill.Entries {
		if le.ResourceID == spot && (le.Stopped == nil || !le.Stopped.Equal(interruptedAt)) {
			t.Errorf("billing of the reclaimed instance stopped at %v, want %v", le.Stopped, interruptedAt)
		}
	}
	audit, err := e.admin.Audit(e.ctx, trail.AuditQuery{Action: fakeec2.ActionBidEvicted})
	e.must(err)
	if len(audit) != 1 || audit[0].Caller != fakeec2.AWSServiceCaller || audit[0].Parameters["InstanceId.1"] != spot {
		t.Errorf("audit trail: %+v", audit)
	}
	if _, err := e.admin.InterruptSpot(e.ctx, 0, spot); err == nil || !strings.Contains(err.Error(), "not pending or running") {
		t.Errorf("interrupting a terminated instance: %v", err)
	}
}

// TestIntegrationPublishRelease: a new AL2023 release is the newest image of every
// architecture and Kubernetes version, survives a restart, cannot be published twice, and
// is gone after a reset while the seeded releases stay.
func TestIntegrationPublishRelease(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	_, _, before, _ := e.discover()
	names := func() []string {
		out, err := e.ec2.DescribeImages(e.ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{
			{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-*-v20261202"}}}})
		e.must(err)
		var n []string
		for _, im := range out.Images {
			n = append(n, aws.ToString(im.Name))
		}
		return n
	}
	if _, err := e.admin.PublishRelease(e.ctx, "2026-12-02"); err == nil {
		t.Error("publishing a malformed release succeeded")
	}
	images, err := e.admin.PublishRelease(e.ctx, "20261202")
	e.must(err)
	var got []string
	for _, im := range images {
		got = append(got, im.Name)
		if !im.CreationDate.After(t0.Add(-time.Second)) {
			t.Errorf("%s created %s, want now", im.Name, im.CreationDate)
		}
	}
	want := []string{
		"amazon-eks-node-al2023-x86_64-standard-1.36-v20261202", "amazon-eks-node-al2023-arm64-standard-1.36-v20261202",
		"amazon-eks-node-al2023-x86_64-nvidia-1.36-v20261202", "amazon-eks-node-al2023-arm64-nvidia-1.36-v20261202",
		"amazon-eks-node-al2023-x86_64-standard-1.37-v20261202", "amazon-eks-node-al2023-arm64-standard-1.37-v20261202",
		"amazon-eks-node-al2023-x86_64-nvidia-1.37-v20261202", "amazon-eks-node-al2023-arm64-nvidia-1.37-v20261202",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	_, _, after, _ := e.discover()
	if after == before || after != images[4].ID {
		t.Errorf("newest 1.37 x86_64 image: %s before, %s after, want the published %s", before, after, images[4].ID)
	}
	if _, err := e.admin.PublishRelease(e.ctx, "20261202"); err == nil || !strings.Contains(err.Error(), "already published") {
		t.Errorf("publishing twice: %v", err)
	}
	e.restart()
	if n := len(names()); n != 8 {
		t.Errorf("after restart %d published images, want 8", n)
	}
	next, err := e.admin.PublishRelease(e.ctx, "")
	e.must(err)
	if !strings.HasSuffix(next[0].Name, "-v20261203") {
		t.Errorf("the next automatic release is %s, want the day after the newest (v20261203)", next[0].Name)
	}

	e.must(e.admin.Reset(e.ctx))
	e.restart()
	if n := names(); len(n) != 0 {
		t.Errorf("after reset the published release remains: %v", n)
	}
	if _, _, latest, _ := e.discover(); latest != before {
		t.Errorf("after reset the newest image is %s, want the seeded %s", latest, before)
	}
}
