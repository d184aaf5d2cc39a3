package fakeec2_test

import (
	"encoding/xml"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/trail"
)

// karpenterEC2API returns the methods of karpenter-provider-aws's pkg/aws/sdk.go EC2API
// interface (the emulator's minimum), read from the module's source: importing the
// package would need go.sum entries for its timestreamwrite and arczonalshift clients.
func karpenterEC2API(t *testing.T) []string {
	t.Helper()
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/aws/karpenter-provider-aws (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod does not require github.com/aws/karpenter-provider-aws")
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		cache = filepath.Join(build.Default.GOPATH, "pkg", "mod")
	}
	path := filepath.Join(cache, "github.com", "aws", "karpenter-provider-aws@"+string(m[1]), "pkg", "aws", "sdk.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("reading the provider's EC2API: %v", err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "EC2API" {
			return true
		}
		for _, fld := range ts.Type.(*ast.InterfaceType).Methods.List {
			for _, name := range fld.Names {
				out = append(out, name.Name)
			}
		}
		return false
	})
	if len(out) == 0 {
		t.Fatalf("no EC2API interface in %s", path)
	}
	return out
}

// The list and what the lab's provider and kubelet use besides.
var labEC2API = []string{"DescribeInstanceStatus", "DescribeVolumes", "DescribeNetworkInterfaces", "DeleteTags",
	"DescribeTags", "DescribeInstanceAttribute", "DescribeLaunchTemplateVersions", "CreateLaunchTemplateVersion"}

func TestDispatchCoversKarpenterEC2API(t *testing.T) {
	have := map[string]bool{}
	for _, a := range fakeec2.Actions() {
		have[a] = true
	}
	for _, a := range append(karpenterEC2API(t), labEC2API...) {
		if !have[a] {
			t.Errorf("dispatch table lacks %s", a)
		}
	}
}

// TestIntegrationDryRun: karpenter's startup check sends DescribeInstanceTypes with
// DryRun and needs DryRunOperation; launches with DryRun create nothing.
func TestIntegrationDryRun(t *testing.T) {
	e := newEnv(t)
	_, err := e.ec2.DescribeInstanceTypes(e.ctx, &ec2.DescribeInstanceTypesInput{DryRun: aws.Bool(true)})
	if errCode(err) != "DryRunOperation" {
		t.Fatalf("DescribeInstanceTypes DryRun: %v, want DryRunOperation", err)
	}
	subnets, groups, ami, _ := e.discover()
	tests := []struct {
		name string
		call func() error
	}{
		{"DescribeInstances", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{DryRun: aws.Bool(true)})
			return err
		}},
		{"DescribeSubnets", func() error {
			_, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{DryRun: aws.Bool(true)})
			return err
		}},
		{"RunInstances", func() error {
			_, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{DryRun: aws.Bool(true), ImageId: aws.String(ami),
				InstanceType: "m6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: subnets[0].SubnetId})
			return err
		}},
		{"CreateLaunchTemplate", func() error {
			_, err := e.ec2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{DryRun: aws.Bool(true),
				LaunchTemplateName: aws.String("dry"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami)}})
			return err
		}},
		{"CreateTags", func() error {
			_, err := e.ec2.CreateTags(e.ctx, &ec2.CreateTagsInput{DryRun: aws.Bool(true), Resources: []string{aws.ToString(subnets[0].SubnetId)},
				Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); errCode(err) != "DryRunOperation" {
				t.Errorf("%s DryRun: %v, want DryRunOperation", tt.name, err)
			}
		})
	}
	if got := e.describe(); len(got) != 0 {
		t.Errorf("DryRun launched %d instances", len(got))
	}
	lts, err := e.ec2.DescribeLaunchTemplates(e.ctx, &ec2.DescribeLaunchTemplatesInput{})
	e.must(err)
	if len(lts.LaunchTemplates) != 0 {
		t.Errorf("DryRun created launch templates")
	}
	// A DryRun the policy forbids answers UnauthorizedOperation, as on AWS.
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{{AllowedInstanceFamilies: []string{"c6i"}}}}))
	_, err = e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{DryRun: aws.Bool(true), ImageId: aws.String(ami),
		InstanceType: "m6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SecurityGroupIds: groups})
	if errCode(err) != "UnauthorizedOperation" {
		t.Errorf("forbidden DryRun: %v, want UnauthorizedOperation", err)
	}
}

type errorXML struct {
	Code      string `xml:"Errors>Error>Code"`
	Message   string `xml:"Errors>Error>Message"`
	RequestID string `xml:"RequestID"`
}

func postForm(t *testing.T, endpoint string, form url.Values) (int, errorXML, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIARAWCLIENT/20261102/eu-west-2/ec2/aws4_request, SignedHeaders=host, Signature=00")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var ex errorXML
	if resp.StatusCode != 200 {
		if err := xml.Unmarshal(body, &ex); err != nil {
			t.Fatalf("error body is not EC2 error XML: %v\n%s", err, body)
		}
	}
	return resp.StatusCode, ex, string(body)
}

// TestIntegrationMalformedInput sends what the SDK would refuse to send, raw, and checks
// the code and status EC2 answers with.
func TestIntegrationMalformedInput(t *testing.T) {
	e := newEnv(t)
	_, _, ami, _ := e.discover()
	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
		wantCode   string
	}{
		{"unknown action", url.Values{"Action": {"LaunchRocket"}, "Version": {"2016-11-15"}}, 400, "InvalidAction"},
		{"no action", url.Values{"Version": {"2016-11-15"}}, 400, "MissingAction"},
		{"RunInstances without MinCount", url.Values{"Action": {"RunInstances"}, "ImageId": {ami}, "MaxCount": {"1"}, "InstanceType": {"m5.large"}}, 400, "MissingParameter"},
		{"RunInstances without ImageId", url.Values{"Action": {"RunInstances"}, "MinCount": {"1"}, "MaxCount": {"1"}, "InstanceType": {"m5.large"}}, 400, "MissingParameter"},
		{"RunInstances count not a number", url.Values{"Action": {"RunInstances"}, "ImageId": {ami}, "MinCount": {"one"}, "MaxCount": {"1"}}, 400, "InvalidParameterValue"},
		{"RunInstances MinCount > MaxCount", url.Values{"Action": {"RunInstances"}, "ImageId": {ami}, "MinCount": {"3"}, "MaxCount": {"1"}, "InstanceType": {"m5.large"}}, 400, "InvalidParameterValue"},
		{"TerminateInstances without ids", url.Values{"Action": {"TerminateInstances"}}, 400, "MissingParameter"},
		{"DryRun not a boolean", url.Values{"Action": {"DescribeInstances"}, "DryRun": {"maybe"}}, 400, "InvalidParameterValue"},
		{"filter without name", url.Values{"Action": {"DescribeInstances"}, "Filter.1.Value.1": {"x"}}, 400, "MissingParameter"},
		{"bad list index", url.Values{"Action": {"DescribeInstances"}, "InstanceId.0": {"i-1"}}, 400, "MalformedQueryString"},
		{"empty key segment", url.Values{"Action": {"DescribeInstances"}, "Filter..Name": {"x"}}, 400, "MalformedQueryString"},
		{"CreateFleet without configs", url.Values{"Action": {"CreateFleet"}, "Type": {"instant"}, "TargetCapacitySpecification.TotalTargetCapacity": {"1"}}, 400, "MissingParameter"},
		{"CreateFleet maintain", url.Values{"Action": {"CreateFleet"}, "Type": {"maintain"}}, 400, "InvalidParameterValue"},
		{"CreateLaunchTemplate without data", url.Values{"Action": {"CreateLaunchTemplate"}, "LaunchTemplateName": {"x-template"}}, 400, "MissingParameter"},
		{"CreateLaunchTemplate bad name", url.Values{"Action": {"CreateLaunchTemplate"}, "LaunchTemplateName": {"a b"}, "LaunchTemplateData.ImageId": {ami}}, 400, "InvalidLaunchTemplateName.MalformedException"},
		{"unsupported version", url.Values{"Action": {"DescribeInstances"}, "Version": {"2014-01-01"}}, 400, "InvalidParameterValue"},
		{"CreateTags without resources", url.Values{"Action": {"CreateTags"}, "Tag.1.Key": {"k"}}, 400, "MissingParameter"},
		{"DescribeInstanceAttribute without attribute", url.Values{"Action": {"DescribeInstanceAttribute"}, "InstanceId": {"i-0123456789abcdef0"}}, 400, "MissingParameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, ex, body := postForm(t, e.url, tt.form)
			if status != tt.wantStatus || ex.Code != tt.wantCode {
				t.Errorf("got HTTP %d %s, want HTTP %d %s\n%s", status, ex.Code, tt.wantStatus, tt.wantCode, body)
			}
			if ex.RequestID == "" || ex.Message == "" {
				t.Errorf("error without RequestID or Message:\n%s", body)
			}
		})
	}
	// The unknown action is audited like any call.
	events, err := e.admin.Audit(e.ctx, trail.AuditQuery{Caller: "AKIARAWCLIENT", ErrorCode: "MissingParameter"})
	e.must(err)
	if len(events) == 0 {
		t.Errorf("no audit events for the raw client's MissingParameter calls")
	}
}

// TestIntegrationInvalidParameters drives the errors through the SDK, checking codes the
// way karpenter-provider-aws does (smithy.APIError.ErrorCode()).
func TestIntegrationInvalidParameters(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, arm64 := e.discover()
	run := func(in *ec2.RunInstancesInput) error {
		if in.MinCount == nil {
			in.MinCount, in.MaxCount = aws.Int32(1), aws.Int32(1)
		}
		_, err := e.ec2.RunInstances(e.ctx, in)
		return err
	}
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"describe unknown instance", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
			return err
		}, "InvalidInstanceID.NotFound"},
		{"describe malformed instance id", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"instance-1"}})
			return err
		}, "InvalidInstanceID.Malformed"},
		{"terminate unknown instance", func() error {
			_, err := e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
			return err
		}, "InvalidInstanceID.NotFound"},
		{"unknown instance type", func() error {
			return run(&ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m99.huge"})
		}, "InvalidParameterValue"},
		{"architecture mismatch", func() error {
			return run(&ec2.RunInstancesInput{ImageId: aws.String(arm64), InstanceType: "m6i.large"})
		}, "InvalidParameterValue"},
		{"unknown image", func() error {
			return run(&ec2.RunInstancesInput{ImageId: aws.String("ami-0123456789abcdef0"), InstanceType: "m6i.large"})
		}, "InvalidAMIID.NotFound"},
		{"unknown subnet", func() error {
			return run(&ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m6i.large", SubnetId: aws.String("subnet-0123456789abcdef0")})
		}, "InvalidSubnetID.NotFound"},
		{"unknown security group", func() error {
			return run(&ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m6i.large", SecurityGroupIds: []string{"sg-0123456789abcdef0"}})
		}, "InvalidGroup.NotFound"},
		{"zone eu-west-2d does not exist", func() error {
			return run(&ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m6i.large", Placement: &ec2types.Placement{AvailabilityZone: aws.String("eu-west-2d")}})
		}, "InvalidParameterValue"},
		{"subnet in another zone", func() error {
			return run(&ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m6i.large", SubnetId: subnets[0].SubnetId,
				Placement: &ec2types.Placement{AvailabilityZone: aws.String("eu-west-2b")}})
		}, "InvalidParameterCombination"},
		{"launch template name not found", func() error {
			_, err := e.ec2.DescribeLaunchTemplates(e.ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"nope"}})
			return err
		}, "InvalidLaunchTemplateName.NotFoundException"},
		{"launch template id not found", func() error {
			_, err := e.ec2.DeleteLaunchTemplate(e.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String("lt-0123456789abcdef0")})
			return err
		}, "InvalidLaunchTemplateId.NotFound"},
		{"launch template id malformed", func() error {
			_, err := e.ec2.DeleteLaunchTemplate(e.ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String("template-1")})
			return err
		}, "InvalidLaunchTemplateId.Malformed"},
		{"fleet with missing template", func() error {
			_, err := e.fleet(e.ec2, "nope", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{override("m5.large", subnets[0])}, nil)
			return err
		}, "InvalidLaunchTemplateName.NotFoundException"},
		{"unknown filter", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("colour"), Values: []string{"blue"}}}})
			return err
		}, "InvalidParameterValue"},
		{"MaxResults out of range", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(2)})
			return err
		}, "InvalidParameterValue"},
		{"MaxResults with InstanceIds", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(10), InstanceIds: []string{"i-0123456789abcdef0"}})
			return err
		}, "InvalidParameterCombination"},
		{"bad NextToken", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{NextToken: aws.String("garbage!")})
			return err
		}, "InvalidPaginationToken"},
		{"reserved tag key", func() error {
			_, err := e.ec2.CreateTags(e.ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(subnets[0].SubnetId)},
				Tags: []ec2types.Tag{{Key: aws.String("aws:owner"), Value: aws.String("x")}}})
			return err
		}, "InvalidParameterValue"},
		{"reserved tag key on a launch template", func() error {
			_, err := e.ec2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("system-tagged"),
				LaunchTemplateData: &ec2types.RequestLaunchTemplateData{InstanceType: "m6i.large"},
				TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
					Tags: []ec2types.Tag{{Key: aws.String("aws:ec2launchtemplate:id"), Value: aws.String("lt-mine")}}}}})
			return err
		}, "InvalidParameterValue"},
		{"tag unknown resource", func() error {
			_, err := e.ec2.CreateTags(e.ctx, &ec2.CreateTagsInput{Resources: []string{"i-0123456789abcdef0"},
				Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
			return err
		}, "InvalidInstanceID.NotFound"},
		{"unknown instance attribute", func() error {
			_, err := e.ec2.DescribeInstanceAttribute(e.ctx, &ec2.DescribeInstanceAttributeInput{InstanceId: aws.String("i-0123456789abcdef0"), Attribute: "userData"})
			return err
		}, "InvalidInstanceID.NotFound"},
		{"unknown volume type", func() error {
			_, err := e.ec2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("badvol"),
				LaunchTemplateData: &ec2types.RequestLaunchTemplateData{BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{
					DeviceName: aws.String("/dev/xvda"), Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeType: "gp9"}}}}})
			return err
		}, "InvalidParameterValue"},
		{"DescribeInstanceTypes unknown type", func() error {
			_, err := e.ec2.DescribeInstanceTypes(e.ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"x9.mega"}})
			return err
		}, "InvalidInstanceType"},
		{"DescribeAvailabilityZones unknown zone", func() error {
			_, err := e.ec2.DescribeAvailabilityZones(e.ctx, &ec2.DescribeAvailabilityZonesInput{ZoneNames: []string{"eu-west-2d"}})
			return err
		}, "InvalidParameterValue"},
	}
	_ = groups
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errCode(tt.call()); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	// Duplicate template name.
	e.createTemplate("dup", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	_, err := e.ec2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("dup"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amd64)}})
	if errCode(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
		t.Errorf("duplicate template: %v", err)
	}
}
