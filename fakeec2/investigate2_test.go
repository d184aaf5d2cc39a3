package fakeec2_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
)

func (e *env) freeIPs(subnetID string) int32 {
	e.t.Helper()
	out, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{subnetID}})
	e.must(err)
	return aws.ToInt32(out.Subnets[0].AvailableIpAddressCount)
}

// TestInvestigateENIs creates, attaches, detaches and deletes an interface; a detached
// one keeps its address; the leak-enis fault leaves a terminated instance's behind.
func TestInvestigateENIs(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, _, amd64, _ := e.discover()
	sn := aws.ToString(subnets[0].SubnetId)
	inA := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	inB := e.launch("m6i.large", amd64, subnets[1], 1, nil)[0]
	e.clock.Advance(3 * time.Second)
	free := e.freeIPs(sn)
	cn, err := e.ec2.CreateNetworkInterface(e.ctx, &ec2.CreateNetworkInterfaceInput{SubnetId: &sn, Description: aws.String("aws-K8S-i-test")})
	e.must(err)
	eni := aws.ToString(cn.NetworkInterface.NetworkInterfaceId)
	if cn.NetworkInterface.Status != "available" || e.freeIPs(sn) != free-1 {
		t.Errorf("created: %s, free %d -> %d", cn.NetworkInterface.Status, free, e.freeIPs(sn))
	}
	attach := func(inst string, idx int32) (string, error) {
		out, err := e.ec2.AttachNetworkInterface(e.ctx, &ec2.AttachNetworkInterfaceInput{NetworkInterfaceId: &eni, InstanceId: &inst, DeviceIndex: aws.Int32(idx)}, noRetry)
		if err != nil {
			return "", err
		}
		return aws.ToString(out.AttachmentId), nil
	}
	if _, err := attach(inB, 1); errCode(err) != "InvalidParameterCombination" {
		t.Errorf("attach across zones: %v", err)
	}
	if _, err := attach(inA, 0); errCode(err) != "InvalidParameterValue" {
		t.Errorf("attach at the primary's index: %v", err)
	}
	att, err := attach(inA, 1)
	e.must(err)
	if _, err := attach(inA, 2); errCode(err) != "InvalidNetworkInterface.InUse" {
		t.Errorf("attach twice: %v", err)
	}
	if got := len(e.describe(inA)[0].NetworkInterfaces); got != 2 {
		t.Errorf("instance interfaces: %d, want 2", got)
	}
	if _, err := e.ec2.DeleteNetworkInterface(e.ctx, &ec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: &eni}, noRetry); errCode(err) != "InvalidNetworkInterface.InUse" {
		t.Errorf("delete attached: %v", err)
	}
	primary := e.describe(inA)[0].NetworkInterfaces[0].Attachment.AttachmentId
	if _, err := e.ec2.DetachNetworkInterface(e.ctx, &ec2.DetachNetworkInterfaceInput{AttachmentId: primary}, noRetry); errCode(err) != "OperationNotPermitted" {
		t.Errorf("detach primary: %v", err)
	}
	e.restart()
	_, err = e.ec2.DetachNetworkInterface(e.ctx, &ec2.DetachNetworkInterfaceInput{AttachmentId: &att})
	e.must(err)
	if _, err := e.ec2.DetachNetworkInterface(e.ctx, &ec2.DetachNetworkInterfaceInput{AttachmentId: &att}, noRetry); errCode(err) != "InvalidAttachmentID.NotFound" {
		t.Errorf("detach twice: %v", err)
	}
	if got := e.freeIPs(sn); got != free-1 {
		t.Errorf("a detached interface gave back its address: free %d, want %d", got, free-1)
	}
	_, err = e.ec2.DeleteNetworkInterface(e.ctx, &ec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: &eni})
	e.must(err)
	if got := e.freeIPs(sn); got != free {
		t.Errorf("after delete: free %d, want %d", got, free)
	}
	for _, id := range []string{eni, "eni-bad"} {
		_, err := e.ec2.DeleteNetworkInterface(e.ctx, &ec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: aws.String(id)}, noRetry)
		if want := map[bool]string{true: "InvalidNetworkInterfaceID.NotFound", false: "InvalidNetworkInterfaceID.Malformed"}[id == eni]; errCode(err) != want {
			t.Errorf("delete %s: got %q, want %q", id, errCode(err), want)
		}
	}

	// The CNI's interfaces are DeleteOnTermination: gone with the instance, unless leaked.
	for _, leak := range []bool{false, true} {
		if leak {
			_, err := e.srv.SetFault(fakeec2.Fault{Kind: fakeec2.FaultLeakENIs})
			e.must(err)
		}
		inst := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
		e.clock.Advance(3 * time.Second)
		cn, err := e.ec2.CreateNetworkInterface(e.ctx, &ec2.CreateNetworkInterfaceInput{SubnetId: &sn})
		e.must(err)
		id := cn.NetworkInterface.NetworkInterfaceId
		ao, err := e.ec2.AttachNetworkInterface(e.ctx, &ec2.AttachNetworkInterfaceInput{NetworkInterfaceId: id, InstanceId: &inst, DeviceIndex: aws.Int32(1)})
		e.must(err)
		_, err = e.ec2.ModifyNetworkInterfaceAttribute(e.ctx, &ec2.ModifyNetworkInterfaceAttributeInput{NetworkInterfaceId: id,
			Attachment: &ec2types.NetworkInterfaceAttachmentChanges{AttachmentId: ao.AttachmentId, DeleteOnTermination: aws.Bool(true)}})
		e.must(err)
		_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{inst}})
		e.must(err)
		e.clock.Advance(3 * time.Second)
		out, err := e.ec2.DescribeNetworkInterfaces(e.ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{f("network-interface-id", *id)}})
		e.must(err)
		if leak && (len(out.NetworkInterfaces) != 1 || out.NetworkInterfaces[0].Status != "available") {
			t.Errorf("leak-enis: %+v", out.NetworkInterfaces)
		}
		if !leak && len(out.NetworkInterfaces) != 0 {
			t.Errorf("a DeleteOnTermination interface outlived its instance: %+v", out.NetworkInterfaces)
		}
	}
}

// TestInvestigateFleets follows a fleet ID: DescribeFleets, DescribeFleetInstances,
// DeleteFleets; and each tag specification lands only on its resource type.
func TestInvestigateFleets(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("ziba-general", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	out, err := e.ec2.CreateFleet(e.ctx, &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String("ziba-general"), Version: aws.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[0])}}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: "on-demand"},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{{Key: aws.String("only-instance"), Value: aws.String("x")}}},
			{ResourceType: ec2types.ResourceTypeFleet, Tags: []ec2types.Tag{{Key: aws.String("only-fleet"), Value: aws.String("y")}}},
		}})
	e.must(err)
	fid := aws.ToString(out.FleetId)
	iid := out.Instances[0].InstanceIds[0]
	in := e.describe(iid)[0]
	if tm := tagMap(in.Tags); tm["only-instance"] != "x" || tm["application"] != "ziba" || tm["only-fleet"] != "" {
		t.Errorf("instance tags: %v", tm)
	}
	vol := e.volume(aws.ToString(in.BlockDeviceMappings[0].Ebs.VolumeId))
	if tm := tagMap(vol.Tags); tm["only-instance"] != "" || tm["application"] != "ziba" || tm["karpenter.sh/nodepool"] != "ziba-general" {
		t.Errorf("volume tags (the template's volume spec, not the request's instance spec): %v", tm)
	}
	e.clock.Advance(3 * time.Second)
	e.restart()

	df, err := e.ec2.DescribeFleets(e.ctx, &ec2.DescribeFleetsInput{FleetIds: []string{fid}})
	e.must(err)
	fl := df.Fleets[0]
	if fl.FleetState != "active" || fl.Type != "instant" || len(fl.Instances) != 1 || fl.Instances[0].InstanceIds[0] != iid ||
		tagMap(fl.Tags)["only-fleet"] != "y" || aws.ToInt32(fl.TargetCapacitySpecification.TotalTargetCapacity) != 1 {
		t.Errorf("DescribeFleets: %+v", fl)
	}
	if _, err := e.ec2.DescribeFleets(e.ctx, &ec2.DescribeFleetsInput{FleetIds: []string{"fleet-00000000-0000-0000-0000-000000000000"}}, noRetry); errCode(err) != "InvalidFleetId.NotFound" {
		t.Errorf("unknown fleet: %v", err)
	}
	if _, err := e.ec2.DescribeFleetInstances(e.ctx, &ec2.DescribeFleetInstancesInput{FleetId: &fid}, noRetry); errCode(err) != "InvalidParameterValue" {
		t.Errorf("DescribeFleetInstances of an instant fleet: %v", err)
	}
	keep, err := e.ec2.DeleteFleets(e.ctx, &ec2.DeleteFleetsInput{FleetIds: []string{fid}, TerminateInstances: aws.Bool(false)})
	e.must(err)
	if len(keep.UnsuccessfulFleetDeletions) != 1 || len(keep.SuccessfulFleetDeletions) != 0 {
		t.Errorf("DeleteFleets without terminating an instant fleet: %+v", keep)
	}
	del, err := e.ec2.DeleteFleets(e.ctx, &ec2.DeleteFleetsInput{FleetIds: []string{fid, "fleet-00000000-0000-0000-0000-000000000000"}, TerminateInstances: aws.Bool(true)})
	e.must(err)
	if len(del.SuccessfulFleetDeletions) != 1 || del.SuccessfulFleetDeletions[0].CurrentFleetState != "deleted_terminating" ||
		len(del.UnsuccessfulFleetDeletions) != 1 || del.UnsuccessfulFleetDeletions[0].Error.Code != "fleetIdDoesNotExist" {
		t.Errorf("DeleteFleets: %+v", del)
	}
	if s := e.describe(iid)[0].State.Name; s != "shutting-down" {
		t.Errorf("the fleet's instance: %s", s)
	}
	e.clock.Advance(3 * time.Second)
	df, err = e.ec2.DescribeFleets(e.ctx, &ec2.DescribeFleetsInput{FleetIds: []string{fid}})
	e.must(err)
	if df.Fleets[0].FleetState != "deleted" {
		t.Errorf("after termination: %s", df.Fleets[0].FleetState)
	}
}

// TestInvestigateAccount: the account's regions, attributes, key pairs, addresses and
// route tables, and the not-found errors for named IDs.
func TestInvestigateAccount(t *testing.T) {
	e := newEnv(t)
	rg, err := e.ec2.DescribeRegions(e.ctx, &ec2.DescribeRegionsInput{})
	e.must(err)
	found := false
	for _, r := range rg.Regions {
		found = found || aws.ToString(r.RegionName) == "eu-west-2" && aws.ToString(r.OptInStatus) == "opt-in-not-required"
	}
	if !found {
		t.Errorf("eu-west-2 missing: %+v", rg.Regions)
	}
	aa, err := e.ec2.DescribeAccountAttributes(e.ctx, &ec2.DescribeAccountAttributesInput{})
	e.must(err)
	attrs := map[string]string{}
	for _, a := range aa.AccountAttributes {
		attrs[aws.ToString(a.AttributeName)] = aws.ToString(a.AttributeValues[0].AttributeValue)
	}
	vpcs, err := e.ec2.DescribeVpcs(e.ctx, &ec2.DescribeVpcsInput{})
	e.must(err)
	vpc := aws.ToString(vpcs.Vpcs[0].VpcId)
	if attrs["supported-platforms"] != "VPC" || attrs["default-vpc"] != vpc || attrs["max-instances"] == "" {
		t.Errorf("account attributes: %v", attrs)
	}
	kp, err := e.ec2.DescribeKeyPairs(e.ctx, &ec2.DescribeKeyPairsInput{})
	e.must(err)
	ad, err := e.ec2.DescribeAddresses(e.ctx, &ec2.DescribeAddressesInput{})
	e.must(err)
	if len(kp.KeyPairs) != 0 || len(ad.Addresses) != 0 {
		t.Errorf("key pairs %v, addresses %v", kp.KeyPairs, ad.Addresses)
	}
	rt, err := e.ec2.DescribeRouteTables(e.ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{f("vpc-id", vpc), f("association.main", "true")}})
	e.must(err)
	if len(rt.RouteTables) != 1 || aws.ToString(rt.RouteTables[0].Routes[0].GatewayId) != "local" ||
		aws.ToString(rt.RouteTables[0].Routes[0].DestinationCidrBlock) != "10.0.0.0/16" || !aws.ToBool(rt.RouteTables[0].Associations[0].Main) {
		t.Errorf("route tables: %+v", rt.RouteTables)
	}
	errs := []struct {
		name string
		do   func() error
		code string
	}{
		{"region", func() error {
			_, err := e.ec2.DescribeRegions(e.ctx, &ec2.DescribeRegionsInput{RegionNames: []string{"mars-1"}}, noRetry)
			return err
		}, "InvalidParameterValue"},
		{"key pair", func() error {
			_, err := e.ec2.DescribeKeyPairs(e.ctx, &ec2.DescribeKeyPairsInput{KeyNames: []string{"mine"}}, noRetry)
			return err
		}, "InvalidKeyPair.NotFound"},
		{"address", func() error {
			_, err := e.ec2.DescribeAddresses(e.ctx, &ec2.DescribeAddressesInput{AllocationIds: []string{"eipalloc-0123456789abcdef0"}}, noRetry)
			return err
		}, "InvalidAllocationID.NotFound"},
		{"public ip", func() error {
			_, err := e.ec2.DescribeAddresses(e.ctx, &ec2.DescribeAddressesInput{PublicIps: []string{"203.0.113.7"}}, noRetry)
			return err
		}, "InvalidAddress.NotFound"},
		{"route table", func() error {
			_, err := e.ec2.DescribeRouteTables(e.ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{"rtb-0123456789abcdef0"}}, noRetry)
			return err
		}, "InvalidRouteTableID.NotFound"},
		{"bad filter", func() error {
			_, err := e.ec2.DescribeKeyPairs(e.ctx, &ec2.DescribeKeyPairsInput{Filters: []ec2types.Filter{f("colour", "red")}}, noRetry)
			return err
		}, "InvalidParameterValue"},
		{"instance type", func() error {
			_, err := e.ec2.DescribeInstanceTypes(e.ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m9z.huge"}}, noRetry)
			return err
		}, "InvalidInstanceType"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			if got := errCode(tc.do()); got != tc.code {
				t.Errorf("got %q, want %q", got, tc.code)
			}
		})
	}
}
