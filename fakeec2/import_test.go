package fakeec2_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/billing"
	model "github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

// capturedAccount is a small captured account: one VPC, a subnet, a security group, an
// image and a Karpenter node launched two days before the capture.
func capturedAccount(launched time.Time) fakeec2.Import {
	return fakeec2.Import{
		VPCs:           []model.VPC{{ID: "vpc-0a1b2c3d4e5f60718", CIDR: "10.20.0.0/16"}},
		Subnets:        []model.Subnet{{ID: "subnet-0a1b2c3d4e5f60718", VpcID: "vpc-0a1b2c3d4e5f60718", Zone: "eu-west-2b", CIDR: "10.20.32.0/19", Tags: []model.Tag{{Key: "karpenter.sh/discovery", Value: "prod"}}}},
		SecurityGroups: []model.SecurityGroup{{ID: "sg-0a1b2c3d4e5f60718", Name: "prod-node", VpcID: "vpc-0a1b2c3d4e5f60718"}},
		Images:         []model.Image{{ID: "ami-0a1b2c3d4e5f60718", Name: "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101", Architecture: "x86_64", OwnerID: "602401143452", RootDeviceName: "/dev/xvda", RootSizeGiB: 20, CreationDate: launched.Add(-30 * 24 * time.Hour)}},
		Instances: []fakeec2.ImportedInstance{{ID: "i-0a1b2c3d4e5f60718", InstanceType: "m5.large", Zone: "eu-west-2b", SubnetID: "subnet-0a1b2c3d4e5f60718",
			SecurityGroups: []string{"sg-0a1b2c3d4e5f60718"}, ImageID: "ami-0a1b2c3d4e5f60718", PrivateIP: "10.20.40.7", CapacityType: "spot", LaunchTime: launched,
			Tags: []model.Tag{{Key: "karpenter.sh/nodepool", Value: "default"}, {Key: "karpenter.k8s.aws/ec2nodeclass", Value: "default"}, {Key: "eks:eks-cluster-name", Value: "prod"}}}},
	}
}

// A replay imports a captured account with its real IDs: the real SDK describes the
// instance running, in its zone, with its launch time and tags, and its network and image;
// billing starts at the import, and the audit trail says a replay brought it.
func TestImportBringsACapturedAccount(t *testing.T) {
	e := newEnv(t)
	launched := t0.Add(-48 * time.Hour)
	if err := e.admin.Import(e.ctx, capturedAccount(launched)); err != nil {
		t.Fatal(err)
	}
	out, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:eks:eks-cluster-name"), Values: []string{"prod"}}, {Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Reservations) != 1 || len(out.Reservations[0].Instances) != 1 {
		t.Fatalf("DescribeInstances: %d reservations, want the imported instance", len(out.Reservations))
	}
	in := out.Reservations[0].Instances[0]
	if aws.ToString(in.InstanceId) != "i-0a1b2c3d4e5f60718" || in.InstanceType != "m5.large" || aws.ToString(in.Placement.AvailabilityZone) != "eu-west-2b" ||
		!aws.ToTime(in.LaunchTime).Equal(launched) || in.InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot || aws.ToString(in.PrivateIpAddress) != "10.20.40.7" ||
		aws.ToString(in.SubnetId) != "subnet-0a1b2c3d4e5f60718" || len(in.BlockDeviceMappings) != 1 || len(in.NetworkInterfaces) != 1 {
		t.Errorf("the imported instance as DescribeInstances has it: %+v", in)
	}
	subnets, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"prod"}}}})
	if err != nil || len(subnets.Subnets) != 1 || aws.ToString(subnets.Subnets[0].AvailabilityZoneId) == "" {
		t.Errorf("the imported subnet by its discovery tag: %v %+v", err, subnets)
	}
	images, err := e.ec2.DescribeImages(e.ctx, &ec2.DescribeImagesInput{ImageIds: []string{"ami-0a1b2c3d4e5f60718"}})
	if err != nil || len(images.Images) != 1 {
		t.Errorf("the imported image: %v %+v", err, images)
	}
	if b := e.admin; b != nil {
		bill, err := b.Billing(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var entry *billing.LedgerEntry
		for i := range bill.Entries {
			if bill.Entries[i].ResourceID == "i-0a1b2c3d4e5f60718" {
				entry = &bill.Entries[i]
			}
		}
		if entry == nil || !entry.Started.Equal(t0) {
			t.Errorf("the imported instance's ledger entry starts %v, want at the import (%v)", entry, t0)
		}
	}
	events, err := e.admin.Audit(e.ctx, trail.AuditQuery{Action: "ImportResources"})
	if err != nil || len(events) != 1 || events[0].Caller != "replay" {
		t.Errorf("the import in the audit trail: %v %+v", err, events)
	}
	// Karpenter can act on it as on its own.
	if _, err := e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0a1b2c3d4e5f60718"}}); err != nil {
		t.Errorf("terminating the imported instance: %v", err)
	}
}

// An import is all or nothing: every problem is listed, one line each, and nothing of it
// is imported.
func TestImportRefusesWhatTheAccountCannotTake(t *testing.T) {
	e := newEnv(t)
	imp := capturedAccount(t0)
	imp.Subnets = append(imp.Subnets, model.Subnet{ID: "subnet-0ffffffffffffffff", VpcID: "vpc-0a1b2c3d4e5f60718", Zone: "us-east-1a", CIDR: "10.20.64.0/19"})
	bad := imp.Instances[0]
	bad.ID, bad.InstanceType, bad.PrivateIP, bad.ImageID = "i-0fffffffffffffff", "x9z.huge", "10.99.0.1", "ami-0fffffffffffffff"
	imp.Instances = append(imp.Instances, bad)
	err := e.admin.Import(e.ctx, imp)
	for _, want := range []string{
		`subnet subnet-0ffffffffffffffff is in zone "us-east-1a", which the account's region eu-west-2 does not have`,
		`instance i-0fffffffffffffff: type "x9z.huge" is not in the catalog of eu-west-2`,
		`instance i-0fffffffffffffff: image "ami-0fffffffffffffff" is neither the account's nor imported`,
		`instance i-0fffffffffffffff: private IP "10.99.0.1" is not in its subnet's 10.20.32.0/19`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("import: %v\nwant %q", err, want)
		}
	}
	out, derr := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{})
	if derr != nil || len(out.Reservations) != 0 {
		t.Errorf("a refused import left instances: %v %d", derr, len(out.Reservations))
	}
	if err := e.admin.Import(e.ctx, capturedAccount(t0)); err != nil {
		t.Fatalf("the good part alone: %v", err)
	}
	if err := e.admin.Import(e.ctx, capturedAccount(t0)); err == nil || !strings.Contains(err.Error(), "instance i-0a1b2c3d4e5f60718 exists already") {
		t.Errorf("the same import twice: %v", err)
	}
}

// A replay's import stands in for the captured account where a selector would otherwise
// find the lab account's own: SSM's public parameter names the captured EKS image (an
// alias resolves to it, as it did at capture), and the discovery tag finds the captured
// subnet and security group alone (the lab's own lose it), so nothing drifts.
func TestImportSupersedesTheAccountsOwn(t *testing.T) {
	e := newEnv(t)
	p := ssm.NewFromConfig(awsConfig(t, e.url, karpenterKey))
	const param = "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"
	imp := capturedAccount(t0.Add(-48 * time.Hour))
	imp.Images[0].OwnerID, imp.Images[0].Name = model.EKSImageOwner, "amazon-eks-node-al2023-x86_64-standard-1.37-v20260901"
	imp.Subnets[0].Tags = []model.Tag{{Key: "karpenter.sh/discovery", Value: "ziba-production"}}
	imp.SecurityGroups[0].Tags = []model.Tag{{Key: "karpenter.sh/discovery", Value: "ziba-production"}}
	if err := e.admin.Import(e.ctx, imp); err != nil {
		t.Fatal(err)
	}
	out, err := p.GetParameter(e.ctx, &ssm.GetParameterInput{Name: aws.String(param)})
	if err != nil || aws.ToString(out.Parameter.Value) != "ami-0a1b2c3d4e5f60718" {
		t.Errorf("%s after the import: %v %v, want the captured image (older than the lab's own)", param, err, out)
	}
	discovery := []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"ziba-production"}}}
	subnets, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{Filters: discovery})
	if err != nil || len(subnets.Subnets) != 1 || aws.ToString(subnets.Subnets[0].SubnetId) != "subnet-0a1b2c3d4e5f60718" {
		t.Errorf("subnets by the discovery tag after the import: %v %+v, want the captured one alone", err, subnets)
	}
	groups, err := e.ec2.DescribeSecurityGroups(e.ctx, &ec2.DescribeSecurityGroupsInput{Filters: discovery})
	if err != nil || len(groups.SecurityGroups) != 1 || aws.ToString(groups.SecurityGroups[0].GroupId) != "sg-0a1b2c3d4e5f60718" {
		t.Errorf("security groups by the discovery tag after the import: %v %+v, want the captured one alone", err, groups)
	}
}

// A replay of a lab's own capture brings the account's own network and images again:
// Without leaves out what the account holds by ID, and the rest imports.
func TestImportWithoutWhatTheAccountHolds(t *testing.T) {
	e := newEnv(t)
	imp := capturedAccount(t0)
	if err := e.srv.Import(imp); err != nil {
		t.Fatal(err)
	}
	if !e.srv.Has("subnet-0a1b2c3d4e5f60718") || e.srv.Has("subnet-0ffffffffffffffff") {
		t.Fatalf("Has after the import: the imported subnet %v, an unknown one %v", e.srv.Has("subnet-0a1b2c3d4e5f60718"), e.srv.Has("subnet-0ffffffffffffffff"))
	}
	again := imp.Without(e.srv.Has)
	if len(again.VPCs)+len(again.Subnets)+len(again.SecurityGroups)+len(again.Images) != 0 || len(imp.Subnets) != 1 {
		t.Errorf("Without the account's own: %+v (the original keeps %d subnets)", again, len(imp.Subnets))
	}
}
