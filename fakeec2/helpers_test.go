package fakeec2_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/account"
)

// t0 is the fake clock's start: every test's timestamps are relative to it.
var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

const karpenterKey = "AKIAKARPENTERCONTROLLER"

type env struct {
	t      *testing.T
	srv    *fakeec2.Server
	url    string
	ec2    *ec2.Client
	admin  *fakeec2.AdminClient
	clock  *fakeec2.FakeClock
	opts   fakeec2.Options
	ctx    context.Context
	closed bool
}

// newEnv starts the emulator on a real loopback listener with a fake clock and
// sequential IDs, and returns an aws-sdk-go-v2 EC2 client pointed at it.
func newEnv(t *testing.T, mod ...func(*fakeec2.Options)) *env {
	t.Helper()
	opts := fakeec2.Options{
		Clock: fakeec2.NewFakeClock(t0), IDs: account.NewSequentialIDs(),
		BootDelay: 2 * time.Second, ShutdownDelay: time.Second,
	}
	for _, m := range mod {
		m(&opts)
	}
	e := &env{t: t, opts: opts, ctx: context.Background()}
	e.clock, _ = opts.Clock.(*fakeec2.FakeClock) // nil on the real clock
	e.start()
	t.Cleanup(func() {
		if !e.closed {
			if err := e.srv.Close(); err != nil {
				t.Errorf("closing server: %v", err)
			}
		}
	})
	return e
}

func (e *env) start() {
	e.t.Helper()
	srv, err := fakeec2.New(e.opts)
	if err != nil {
		e.t.Fatalf("fakeec2.New: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatalf("listening: %v", err)
	}
	go func() { _ = srv.Serve(l) }()
	e.srv, e.closed = srv, false
	e.url = "http://" + l.Addr().String()
	e.ec2 = newClient(e.t, e.url, karpenterKey)
	e.admin = fakeec2.NewAdminClient(e.url)
}

// restart closes the server and opens a new one on the same state directory.
func (e *env) restart() {
	e.t.Helper()
	if err := e.srv.Close(); err != nil {
		e.t.Fatalf("closing server: %v", err)
	}
	e.closed = true
	e.start()
}

// newClient returns an SDK client with full middleware (signing, retries, waiters) and
// fakeec2.NewHTTPClient as its HTTP client; stockHTTP puts the SDK's own back.
func newClient(t testing.TB, url, accessKey string, optFns ...func(*ec2.Options)) *ec2.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("eu-west-2"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(accessKey, "lab-secret", "")),
	)
	if err != nil {
		t.Fatalf("loading aws config: %v", err)
	}
	return ec2.NewFromConfig(cfg, append([]func(*ec2.Options){func(o *ec2.Options) {
		o.BaseEndpoint = aws.String(url)
		o.HTTPClient = fakeec2.NewHTTPClient()
	}}, optFns...)...)
}

// stockHTTP uses the SDK's default HTTP client.
func stockHTTP(o *ec2.Options) { o.HTTPClient = awshttp.NewBuildableClient() }

// noRetry makes faults visible on the first attempt: API errors (throttling, capacity)
// are not retried. Connection errors still are: smithy-go's request body wrapper returns
// io.EOF from WriteTo once the SDK has closed it, and when a server answers within
// microseconds (a local one) Go's transport sees that as a write error and drops the
// connection under the response being read. The emulator's ClientToken idempotency makes
// those retries harmless.
func noRetry(o *ec2.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.Retryables = []retry.IsErrorRetryable{retry.NoRetryCanceledError{}, retry.RetryableConnectionError{}}
		so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
	})
}

func errCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return "not-an-api-error: " + err.Error()
	}
	return ""
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// discover resolves the seed's EC2NodeClass selectors as Karpenter does.
func (e *env) discover() (subnets []ec2types.Subnet, groups []string, amd64AMI, arm64AMI string) {
	e.t.Helper()
	sel := []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"ziba-production"}}}
	sn, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{Filters: sel})
	e.must(err)
	sg, err := e.ec2.DescribeSecurityGroups(e.ctx, &ec2.DescribeSecurityGroupsInput{Filters: sel})
	e.must(err)
	for _, g := range sg.SecurityGroups {
		groups = append(groups, aws.ToString(g.GroupId))
	}
	latest := func(arch string) string {
		out, err := e.ec2.DescribeImages(e.ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{
			{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-" + arch + "-standard-1.37-*"}},
		}})
		e.must(err)
		var best ec2types.Image
		for _, im := range out.Images {
			if aws.ToString(im.CreationDate) > aws.ToString(best.CreationDate) {
				best = im
			}
		}
		return aws.ToString(best.ImageId)
	}
	return sn.Subnets, groups, latest("x86_64"), latest("arm64")
}

var seedTags = []ec2types.Tag{
	{Key: aws.String("application"), Value: aws.String("ziba")},
	{Key: aws.String("environment"), Value: aws.String("production")},
	{Key: aws.String("owner"), Value: aws.String("platform")},
	{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("ziba-general")},
}

// createTemplate creates a launch template like Karpenter's for the seed EC2NodeClass.
func (e *env) createTemplate(name, ami string, groups []string, encrypted bool, tokens ec2types.LaunchTemplateHttpTokensState) string {
	e.t.Helper()
	out, err := e.ec2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId:            aws.String(ami),
			UserData:           aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\necho bootstrap " + name + "\n"))),
			IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("KarpenterNodeInstanceProfile-ziba")},
			SecurityGroupIds:   groups,
			BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{
				DeviceName: aws.String("/dev/xvda"),
				Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(80), VolumeType: ec2types.VolumeTypeGp3,
					Encrypted: aws.Bool(encrypted), DeleteOnTermination: aws.Bool(true)},
			}},
			MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
				HttpEndpoint: ec2types.LaunchTemplateInstanceMetadataEndpointStateEnabled, HttpProtocolIpv6: ec2types.LaunchTemplateInstanceMetadataProtocolIpv6Disabled,
				HttpPutResponseHopLimit: aws.Int32(1), HttpTokens: tokens,
			},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{
				{ResourceType: ec2types.ResourceTypeInstance, Tags: seedTags},
				{ResourceType: ec2types.ResourceTypeVolume, Tags: seedTags},
				{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: seedTags},
			},
		},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags: []ec2types.Tag{{Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String("ziba-general")}}}},
	})
	e.must(err)
	return aws.ToString(out.LaunchTemplate.LaunchTemplateId)
}

func override(typ string, sn ec2types.Subnet) ec2types.FleetLaunchTemplateOverridesRequest {
	return ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(typ),
		SubnetId: sn.SubnetId, AvailabilityZone: sn.AvailabilityZone}
}

// fleet sends an instant CreateFleet for one instance, the way Karpenter does.
func (e *env) fleet(c *ec2.Client, ltName, capType string, overrides []ec2types.FleetLaunchTemplateOverridesRequest, tags []ec2types.Tag) (*ec2.CreateFleetOutput, error) {
	in := &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(ltName), Version: aws.String("$Latest")},
			Overrides:                   overrides,
		}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityType(capType)},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: tags},
			{ResourceType: ec2types.ResourceTypeVolume, Tags: tags},
			{ResourceType: ec2types.ResourceTypeFleet, Tags: tags},
		},
	}
	if capType == "spot" {
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	} else {
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	return c.CreateFleet(e.ctx, in)
}

func (e *env) describe(ids ...string) []ec2types.Instance {
	e.t.Helper()
	out, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
	e.must(err)
	var ins []ec2types.Instance
	for _, r := range out.Reservations {
		ins = append(ins, r.Instances...)
	}
	return ins
}

func tagMap(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}
