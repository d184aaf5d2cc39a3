package fakeec2_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
)

// These tests replay the request shapes of karpenter-provider-aws v1.15.0's
// pkg/providers (inputs copied from its non-test sources), through the SDK and its
// paginators, and check the answers are the ones AWS gives.

// TestProviderPagedDescribes sends each provider Describe with its MaxResults and pages it
// to the end. MaxResults above an action's page size is capped, as on AWS.
func TestProviderPagedDescribes(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, _ := e.discover()
	e.launch("m6i.large", amd64, subnets[0], 2, map[string]string{"karpenter.sh/nodepool": "general",
		"karpenter.k8s.aws/ec2nodeclass": "default", "eks:eks-cluster-name": "ziba-production"})
	sel := []ec2types.Filter{f("tag:karpenter.sh/discovery", "ziba-production")}
	tests := []struct {
		name    string
		maxPage int // the page size AWS caps at
		pages   func() (items, pages, biggest int, err error)
	}{
		{"instancetype DescribeInstanceTypes", 100, func() (int, int, int, error) {
			p := ec2.NewDescribeInstanceTypesPaginator(e.ec2, &ec2.DescribeInstanceTypesInput{
				Filters: []ec2types.Filter{f("supported-virtualization-type", "hvm"),
					f("processor-info.supported-architecture", "x86_64", "arm64")},
				MaxResults: aws.Int32(100),
			})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeInstanceTypesOutput) int { return len(o.InstanceTypes) }), err
			})
		}},
		{"DescribeInstanceTypes MaxResults above 100 is capped", 100, func() (int, int, int, error) {
			p := ec2.NewDescribeInstanceTypesPaginator(e.ec2, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(500)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeInstanceTypesOutput) int { return len(o.InstanceTypes) }), err
			})
		}},
		{"instancetype DescribeInstanceTypeOfferings", 1000, func() (int, int, int, error) {
			p := ec2.NewDescribeInstanceTypeOfferingsPaginator(e.ec2, &ec2.DescribeInstanceTypeOfferingsInput{
				LocationType: ec2types.LocationTypeAvailabilityZone, MaxResults: aws.Int32(1000)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeInstanceTypeOfferingsOutput) int { return len(o.InstanceTypeOfferings) }), err
			})
		}},
		{"pricing DescribeSpotPriceHistory MaxResults 2000", 1000, func() (int, int, int, error) {
			p := ec2.NewDescribeSpotPriceHistoryPaginator(e.ec2, &ec2.DescribeSpotPriceHistoryInput{
				ProductDescriptions: []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"},
				StartTime:           aws.Time(time.Now()), MaxResults: aws.Int32(2000)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeSpotPriceHistoryOutput) int { return len(o.SpotPriceHistory) }), err
			})
		}},
		{"instance List DescribeInstances", 1000, func() (int, int, int, error) {
			p := ec2.NewDescribeInstancesPaginator(e.ec2, &ec2.DescribeInstancesInput{
				Filters: []ec2types.Filter{f("tag-key", "karpenter.sh/nodepool"), f("tag-key", "karpenter.k8s.aws/ec2nodeclass"),
					f("tag:eks:eks-cluster-name", "ziba-production"),
					f("instance-state-name", "pending", "running", "stopping", "stopped", "shutting-down")},
				MaxResults: aws.Int32(1000)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeInstancesOutput) int {
					n := 0
					for _, r := range o.Reservations {
						n += len(r.Instances)
					}
					return n
				}), err
			})
		}},
		{"subnet DescribeSubnets", 1000, func() (int, int, int, error) {
			p := ec2.NewDescribeSubnetsPaginator(e.ec2, &ec2.DescribeSubnetsInput{Filters: sel, MaxResults: aws.Int32(500)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeSubnetsOutput) int { return len(o.Subnets) }), err
			})
		}},
		{"securitygroup DescribeSecurityGroups", 1000, func() (int, int, int, error) {
			p := ec2.NewDescribeSecurityGroupsPaginator(e.ec2, &ec2.DescribeSecurityGroupsInput{Filters: sel, MaxResults: aws.Int32(500)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeSecurityGroupsOutput) int { return len(o.SecurityGroups) }), err
			})
		}},
		{"amifamily DescribeImages", 1000, func() (int, int, int, error) {
			p := ec2.NewDescribeImagesPaginator(e.ec2, &ec2.DescribeImagesInput{
				Filters: []ec2types.Filter{f("name", "amazon-eks-node-al2023-*"), f("state", "available")},
				Owners:  []string{"amazon"}, IncludeDeprecated: aws.Bool(true), MaxResults: aws.Int32(1000)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeImagesOutput) int { return len(o.Images) }), err
			})
		}},
		{"launchtemplate DescribeLaunchTemplates", 200, func() (int, int, int, error) {
			p := ec2.NewDescribeLaunchTemplatesPaginator(e.ec2, &ec2.DescribeLaunchTemplatesInput{
				Filters:    []ec2types.Filter{f("tag:eks:eks-cluster-name", "ziba-production"), f("tag:karpenter.k8s.aws/ec2nodeclass", "default")},
				MaxResults: aws.Int32(200)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeLaunchTemplatesOutput) int { return len(o.LaunchTemplates) }), err
			})
		}},
		{"capacityreservation DescribeCapacityReservations", 1000, func() (int, int, int, error) {
			p := ec2.NewDescribeCapacityReservationsPaginator(e.ec2, &ec2.DescribeCapacityReservationsInput{
				Filters: []ec2types.Filter{f("state", "active"), f("owner-id", "123456789012"), f("tag-key", "team"),
					f("instance-match-criteria", "targeted")},
				MaxResults: aws.Int32(1000)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeCapacityReservationsOutput) int { return len(o.CapacityReservations) }), err
			})
		}},
		{"aws CLI v1 describe-volumes MaxResults 1000", 500, func() (int, int, int, error) {
			p := ec2.NewDescribeVolumesPaginator(e.ec2, &ec2.DescribeVolumesInput{MaxResults: aws.Int32(1000)})
			return drain(p.HasMorePages, func() (int, error) {
				out, err := p.NextPage(e.ctx)
				return lenOr(out, func(o *ec2.DescribeVolumesOutput) int { return len(o.Volumes) }), err
			})
		}},
	}
	want := map[string]int{ // what the seed account holds
		"instance List DescribeInstances": 2, "subnet DescribeSubnets": len(subnets), "securitygroup DescribeSecurityGroups": len(groups),
		"launchtemplate DescribeLaunchTemplates": 0, "capacityreservation DescribeCapacityReservations": 0,
		"aws CLI v1 describe-volumes MaxResults 1000": 2,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, pages, biggest, err := tt.pages()
			if err != nil {
				t.Fatalf("paging: %v", err)
			}
			if biggest > tt.maxPage {
				t.Errorf("a page held %d items, more than AWS's page size %d", biggest, tt.maxPage)
			}
			if n, ok := want[tt.name]; ok && items != n {
				t.Errorf("got %d items over %d pages, want %d", items, pages, n)
			}
			if _, ok := want[tt.name]; !ok && items == 0 {
				t.Errorf("no items")
			}
		})
	}
}

// TestProviderMaxResultsBounds: above the page size is capped; below the minimum is the
// InvalidParameterValue AWS answers.
func TestProviderMaxResultsBounds(t *testing.T) {
	e := newEnv(t)
	out, err := e.ec2.DescribeInstanceTypes(e.ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(1000)})
	e.must(err)
	all, err := e.ec2.DescribeInstanceTypes(e.ctx, &ec2.DescribeInstanceTypesInput{})
	e.must(err)
	if len(all.InstanceTypes) > 100 && (len(out.InstanceTypes) != 100 || out.NextToken == nil) {
		t.Errorf("MaxResults 1000 gave %d types (next %v), want a page of 100 and a token", len(out.InstanceTypes), out.NextToken != nil)
	}
	spot, err := e.ec2.DescribeSpotPriceHistory(e.ctx, &ec2.DescribeSpotPriceHistoryInput{MaxResults: aws.Int32(2000)})
	e.must(err)
	if len(spot.SpotPriceHistory) > 1000 {
		t.Errorf("DescribeSpotPriceHistory page of %d, more than 1000", len(spot.SpotPriceHistory))
	}
	tests := []struct {
		name string
		call func() error
	}{
		{"DescribeInstances 4", func() error {
			_, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(4)})
			return err
		}},
		{"DescribeInstanceStatus 1", func() error {
			_, err := e.ec2.DescribeInstanceStatus(e.ctx, &ec2.DescribeInstanceStatusInput{MaxResults: aws.Int32(1)})
			return err
		}},
		{"DescribeVolumes 3", func() error {
			_, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{MaxResults: aws.Int32(3)})
			return err
		}},
		{"DescribeLaunchTemplates 0", func() error {
			_, err := e.ec2.DescribeLaunchTemplates(e.ctx, &ec2.DescribeLaunchTemplatesInput{MaxResults: aws.Int32(0)})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if errCode(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "Expecting a value greater than") {
				t.Errorf("got %v, want InvalidParameterValue", err)
			}
		})
	}
}

// TestProviderInstanceStatus replays instancestatus.List's three filter sets and checks
// every documented DescribeInstanceStatus filter.
func TestProviderInstanceStatus(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	ids := e.launch("m6i.large", amd64, subnets[0], 1, nil)
	e.clock.Advance(5 * time.Second) // past the boot delay: running
	pending := e.launch("m6i.large", amd64, subnets[1], 1, nil)
	for _, fs := range [][]ec2types.Filter{
		{f("instance-status.status", "impaired")},
		{f("system-status.status", "impaired")},
		{f("event.code", "instance-reboot", "system-reboot", "system-maintenance", "instance-retirement", "instance-stop")},
	} {
		p := ec2.NewDescribeInstanceStatusPaginator(e.ec2, &ec2.DescribeInstanceStatusInput{Filters: fs})
		for p.HasMorePages() {
			out, err := p.NextPage(e.ctx)
			if err != nil {
				t.Fatalf("%s: %v", aws.ToString(fs[0].Name), err)
			}
			if len(out.InstanceStatuses) != 0 {
				t.Errorf("%s: %d statuses, want none (nothing is impaired, no events)", aws.ToString(fs[0].Name), len(out.InstanceStatuses))
			}
		}
	}
	zone := aws.ToString(subnets[0].AvailabilityZone)
	tests := []struct {
		name   string
		filter ec2types.Filter
		all    bool
		want   []string
	}{
		{"event.code", f("event.code", "system-maintenance"), true, nil},
		{"event.description", f("event.description", "*"), true, nil},
		{"event.not-after", f("event.not-after", "2026-11-03T00:00:00.000Z"), true, nil},
		{"event.not-before", f("event.not-before", "2026-11-01T00:00:00.000Z"), true, nil},
		{"instance-status.status ok", f("instance-status.status", "ok"), false, ids},
		{"instance-status.status initializing", f("instance-status.status", "initializing"), true, pending},
		{"system-status.status ok", f("system-status.status", "ok"), true, ids},
		{"instance-status.reachability", f("instance-status.reachability", "passed"), true, ids},
		{"system-status.reachability", f("system-status.reachability", "initializing"), true, pending},
		{"instance-state-name", f("instance-state-name", "pending"), true, pending},
		{"instance-state-code", f("instance-state-code", "16"), true, ids},
		{"availability-zone", f("availability-zone", zone), true, ids},
		{"without IncludeAllInstances only running", f("availability-zone", "eu-west-2*"), false, ids},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.ec2.DescribeInstanceStatus(e.ctx, &ec2.DescribeInstanceStatusInput{
				Filters: []ec2types.Filter{tt.filter}, IncludeAllInstances: aws.Bool(tt.all)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range out.InstanceStatuses {
				got = append(got, aws.ToString(s.InstanceId))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
	_, err := e.ec2.DescribeInstanceStatus(e.ctx, &ec2.DescribeInstanceStatusInput{Filters: []ec2types.Filter{f("colour", "blue")}})
	if errCode(err) != "InvalidParameterValue" {
		t.Errorf("unknown filter: %v, want InvalidParameterValue", err)
	}
}

// TestProviderPlacementGroups replays placementgroup.Query's input: the lab has no
// placement groups.
func TestProviderPlacementGroups(t *testing.T) {
	e := newEnv(t)
	state := f("state", "available")
	tests := []struct {
		name string
		in   *ec2.DescribePlacementGroupsInput
		want string
	}{
		{"all available", &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{state}}, ""},
		{"every documented filter", &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{state, f("group-name", "x*"),
			f("group-arn", "arn:*"), f("spread-level", "rack"), f("strategy", "cluster"), f("tag:team", "a"), f("tag-key", "team")}}, ""},
		{"by name", &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{state}, GroupNames: []string{"gpu-cluster"}}, "InvalidPlacementGroup.Unknown"},
		{"by id", &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{state}, GroupIds: []string{"pg-0123456789abcdef0"}}, "InvalidPlacementGroupId.NotFound"},
		{"malformed id", &ec2.DescribePlacementGroupsInput{GroupIds: []string{"group-1"}}, "InvalidPlacementGroupId.Malformed"},
		{"unknown filter", &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{f("colour", "blue")}}, "InvalidParameterValue"},
		{"DryRun", &ec2.DescribePlacementGroupsInput{DryRun: aws.Bool(true), Filters: []ec2types.Filter{state}}, "DryRunOperation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.ec2.DescribePlacementGroups(e.ctx, tt.in)
			if got := errCode(err); got != tt.want {
				t.Fatalf("got %q (%v), want %q", got, err, tt.want)
			}
			if err == nil && len(out.PlacementGroups) != 0 {
				t.Errorf("got %d placement groups, want none", len(out.PlacementGroups))
			}
		})
	}
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{{DenyActions: []string{"ec2:DescribePlacementGroups"}}}}))
	if _, err := e.ec2.DescribePlacementGroups(e.ctx, tests[0].in); errCode(err) != "UnauthorizedOperation" {
		t.Errorf("denied: %v, want UnauthorizedOperation", err)
	}
}

// TestProviderRebootInstances replays instance.Reboot's input.
func TestProviderRebootInstances(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	running := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	e.clock.Advance(5 * time.Second)
	pending := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	gone := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	_, err := e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{gone}})
	e.must(err)
	tests := []struct {
		name string
		in   *ec2.RebootInstancesInput
		want string
	}{
		{"running", &ec2.RebootInstancesInput{InstanceIds: []string{running}}, ""},
		{"DryRun", &ec2.RebootInstancesInput{InstanceIds: []string{running}, DryRun: aws.Bool(true)}, "DryRunOperation"},
		{"DryRun of a missing instance", &ec2.RebootInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}, DryRun: aws.Bool(true)}, "InvalidInstanceID.NotFound"},
		{"pending", &ec2.RebootInstancesInput{InstanceIds: []string{pending}}, "IncorrectState"},
		{"shutting down", &ec2.RebootInstancesInput{InstanceIds: []string{gone}}, "IncorrectState"},
		{"unknown", &ec2.RebootInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}}, "InvalidInstanceID.NotFound"},
		{"malformed", &ec2.RebootInstancesInput{InstanceIds: []string{"node-1"}}, "InvalidInstanceID.Malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.ec2.RebootInstances(e.ctx, tt.in)
			if got := errCode(err); got != tt.want {
				t.Errorf("got %q (%v), want %q", got, err, tt.want)
			}
		})
	}
	if got := e.describe(running); len(got) != 1 || got[0].State.Name != ec2types.InstanceStateNameRunning {
		t.Errorf("after reboot: %+v, want running", got)
	}
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{{DenyActions: []string{"ec2:RebootInstances"}}}}))
	if _, err := e.ec2.RebootInstances(e.ctx, &ec2.RebootInstancesInput{InstanceIds: []string{running}}); errCode(err) != "UnauthorizedOperation" {
		t.Errorf("denied: %v, want UnauthorizedOperation", err)
	}
}

// TestProviderNodeClassValidation replays the EC2NodeClass validation controller
// (pkg/controllers/nodeclass/validation.go): a real CreateLaunchTemplate as EnsureAll
// sends it, then CreateFleet and RunInstances with DryRun, classified as the controller
// does, under policies that allow and deny.
func TestProviderNodeClassValidation(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, _ := e.discover()
	tests := []struct {
		name   string
		policy authz.Policy
		fault  *fakeec2.Fault
		want   string // the ValidationSucceeded=False reason; "" for True
	}{
		{"allowed", authz.Policy{}, nil, ""},
		{"capacity fault does not fail a DryRun", authz.Policy{},
			&fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "m5.large"}, ""},
		{"CreateLaunchTemplate denied", deny("ec2:CreateLaunchTemplate"), nil, "CreateLaunchTemplateAuthCheckFailed"},
		{"CreateFleet denied", deny("ec2:CreateFleet"), nil, "CreateFleetAuthCheckFailed"},
		{"RunInstances denied", deny("ec2:RunInstances"), nil, "RunInstancesAuthCheckFailed"},
		{"instance family not allowed", authz.Policy{Statements: []authz.PolicyStatement{{AllowedInstanceFamilies: []string{"c7g"}}}}, nil,
			"CreateFleetAuthCheckFailed"},
		{"required tag missing", authz.Policy{Statements: []authz.PolicyStatement{{RequiredTags: []string{"cost-centre"}}}}, nil,
			"CreateFleetAuthCheckFailed"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.must(e.admin.SetPolicy(e.ctx, tt.policy))
			e.must(e.admin.ClearFaults(e.ctx, ""))
			if tt.fault != nil {
				_, err := e.admin.SetFault(e.ctx, *tt.fault)
				e.must(err)
			}
			name := "karpenter.k8s.aws/1234567890" + string(rune('a'+i))
			reason, err := validateNodeClass(e, name, amd64, groups, subnets)
			if reason != tt.want {
				t.Errorf("reason %q (%v), want %q", reason, err, tt.want)
			}
			if tt.want != "" {
				if !strings.Contains(err.Error(), "Encoded authorization failure message: ") {
					t.Errorf("UnauthorizedOperation without an encoded message: %v", err)
				}
				msg := err.Error()[strings.LastIndex(err.Error(), ": ")+2:]
				if decoded, derr := e.admin.DecodeAuthorizationMessage(e.ctx, msg); derr != nil || decoded == "" {
					t.Errorf("decoding %q: %q, %v", msg, decoded, derr)
				}
			}
		})
	}
	if got := e.describe(); len(got) != 0 {
		t.Errorf("validation launched %d instances", len(got))
	}
	// The fault a DryRun ignored still fires on a real launch.
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{}))
	e.must(e.admin.ClearFaults(e.ctx, ""))
	_, err := e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "m5.large", Remaining: 1})
	e.must(err)
	_, err = e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{DryRun: aws.Bool(true), ImageId: aws.String(amd64), InstanceType: "m5.large",
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: subnets[0].SubnetId})
	if errCode(err) != "DryRunOperation" {
		t.Errorf("DryRun under a capacity fault: %v", err)
	}
	_, err = e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m5.large",
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: subnets[0].SubnetId}, noRetry)
	if errCode(err) != "InsufficientInstanceCapacity" {
		t.Errorf("real launch after the DryRun: %v, want InsufficientInstanceCapacity", err)
	}
}

func deny(actions ...string) authz.Policy {
	return authz.Policy{Statements: []authz.PolicyStatement{{DenyActions: actions}}}
}

// validateNodeClass sends what the validation controller sends and returns the reason it
// would set (its error classification: DryRunOperation passes, UnauthorizedOperation
// fails with the step's reason, anything else is an unexpected error).
func validateNodeClass(e *env, name, ami string, groups []string, subnets []ec2types.Subnet) (string, error) {
	tags := []ec2types.Tag{{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("ziba-production")},
		{Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String("default")},
		{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("general")}}
	classify := func(err error, dryRun bool, reason string) (string, error) {
		switch code := errCode(err); {
		case err == nil && !dryRun, dryRun && code == "DryRunOperation":
			return "", nil
		case code == "UnauthorizedOperation":
			return reason, err
		default:
			return "unexpected", err
		}
	}
	_, err := e.ec2.CreateLaunchTemplate(e.ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"),
				Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(20), VolumeType: ec2types.VolumeTypeGp3,
					Encrypted: aws.Bool(true), DeleteOnTermination: aws.Bool(true)}}},
			IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("ziba-production_123")},
			Monitoring:         &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(false)},
			SecurityGroupIds:   groups,
			UserData:           aws.String(base64.StdEncoding.EncodeToString([]byte("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"))),
			ImageId:            aws.String(ami),
			MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{HttpEndpoint: "enabled", HttpProtocolIpv6: "disabled",
				HttpPutResponseHopLimit: aws.Int32(1), HttpTokens: "required", InstanceMetadataTags: "disabled"},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: tags}},
			Placement:         &ec2types.LaunchTemplatePlacementRequest{Tenancy: ec2types.TenancyDefault},
			EnclaveOptions:    &ec2types.LaunchTemplateEnclaveOptionsRequest{Enabled: aws.Bool(false)},
		},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tags}},
	})
	if reason, err := classify(err, false, "CreateLaunchTemplateAuthCheckFailed"); reason != "" {
		return reason, err
	}
	var overrides []ec2types.FleetLaunchTemplateOverridesRequest
	for _, typ := range []string{"m5.large"} {
		for _, sn := range subnets {
			overrides = append(overrides, ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(typ), SubnetId: sn.SubnetId})
		}
	}
	tagSpecs := func(types ...ec2types.ResourceType) []ec2types.TagSpecification {
		var out []ec2types.TagSpecification
		for _, rt := range types {
			out = append(out, ec2types.TagSpecification{ResourceType: rt, Tags: tags})
		}
		return out
	}
	_, err = e.ec2.CreateFleet(e.ctx, &ec2.CreateFleetInput{
		DryRun: aws.Bool(true), Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(name), Version: aws.String("$Latest")},
			Overrides:                   overrides}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand,
			TotalTargetCapacity: aws.Int32(1)},
		TagSpecifications: tagSpecs(ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeFleet),
		OnDemandOptions:   &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice},
	}, func(o *ec2.Options) { o.Retryer = aws.NopRetryer{} })
	if reason, err := classify(err, true, "CreateFleetAuthCheckFailed"); reason != "" {
		return reason, err
	}
	var first error
	for i, sn := range subnets {
		_, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{
			DryRun: aws.Bool(true), MaxCount: aws.Int32(1), MinCount: aws.Int32(1),
			LaunchTemplate:    &ec2types.LaunchTemplateSpecification{LaunchTemplateName: aws.String(name), Version: aws.String("$Latest")},
			InstanceType:      "m5.large",
			NetworkInterfaces: []ec2types.InstanceNetworkInterfaceSpecification{{DeviceIndex: aws.Int32(0), SubnetId: sn.SubnetId}},
			TagSpecifications: tagSpecs(ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeNetworkInterface),
		}, func(o *ec2.Options) { o.Retryer = aws.NopRetryer{} })
		if errCode(err) == "DryRunOperation" {
			return "", nil // any subnet passing is enough
		}
		if i == 0 {
			first = err
		}
	}
	return classify(first, true, "RunInstancesAuthCheckFailed")
}

// drain pages to the end: total items, pages and the largest page.
func drain(more func() bool, next func() (int, error)) (items, pages, biggest int, err error) {
	for more() {
		n, err := next()
		if err != nil {
			return items, pages, biggest, err
		}
		items, pages, biggest = items+n, pages+1, max(biggest, n)
	}
	return items, pages, biggest, nil
}

func lenOr[T any](out *T, n func(*T) int) int {
	if out == nil {
		return 0
	}
	return n(out)
}

// TestProviderAWSCLI sends the new and widened calls with every aws CLI on the machine;
// v1 pages describe-volumes with MaxResults=1000.
func TestProviderAWSCLI(t *testing.T) {
	clis := karplabtest.AWSCLIs(t)
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	id := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	e.clock.Advance(5 * time.Second)
	tests := []struct {
		name    string
		args    []string
		wantErr string // an error code in the CLI's output; "" for success
		wantOut string // a substring of the JSON
	}{
		{"describe-volumes paged by 1000", []string{"ec2", "describe-volumes", "--page-size", "1000"}, "", `"VolumeType": "gp3"`},
		{"describe-spot-price-history page 2000", []string{"ec2", "describe-spot-price-history", "--page-size", "2000",
			"--product-descriptions", "Linux/UNIX", "--max-items", "5"}, "", `"SpotPrice"`},
		{"describe-instance-status event.code", []string{"ec2", "describe-instance-status", "--filters",
			"Name=event.code,Values=system-maintenance,instance-retirement"}, "", `"InstanceStatuses": []`},
		{"describe-placement-groups", []string{"ec2", "describe-placement-groups", "--filters", "Name=state,Values=available"}, "", `"PlacementGroups": []`},
		{"describe-placement-groups by name", []string{"ec2", "describe-placement-groups", "--group-names", "gpu"}, "InvalidPlacementGroup.Unknown", ""},
		{"reboot-instances", []string{"ec2", "reboot-instances", "--instance-ids", id}, "", ""},
		{"reboot-instances dry run", []string{"ec2", "reboot-instances", "--dry-run", "--instance-ids", id}, "DryRunOperation", ""},
	}
	for _, cli := range clis {
		for _, tt := range tests {
			t.Run(cli.Name+"/"+tt.name, func(t *testing.T) {
				stdout, stderr, err := cli.Run(t, e.url, "AKIACOURSELEARNER", tt.args...)
				out := stdout + stderr
				if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(out, tt.wantErr)) {
					t.Fatalf("aws %s: %v, want error %q\n%s", strings.Join(tt.args, " "), err, tt.wantErr, out)
				}
				if !strings.Contains(out, tt.wantOut) {
					t.Errorf("output lacks %q:\n%s", tt.wantOut, out)
				}
			})
		}
	}
}
