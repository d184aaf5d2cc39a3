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

// TestIntegrationLifecycle follows one node the way Karpenter drives it: discovery,
// launch template, CreateFleet, boot, describe, terminate, volumes and ENI going away.
func TestIntegrationLifecycle(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, groups, amd64, _ := e.discover()
	if len(subnets) != 3 || len(groups) != 1 || amd64 == "" {
		t.Fatalf("discovery: %d subnets, groups %v, ami %q; want 3 subnets, 1 group, an AMI", len(subnets), groups, amd64)
	}
	ltID := e.createTemplate("karpenter.k8s.aws/ziba-general", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)

	out, err := e.fleet(e.ec2, "karpenter.k8s.aws/ziba-general", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{
		override("m6i.xlarge", subnets[1]), override("c6i.large", subnets[0]), override("m5.large", subnets[2]),
	}, []ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("ziba-general-abcde")}})
	e.must(err)
	if len(out.Errors) != 0 || len(out.Instances) != 1 || len(out.Instances[0].InstanceIds) != 1 {
		t.Fatalf("CreateFleet: errors %+v, instances %+v", out.Errors, out.Instances)
	}
	fi := out.Instances[0]
	if fi.InstanceType != "c6i.large" || fi.Lifecycle != ec2types.InstanceLifecycleOnDemand {
		t.Errorf("picked %s %s, want the cheapest override c6i.large on-demand", fi.InstanceType, fi.Lifecycle)
	}
	if got := aws.ToString(fi.LaunchTemplateAndOverrides.Overrides.SubnetId); got != aws.ToString(subnets[0].SubnetId) {
		t.Errorf("override subnet %s, want %s", got, aws.ToString(subnets[0].SubnetId))
	}
	id := fi.InstanceIds[0]

	in := e.describe(id)[0]
	if in.State.Name != ec2types.InstanceStateNamePending {
		t.Errorf("state right after launch = %s, want pending", in.State.Name)
	}
	e.clock.Advance(3 * time.Second)
	w := ec2.NewInstanceRunningWaiter(e.ec2, func(o *ec2.InstanceRunningWaiterOptions) {
		o.MinDelay, o.MaxDelay = time.Millisecond, 5*time.Millisecond
	})
	e.must(w.Wait(e.ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}}, 5*time.Second))
	in = e.describe(id)[0]
	tags := tagMap(in.Tags)
	want := map[string]string{"application": "ziba", "environment": "production", "owner": "platform",
		"karpenter.sh/nodepool": "ziba-general", "karpenter.sh/nodeclaim": "ziba-general-abcde",
		// EC2's own: what launched it.
		"aws:ec2launchtemplate:id": ltID, "aws:ec2launchtemplate:version": "1", "aws:ec2:fleet-id": aws.ToString(out.FleetId)}
	if diff := cmp.Diff(want, tags); diff != "" {
		t.Errorf("instance tags (-want +got):\n%s", diff)
	}
	ip := aws.ToString(in.PrivateIpAddress)
	if aws.ToString(in.PrivateDnsName) != "ip-"+dashes(ip)+".eu-west-2.compute.internal" || ip[:6] != "10.0.0" {
		t.Errorf("address %s / %s, want 10.0.0.x in the 2a subnet with its ip- name", ip, aws.ToString(in.PrivateDnsName))
	}
	if in.MetadataOptions.HttpTokens != ec2types.HttpTokensStateRequired || aws.ToInt32(in.MetadataOptions.HttpPutResponseHopLimit) != 1 {
		t.Errorf("metadata options %+v", in.MetadataOptions)
	}
	if in.IamInstanceProfile == nil || aws.ToString(in.IamInstanceProfile.Arn) != "arn:aws:iam::123456789012:instance-profile/KarpenterNodeInstanceProfile-ziba" {
		t.Errorf("instance profile %+v", in.IamInstanceProfile)
	}
	if len(in.NetworkInterfaces) != 1 || len(in.BlockDeviceMappings) != 1 {
		t.Fatalf("ENIs %d, volumes %d; want 1 and 1", len(in.NetworkInterfaces), len(in.BlockDeviceMappings))
	}
	volID := aws.ToString(in.BlockDeviceMappings[0].Ebs.VolumeId)
	eniID := aws.ToString(in.NetworkInterfaces[0].NetworkInterfaceId)
	vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}})
	e.must(err)
	v := vols.Volumes[0]
	if aws.ToInt32(v.Size) != 80 || v.VolumeType != ec2types.VolumeTypeGp3 || !aws.ToBool(v.Encrypted) ||
		v.State != ec2types.VolumeStateInUse || !aws.ToBool(v.Attachments[0].DeleteOnTermination) {
		t.Errorf("volume %+v", v)
	}
	if tagMap(v.Tags)["application"] != "ziba" {
		t.Errorf("volume tags %v", tagMap(v.Tags))
	}

	term, err := e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	e.must(err)
	if term.TerminatingInstances[0].CurrentState.Name != ec2types.InstanceStateNameShuttingDown {
		t.Errorf("terminate answered %s", term.TerminatingInstances[0].CurrentState.Name)
	}
	e.clock.Advance(2 * time.Second)
	tw := ec2.NewInstanceTerminatedWaiter(e.ec2, func(o *ec2.InstanceTerminatedWaiterOptions) {
		o.MinDelay, o.MaxDelay = time.Millisecond, 5*time.Millisecond
	})
	e.must(tw.Wait(e.ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}}, 5*time.Second))
	if _, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volID}}); errCode(err) != "InvalidVolume.NotFound" {
		t.Errorf("volume after termination: %v, want InvalidVolume.NotFound", err)
	}
	if _, err := e.ec2.DescribeNetworkInterfaces(e.ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{eniID}}); errCode(err) != "InvalidNetworkInterfaceID.NotFound" {
		t.Errorf("ENI after termination: %v", err)
	}
	// Terminated instances stay describable for the retention period, then vanish.
	e.clock.Advance(30 * time.Minute)
	if got := e.describe(id); len(got) != 1 || got[0].State.Name != ec2types.InstanceStateNameTerminated {
		t.Errorf("terminated instance after 30m: %+v", got)
	}
	e.clock.Advance(31 * time.Minute)
	if _, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}}); errCode(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("after retention: %v, want InvalidInstanceID.NotFound", err)
	}
}

func dashes(ip string) string {
	b := []byte(ip)
	for i := range b {
		if b[i] == '.' {
			b[i] = '-'
		}
	}
	return string(b)
}
