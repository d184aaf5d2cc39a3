package fakeec2_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestIntegrationAWSCLI drives the emulator with the real aws CLI (Debian's awscli; CI
// installs it) the way the course text does. It skips when aws is not on PATH.
func TestIntegrationAWSCLI(t *testing.T) {
	awsBin, err := exec.LookPath("aws")
	if err != nil {
		karplabtest.RequireClient(t, "the aws CLI (apt-get install awscli)")
	}
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	// A Karpenter-tagged node and an untagged one.
	out, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: subnets[0].SubnetId, TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: seedTags}}})
	e.must(err)
	tagged := aws.ToString(out.Instances[0].InstanceId)
	e.launch("c6i.large", amd64, subnets[1], 1, nil)
	e.clock.Advance(5 * time.Second)

	home := t.TempDir()
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, awsBin, append([]string{"--endpoint-url", e.url, "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIACOURSELEARNER", "AWS_SECRET_ACCESS_KEY=lab", "AWS_DEFAULT_REGION=eu-west-2",
			"AWS_REGION=eu-west-2", "AWS_CONFIG_FILE="+home+"/config", "AWS_SHARED_CREDENTIALS_FILE="+home+"/credentials",
			"AWS_PAGER=", "HOME="+home, "AWS_ENDPOINT_URL=")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	// The course text's command, verbatim after the endpoint.
	stdout, stderr, err := run("ec2", "describe-instances", "--filters", "Name=tag:karpenter.sh/nodepool,Values=ziba-general")
	if err != nil {
		t.Fatalf("aws ec2 describe-instances: %v\n%s", err, stderr)
	}
	var di struct {
		Reservations []struct {
			Instances []struct {
				InstanceId, InstanceType, PrivateIpAddress, PrivateDnsName string
				State                                                      struct{ Name string }
				Placement                                                  struct{ AvailabilityZone string }
				Tags                                                       []struct{ Key, Value string }
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &di); err != nil {
		t.Fatalf("decoding the CLI's JSON: %v\n%s", err, stdout)
	}
	if len(di.Reservations) != 1 || len(di.Reservations[0].Instances) != 1 {
		t.Fatalf("CLI saw %+v, want the one ziba-general instance", di)
	}
	in := di.Reservations[0].Instances[0]
	if in.InstanceId != tagged || in.State.Name != "running" || in.Placement.AvailabilityZone != "eu-west-2a" ||
		!strings.HasPrefix(in.PrivateDnsName, "ip-10-0-") {
		t.Errorf("CLI instance %+v", in)
	}

	// run-instances and terminate-instances through the CLI, then the caller in the audit trail.
	stdout, stderr, err = run("ec2", "run-instances", "--image-id", amd64, "--instance-type", "m5.large", "--count", "1",
		"--tag-specifications", "ResourceType=instance,Tags=[{Key=karpenter.sh/nodepool,Value=ziba-general}]")
	if err != nil {
		t.Fatalf("aws ec2 run-instances: %v\n%s", err, stderr)
	}
	var ri struct{ Instances []struct{ InstanceId string } }
	if err := json.Unmarshal([]byte(stdout), &ri); err != nil || len(ri.Instances) != 1 {
		t.Fatalf("run-instances output: %v\n%s", err, stdout)
	}
	if _, stderr, err = run("ec2", "terminate-instances", "--instance-ids", ri.Instances[0].InstanceId); err != nil {
		t.Fatalf("aws ec2 terminate-instances: %v\n%s", err, stderr)
	}
	events, err := e.admin.Audit(e.ctx, trail.AuditQuery{Caller: "AKIACOURSELEARNER", MutatingOnly: true})
	e.must(err)
	if len(events) != 2 || events[0].Action != "RunInstances" || events[1].Action != "TerminateInstances" {
		t.Errorf("audit of the CLI's calls: %+v", events)
	}

	// Errors reach the CLI with EC2's code.
	_, stderr, err = run("ec2", "describe-instances", "--instance-ids", "i-0123456789abcdef0")
	if err == nil || !strings.Contains(stderr, "InvalidInstanceID.NotFound") {
		t.Errorf("CLI error for a missing instance: %v\n%s", err, stderr)
	}
	// Karpenter's EC2NodeClass selectors, by hand.
	stdout, stderr, err = run("ec2", "describe-subnets", "--filters", "Name=tag:karpenter.sh/discovery,Values=ziba-production",
		"--query", "Subnets[].AvailabilityZone")
	if err != nil {
		t.Fatalf("aws ec2 describe-subnets: %v\n%s", err, stderr)
	}
	var zones []string
	if err := json.Unmarshal([]byte(stdout), &zones); err != nil || strings.Join(zones, ",") != "eu-west-2a,eu-west-2b,eu-west-2c" {
		t.Errorf("discovered subnet zones %q (%v)", stdout, err)
	}
}
