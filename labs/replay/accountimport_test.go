package replay

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
)

// emulator starts the lab's AWS account in region on a loopback listener.
func emulator(t *testing.T, region string) (*fakeec2.AdminClient, *ec2.Client) {
	t.Helper()
	srv, err := fakeec2.New(fakeec2.Options{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	url := "http://" + ln.Addr().String()
	client := ec2.NewFromConfig(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("AKIAKARPLABLEARNER01", "x", "")},
		func(o *ec2.Options) { o.BaseEndpoint = aws.String(url) })
	return fakeec2.NewAdminClient(url), client
}

const replayNode = `apiVersion: v1
kind: Node
metadata:
  name: ip-10-20-40-7.ec2.internal
  creationTimestamp: "2026-12-04T10:00:05Z"
  labels:
    topology.kubernetes.io/region: us-east-1
    topology.kubernetes.io/zone: us-east-1b
    node.kubernetes.io/instance-type: m5.large
    karpenter.sh/nodepool: default
    karpenter.sh/capacity-type: spot
    karpenter.k8s.aws/ec2nodeclass: default
spec:
  providerID: aws:///us-east-1b/i-0a1b2c3d4e5f60718
status:
  addresses: [{type: InternalIP, address: 10.20.40.7}, {type: InternalDNS, address: ip-10-20-40-7.ec2.internal}]
`

const replayClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
status:
  amis: [{id: ami-0a1b2c3d4e5f60718, name: amazon-eks-node-al2023-x86_64-standard-1.37-v20261101}]
  subnets: [{id: subnet-0a1b2c3d4e5f60718, zone: us-east-1b, zoneID: use1-az2}]
  securityGroups: [{id: sg-0a1b2c3d4e5f60718, name: prod-node}]
`

const replayClaim = `apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: default-abcde, creationTimestamp: "2026-12-04T10:00:00Z", labels: {karpenter.sh/nodepool: default}}
spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
status: {providerID: "aws:///us-east-1b/i-0a1b2c3d4e5f60718", imageID: ami-0a1b2c3d4e5f60718}
`

// With the Kubernetes objects only, the account is derived from the EC2NodeClass's status and
// the Node: the instance is imported with its real ID, in its zone and subnet, tagged as
// Karpenter tags its own, so that the provider's List finds it; the real SDK describes it.
func TestAccountImportFromTheObjectsAlone(t *testing.T) {
	b := objects(t, replayNode, replayClass, replayClaim)
	imp, err := AccountImport(b, "prod")
	if err != nil {
		t.Fatal(err)
	}
	admin, client := emulator(t, "us-east-1")
	if err := admin.Import(context.Background(), imp); err != nil {
		t.Fatalf("importing %+v: %v", imp, err)
	}
	out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag-key"), Values: []string{"karpenter.sh/nodepool"}},
		{Name: aws.String("tag-key"), Values: []string{"karpenter.k8s.aws/ec2nodeclass"}},
		{Name: aws.String("tag:eks:eks-cluster-name"), Values: []string{"prod"}},
		{Name: aws.String("instance-state-name"), Values: []string{"running"}},
	}})
	if err != nil || len(out.Reservations) != 1 {
		t.Fatalf("the provider's List would find %v instances (%v)", out, err)
	}
	in := out.Reservations[0].Instances[0]
	launched, _ := time.Parse(time.RFC3339, "2026-12-04T10:00:00Z")
	if aws.ToString(in.InstanceId) != "i-0a1b2c3d4e5f60718" || aws.ToString(in.SubnetId) != "subnet-0a1b2c3d4e5f60718" ||
		aws.ToString(in.ImageId) != "ami-0a1b2c3d4e5f60718" || in.InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot ||
		!aws.ToTime(in.LaunchTime).Equal(launched) || aws.ToString(in.PrivateIpAddress) != "10.20.40.7" {
		t.Errorf("imported as %+v", in)
	}
}

// With the AWS side, the captured instance, subnet, security group and image are imported as
// the aws CLI described them.
func TestAccountImportFromTheAWSSide(t *testing.T) {
	b := objects(t, replayNode, replayClass, replayClaim)
	launched := time.Date(2026, 12, 4, 9, 59, 58, 0, time.UTC)
	b.AWS = AWSSide{
		Instances: []ec2types.Instance{{InstanceId: aws.String("i-0a1b2c3d4e5f60718"), InstanceType: "m5.large", SubnetId: aws.String("subnet-0a1b2c3d4e5f60718"),
			ImageId: aws.String("ami-0a1b2c3d4e5f60718"), PrivateIpAddress: aws.String("10.20.40.7"), LaunchTime: &launched, InstanceLifecycle: ec2types.InstanceLifecycleTypeSpot,
			Placement: &ec2types.Placement{AvailabilityZone: aws.String("us-east-1b")}, State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameRunning},
			SecurityGroups: []ec2types.GroupIdentifier{{GroupId: aws.String("sg-0a1b2c3d4e5f60718")}},
			Tags:           []ec2types.Tag{{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("default")}, {Key: aws.String("team"), Value: aws.String("render")}}}},
		Subnets: []ec2types.Subnet{{SubnetId: aws.String("subnet-0a1b2c3d4e5f60718"), VpcId: aws.String("vpc-0a1b2c3d4e5f60718"), AvailabilityZone: aws.String("us-east-1b"),
			CidrBlock: aws.String("10.20.32.0/19"), Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/discovery"), Value: aws.String("prod")}}}},
		SecurityGroups: []ec2types.SecurityGroup{{GroupId: aws.String("sg-0a1b2c3d4e5f60718"), GroupName: aws.String("prod-node"), VpcId: aws.String("vpc-0a1b2c3d4e5f60718")}},
	}
	imp, err := AccountImport(b, "prod")
	if err != nil {
		t.Fatal(err)
	}
	admin, client := emulator(t, "us-east-1")
	if err := admin.Import(context.Background(), imp); err != nil {
		t.Fatalf("importing: %v", err)
	}
	out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0a1b2c3d4e5f60718"}})
	if err != nil || len(out.Reservations) != 1 || !aws.ToTime(out.Reservations[0].Instances[0].LaunchTime).Equal(launched) {
		t.Fatalf("describing the imported instance: %v %+v", err, out)
	}
	subnets, err := client.DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0a1b2c3d4e5f60718"}})
	if err != nil || aws.ToString(subnets.Subnets[0].CidrBlock) != "10.20.32.0/19" {
		t.Errorf("the captured subnet: %v %+v", err, subnets)
	}
}

// A Node pasted without creationTimestamp, and no NodeClaim for it, launched at the capture:
// its instance gets that launch time (not an empty one, which the import refuses and the SDK
// cannot parse), and the real SDK describes it.
func TestAccountImportDatesANodeWithoutCreation(t *testing.T) {
	node := strings.Replace(replayNode, `  creationTimestamp: "2026-12-04T10:00:05Z"`+"\n", "", 1)
	b := objects(t, node, replayClass)
	b.CapturedAt = time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	imp, err := AccountImport(b, "prod")
	if err != nil {
		t.Fatal(err)
	}
	admin, client := emulator(t, "us-east-1")
	if err := admin.Import(context.Background(), imp); err != nil {
		t.Fatalf("importing %+v: %v", imp, err)
	}
	out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
	if err != nil || len(out.Reservations) != 1 {
		t.Fatalf("DescribeInstances: %v, %v", out, err)
	}
	if got := aws.ToTime(out.Reservations[0].Instances[0].LaunchTime); !got.Equal(b.CapturedAt) {
		t.Errorf("launched %s, want the capture's time %s", got, b.CapturedAt)
	}
}

// A report's manifests (Nodes and an EC2NodeClass without status, no region label) are
// checked whole before anything starts: every node's problem is listed at once, with the
// region given on the command line.
func TestCheckListsEverythingAtOnce(t *testing.T) {
	bare := strings.Replace(replayNode, "    topology.kubernetes.io/region: us-east-1\n", "", 1)
	other := strings.NewReplacer("ip-10-20-40-7", "ip-10-20-72-9", "10.20.40.7", "10.20.72.9", "us-east-1b", "us-east-1c", "i-0a1b2c3d4e5f60718", "i-0f1e2d3c4b5a69788").Replace(bare)
	class := "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec: {role: KarpenterNodeRole-prod}\n"
	b := objects(t, bare, other, class)
	r, _, _ := Check(b, LabCatalog{}, Given{})
	if len(r.Gaps) != 2 || !strings.Contains(r.Gaps[0], "no region anywhere") || !strings.Contains(r.Gaps[1], "name it with --cluster-name") {
		t.Errorf("without --region and --cluster-name: %q", r.Gaps)
	}
	r, name, _ := Check(b, LabCatalog{}, Given{Region: "us-east-1", ClusterName: "prod"})
	if name != "prod" || r.Region != "us-east-1" || len(r.Gaps) != 2 ||
		!strings.Contains(r.Gaps[0], "us-east-1b") || !strings.Contains(r.Gaps[1], "us-east-1c") {
		t.Errorf("with them: region %q, cluster %q, gaps %q: want one per node's zone", r.Region, name, r.Gaps)
	}
}
