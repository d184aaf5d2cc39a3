package fakeec2_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// refusalFixture is an account in which each of EC2's refusals can be tried: a protected
// on-demand instance with a data volume (in the VPC's default group), a one-time spot
// instance beside it (in the node group), and a volume in another zone.
type refusalFixture struct {
	e                          *env
	onDemand, spot             string
	root, data, farVolume, eni string
	onDemandZone, subnet       string
	nodeGroup, defaultGroup    string
	primaryAttachment, amiSnap string
}

func newRefusalFixture(t *testing.T) *refusalFixture {
	e := newEnv(t, karplabtest.OnRealClock)
	subnets, groups, amd64, _ := e.discover()
	fx := &refusalFixture{e: e, onDemandZone: aws.ToString(subnets[0].AvailabilityZone),
		subnet: aws.ToString(subnets[0].SubnetId), nodeGroup: groups[0]}
	def, err := e.ec2.DescribeSecurityGroups(e.ctx, &ec2.DescribeSecurityGroupsInput{GroupNames: []string{"default"}})
	e.must(err)
	fx.defaultGroup = aws.ToString(def.SecurityGroups[0].GroupId)
	run := func(in *ec2.RunInstancesInput) string {
		in.ImageId, in.InstanceType, in.SubnetId = aws.String(amd64), "m6i.large", subnets[0].SubnetId
		in.MinCount, in.MaxCount = aws.Int32(1), aws.Int32(1)
		out, err := e.ec2.RunInstances(e.ctx, in)
		e.must(err)
		return aws.ToString(out.Instances[0].InstanceId)
	}
	fx.onDemand = run(&ec2.RunInstancesInput{DisableApiTermination: aws.Bool(true), DisableApiStop: aws.Bool(true)})
	fx.spot = run(&ec2.RunInstancesInput{SecurityGroupIds: []string{fx.nodeGroup},
		InstanceMarketOptions: &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}})
	e.must(ec2.NewInstanceRunningWaiter(e.ec2).Wait(e.ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{fx.onDemand, fx.spot}}, time.Minute))
	in := e.describe(fx.onDemand)[0]
	fx.root = aws.ToString(in.BlockDeviceMappings[0].Ebs.VolumeId)
	fx.eni = aws.ToString(in.NetworkInterfaces[0].NetworkInterfaceId)
	fx.primaryAttachment = aws.ToString(in.NetworkInterfaces[0].Attachment.AttachmentId)
	ami, err := e.ec2.DescribeImages(e.ctx, &ec2.DescribeImagesInput{ImageIds: []string{amd64}})
	e.must(err)
	fx.amiSnap = aws.ToString(ami.Images[0].BlockDeviceMappings[0].Ebs.SnapshotId)
	volume := func(zone string) string {
		v, err := e.ec2.CreateVolume(e.ctx, &ec2.CreateVolumeInput{AvailabilityZone: aws.String(zone), Size: aws.Int32(10)})
		e.must(err)
		id := aws.ToString(v.VolumeId)
		e.must(ec2.NewVolumeAvailableWaiter(e.ec2).Wait(e.ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{id}}, time.Minute))
		return id
	}
	fx.data, fx.farVolume = volume(fx.onDemandZone), volume(aws.ToString(subnets[1].AvailabilityZone))
	_, err = e.ec2.AttachVolume(e.ctx, &ec2.AttachVolumeInput{VolumeId: aws.String(fx.data), InstanceId: aws.String(fx.onDemand), Device: aws.String("/dev/sdf")})
	e.must(err)
	// in-use comes first; the attachment goes from attaching to attached a moment later.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{fx.data}})
		e.must(err)
		if a := vols.Volumes[0].Attachments; len(a) == 1 && a[0].State == ec2types.VolumeAttachmentStateAttached {
			return fx
		}
		if time.Now().After(deadline) {
			t.Fatalf("volume %s is not attached after a minute: %+v", fx.data, vols.Volumes[0].Attachments)
		}
	}
}

// state is what a refused call must leave as it was: the instances (state, tags,
// protection), the volumes (state, attachments), the interface (status, attachment), the
// launch templates, the image's snapshot, security groups and subnets.
func (fx *refusalFixture) state(t *testing.T) string {
	e, ctx := fx.e, fx.e.ctx
	var b strings.Builder
	for _, in := range e.describe(fx.onDemand, fx.spot) {
		fmt.Fprintf(&b, "%s %s %v\n", aws.ToString(in.InstanceId), in.State.Name, tagMap(in.Tags))
		attr, err := e.ec2.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{InstanceId: in.InstanceId, Attribute: ec2types.InstanceAttributeNameDisableApiTermination})
		e.must(err)
		fmt.Fprintf(&b, " protected %t\n", aws.ToBool(attr.DisableApiTermination.Value))
	}
	vols, err := e.ec2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{fx.root, fx.data, fx.farVolume}})
	e.must(err)
	for _, v := range vols.Volumes {
		fmt.Fprintf(&b, "%s %s", aws.ToString(v.VolumeId), v.State)
		for _, a := range v.Attachments {
			fmt.Fprintf(&b, " %s@%s %s", aws.ToString(a.InstanceId), aws.ToString(a.Device), a.State)
		}
		b.WriteString("\n")
	}
	enis, err := e.ec2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{fx.eni}})
	e.must(err)
	n := enis.NetworkInterfaces[0]
	fmt.Fprintf(&b, "%s %s %s\n", fx.eni, n.Status, aws.ToString(n.Attachment.InstanceId))
	lts, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	e.must(err)
	fmt.Fprintf(&b, "%d launch templates\n", len(lts.LaunchTemplates))
	sgs, err := e.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	e.must(err)
	for _, g := range sgs.SecurityGroups {
		fmt.Fprintf(&b, "%s %s\n", aws.ToString(g.GroupId), aws.ToString(g.GroupName))
	}
	snaps, err := e.ec2.DescribeSnapshots(ctx, &ec2.DescribeSnapshotsInput{SnapshotIds: []string{fx.amiSnap}})
	e.must(err)
	fmt.Fprintf(&b, "%s %s\n", fx.amiSnap, snaps.Snapshots[0].State)
	sns, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	e.must(err)
	for _, sn := range sns.Subnets {
		fmt.Fprintf(&b, "%s %d free\n", aws.ToString(sn.SubnetId), aws.ToInt32(sn.AvailableIpAddressCount))
	}
	return b.String()
}

// refusalRow is one precondition of the EC2 API reference, as each client asks it.
type refusalRow struct {
	name, code string
	boto3      string   // a boto3 call on the client `ec2`
	cli        []string // aws ec2 ...
}

func (fx *refusalFixture) rows() []refusalRow {
	return []refusalRow{
		{"DeleteVolume attached", "VolumeInUse",
			fmt.Sprintf("ec2.delete_volume(VolumeId=%q)", fx.data), []string{"delete-volume", "--volume-id", fx.data}},
		{"DetachVolume root of a running instance", "IncorrectState",
			fmt.Sprintf("ec2.detach_volume(VolumeId=%q)", fx.root), []string{"detach-volume", "--volume-id", fx.root}},
		{"AttachVolume across zones", "InvalidVolume.ZoneMismatch",
			fmt.Sprintf("ec2.attach_volume(VolumeId=%q, InstanceId=%q, Device='/dev/sdg')", fx.farVolume, fx.onDemand),
			[]string{"attach-volume", "--volume-id", fx.farVolume, "--instance-id", fx.onDemand, "--device", "/dev/sdg"}},
		{"AttachVolume of a volume in use", "VolumeInUse",
			fmt.Sprintf("ec2.attach_volume(VolumeId=%q, InstanceId=%q, Device='/dev/sdg')", fx.data, fx.spot),
			[]string{"attach-volume", "--volume-id", fx.data, "--instance-id", fx.spot, "--device", "/dev/sdg"}},
		{"DeleteNetworkInterface attached", "InvalidNetworkInterface.InUse",
			fmt.Sprintf("ec2.delete_network_interface(NetworkInterfaceId=%q)", fx.eni), []string{"delete-network-interface", "--network-interface-id", fx.eni}},
		{"TerminateInstances with DisableApiTermination", "OperationNotPermitted",
			fmt.Sprintf("ec2.terminate_instances(InstanceIds=[%q])", fx.onDemand), []string{"terminate-instances", "--instance-ids", fx.onDemand}},
		{"StopInstances with DisableApiStop", "OperationNotPermitted",
			fmt.Sprintf("ec2.stop_instances(InstanceIds=[%q])", fx.onDemand), []string{"stop-instances", "--instance-ids", fx.onDemand}},
		{"StopInstances of a one-time spot instance", "UnsupportedOperation",
			fmt.Sprintf("ec2.stop_instances(InstanceIds=[%q])", fx.spot), []string{"stop-instances", "--instance-ids", fx.spot}},
		{"DeleteLaunchTemplate of an unknown one", "InvalidLaunchTemplateId.NotFound",
			"ec2.delete_launch_template(LaunchTemplateId='lt-0123456789abcdef0')", []string{"delete-launch-template", "--launch-template-id", "lt-0123456789abcdef0"}},
		{"CreateTags with an aws: key", "InvalidParameterValue",
			fmt.Sprintf("ec2.create_tags(Resources=[%q], Tags=[{'Key': 'aws:ec2:fleet-id', 'Value': 'fleet-mine'}])", fx.onDemand),
			[]string{"create-tags", "--resources", fx.onDemand, "--tags", "Key=aws:ec2:fleet-id,Value=fleet-mine"}},
		{"DeleteSecurityGroup in use", "DependencyViolation",
			fmt.Sprintf("ec2.delete_security_group(GroupId=%q)", fx.nodeGroup), []string{"delete-security-group", "--group-id", fx.nodeGroup}},
		{"DeleteSecurityGroup of the default group", "CannotDelete",
			fmt.Sprintf("ec2.delete_security_group(GroupId=%q)", fx.defaultGroup), []string{"delete-security-group", "--group-id", fx.defaultGroup}},
		{"DetachNetworkInterface of a primary interface", "OperationNotPermitted",
			fmt.Sprintf("ec2.detach_network_interface(AttachmentId=%q)", fx.primaryAttachment),
			[]string{"detach-network-interface", "--attachment-id", fx.primaryAttachment}},
		{"DeleteSnapshot of an image's root", "InvalidSnapshot.InUse",
			fmt.Sprintf("ec2.delete_snapshot(SnapshotId=%q)", fx.amiSnap), []string{"delete-snapshot", "--snapshot-id", fx.amiSnap}},
		{"DeleteSubnet with interfaces", "DependencyViolation",
			fmt.Sprintf("ec2.delete_subnet(SubnetId=%q)", fx.subnet), []string{"delete-subnet", "--subnet-id", fx.subnet}},
	}
}

// boto3Calls answers each call read from a line of its input with the error code boto3
// raised (or OK), a line each: one Python for every row, as boto3's import is slow.
const boto3Calls = `import os, sys, boto3, botocore
ec2 = boto3.client("ec2", endpoint_url=os.environ["EC2_URL"], region_name="eu-west-2",
    aws_access_key_id="AKIAREFUSALTEST", aws_secret_access_key="lab")
for line in sys.stdin:
    try:
        eval(line)
        print("OK", flush=True)
    except botocore.exceptions.ClientError as e:
        print(e.response["Error"]["Code"], flush=True)
`

// TestRefusalsBoto3 tries each refusal with boto3: the code is AWS's, and nothing changed.
func TestRefusalsBoto3(t *testing.T) {
	py := python3WithBoto3(t)
	fx := newRefusalFixture(t)
	before := fx.state(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", boto3Calls)
	cmd.Env, cmd.Stderr = boto3Env(t.TempDir(), fx.e.url), os.Stderr
	calls, err := cmd.StdinPipe()
	fx.e.must(err)
	stdout, err := cmd.StdoutPipe()
	fx.e.must(err)
	fx.e.must(cmd.Start())
	t.Cleanup(func() { calls.Close(); cmd.Wait() })
	answers := bufio.NewScanner(stdout)
	for _, row := range fx.rows() {
		t.Run(row.name, func(t *testing.T) {
			fmt.Fprintln(calls, row.boto3)
			if !answers.Scan() {
				t.Fatalf("%s: boto3 gave no answer (%v)", row.boto3, answers.Err())
			}
			if got := answers.Text(); got != row.code {
				t.Fatalf("%s: boto3 answered %q, want %s", row.boto3, got, row.code)
			}
			if after := fx.state(t); after != before {
				t.Errorf("the refused call changed the account:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// TestRefusalsAWSCLI tries each refusal with every installed aws CLI (v2 from Debian, v1
// from pip): the CLI prints AWS's code and exits 254 (v2) or 255 (v1), and nothing changed.
func TestRefusalsAWSCLI(t *testing.T) {
	codeIn := regexp.MustCompile(`An error occurred \(([A-Za-z.]+)\) when calling the`)
	for _, cli := range karplabtest.AWSCLIs(t) {
		t.Run(cli.Name, func(t *testing.T) {
			t.Parallel() // each CLI on an account of its own: the CLIs' start-up is most of the time
			fx := newRefusalFixture(t)
			before := fx.state(t)
			for _, row := range fx.rows() {
				t.Run(row.name, func(t *testing.T) {
					_, stderr, err := cli.Run(t, fx.e.url, "AKIAREFUSALTEST", append([]string{"ec2"}, row.cli...)...)
					m := codeIn.FindStringSubmatch(stderr)
					if err == nil || m == nil || m[1] != row.code {
						t.Fatalf("aws ec2 %s: %v, stderr %q; want the error %s", strings.Join(row.cli, " "), err, stderr, row.code)
					}
					if after := fx.state(t); after != before {
						t.Errorf("the refused call changed the account:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
			// Lifting the protection lets the same CLI call through.
			if _, stderr, err := cli.Run(t, fx.e.url, "AKIAREFUSALTEST", "ec2", "modify-instance-attribute", "--instance-id", fx.onDemand, "--no-disable-api-termination"); err != nil {
				t.Fatalf("modify-instance-attribute --no-disable-api-termination: %v: %s", err, stderr)
			}
			if _, stderr, err := cli.Run(t, fx.e.url, "AKIAREFUSALTEST", "ec2", "terminate-instances", "--instance-ids", fx.onDemand); err != nil {
				t.Fatalf("terminate-instances after lifting the protection: %v: %s", err, stderr)
			}
			if st := fx.e.describe(fx.onDemand)[0].State.Name; st != ec2types.InstanceStateNameShuttingDown && st != ec2types.InstanceStateNameTerminated {
				t.Errorf("after lifting the protection the instance is %s, want shutting-down", st)
			}
		})
	}
}
