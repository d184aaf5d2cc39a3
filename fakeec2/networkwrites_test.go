package fakeec2_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// A security group lives while an interface carries it: created, refused while in use,
// deleted once the interface is gone. A subnet with no interface in it may be deleted.
func TestSecurityGroupAndSubnetLifecycle(t *testing.T) {
	e := newEnv(t)
	subnets, _, _, _ := e.discover()
	subnet := aws.ToString(subnets[0].SubnetId)

	created, err := e.ec2.CreateSecurityGroup(e.ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String("lab-scratch"), Description: aws.String("a group to delete"),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("platform")}}}},
	})
	e.must(err)
	group := aws.ToString(created.GroupId)
	if len(created.Tags) != 1 || aws.ToString(created.SecurityGroupArn) == "" {
		t.Errorf("CreateSecurityGroup answered tags %v, ARN %q", created.Tags, aws.ToString(created.SecurityGroupArn))
	}
	for name, in := range map[string]*ec2.CreateSecurityGroupInput{
		"InvalidGroup.Duplicate": {GroupName: aws.String("lab-scratch"), Description: aws.String("again")},
		"InvalidParameterValue":  {GroupName: aws.String("sg-mine"), Description: aws.String("looks like an ID")},
	} {
		if _, err := e.ec2.CreateSecurityGroup(e.ctx, in); errCode(err) != name {
			t.Errorf("CreateSecurityGroup(%s): %v, want %s", aws.ToString(in.GroupName), err, name)
		}
	}

	eni, err := e.ec2.CreateNetworkInterface(e.ctx, &ec2.CreateNetworkInterfaceInput{SubnetId: aws.String(subnet), Groups: []string{group}})
	e.must(err)
	if _, err := e.ec2.DeleteSecurityGroup(e.ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(group)}); errCode(err) != "DependencyViolation" {
		t.Fatalf("DeleteSecurityGroup of a group an interface carries: %v, want DependencyViolation", err)
	}
	_, err = e.ec2.DeleteNetworkInterface(e.ctx, &ec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: eni.NetworkInterface.NetworkInterfaceId})
	e.must(err)
	deleted, err := e.ec2.DeleteSecurityGroup(e.ctx, &ec2.DeleteSecurityGroupInput{GroupName: aws.String("lab-scratch")})
	e.must(err)
	if aws.ToString(deleted.GroupId) != group {
		t.Errorf("DeleteSecurityGroup by name deleted %q, want %s", aws.ToString(deleted.GroupId), group)
	}
	if _, err := e.ec2.DescribeSecurityGroups(e.ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{group}}); errCode(err) != "InvalidGroup.NotFound" {
		t.Errorf("DescribeSecurityGroups of the deleted group: %v, want InvalidGroup.NotFound", err)
	}
	if _, err := e.ec2.DeleteSecurityGroup(e.ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(group)}); errCode(err) != "InvalidGroup.NotFound" {
		t.Errorf("DeleteSecurityGroup again: %v, want InvalidGroup.NotFound", err)
	}

	_, err = e.ec2.DeleteSubnet(e.ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(subnet)})
	e.must(err)
	if _, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{subnet}}); errCode(err) != "InvalidSubnetID.NotFound" {
		t.Errorf("DescribeSubnets of the deleted subnet: %v, want InvalidSubnetID.NotFound", err)
	}
	if _, err := e.ec2.DeleteSubnet(e.ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(subnet)}); errCode(err) != "InvalidSubnetID.NotFound" {
		t.Errorf("DeleteSubnet again: %v, want InvalidSubnetID.NotFound", err)
	}
}
