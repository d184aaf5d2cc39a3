package nodeclass_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/awslabs/operatorpkg/status"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	v1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
	"github.com/karplab/karplab/cluster/karpenter/nodeclass"
	"github.com/karplab/karplab/fakeec2"
)

// The seed EC2NodeClass, verbatim from the course text (kept by package v1's tests).
const seedFile = "../apis/v1/testdata/seed-ec2nodeclass.yaml"

var now = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// emulator starts the EC2 emulator on a real listener and returns it with an SDK client
// pointed at it (one attempt per call, so injected failures show at once).
func emulator(t *testing.T) (*fakeec2.Server, *ec2.Client) {
	t.Helper()
	srv, err := fakeec2.New(fakeec2.Options{})
	if err != nil {
		t.Fatalf("starting emulator: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	client := ec2.NewFromConfig(aws.Config{
		Region:      fakeec2.DefaultRegion,
		Credentials: credentials.NewStaticCredentialsProvider("AKIAKARPLABTEST", "secret", ""),
	}, func(o *ec2.Options) {
		o.BaseEndpoint = aws.String(hs.URL)
		o.RetryMaxAttempts = 1
	})
	return srv, client
}

func resolver(client nodeclass.EC2API, k8sVersion string) *nodeclass.Resolver {
	return nodeclass.NewResolver(client, nodeclass.ResolverOptions{
		ClusterName: "karplab", Region: fakeec2.DefaultRegion, KubernetesVersion: k8sVersion,
		Clock: clocktesting.NewFakeClock(now),
	})
}

func seed(t *testing.T) *v1.EC2NodeClass {
	t.Helper()
	b, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	nc := &v1.EC2NodeClass{}
	if err := yaml.UnmarshalStrict(b, nc); err != nil {
		t.Fatal(err)
	}
	nc.Generation = 1
	return nc
}

func archReq(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}
}

// condition is the part of a status condition a test pins down.
type condition struct {
	Type, Reason, Message string
	Status                metav1.ConditionStatus
}

func conditions(nc *v1.EC2NodeClass) map[string]condition {
	m := map[string]condition{}
	for _, c := range nc.Status.Conditions {
		m[c.Type] = condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
	}
	return m
}

func trueCond(t string) condition {
	return condition{Type: t, Status: metav1.ConditionTrue, Reason: t}
}

var ignoreIDs = cmpopts.IgnoreFields(v1.Subnet{}, "ID")

func TestResolveSeed(t *testing.T) {
	_, client := emulator(t)
	nc := seed(t)
	if err := resolver(client, "").Resolve(context.Background(), nc); err != nil {
		t.Fatalf("Resolve: %v", err)
	}

	// The default VPC's three private subnets, one per zone, tagged for discovery.
	wantSubnets := []v1.Subnet{
		{Zone: "eu-west-2a", ZoneID: "euw2-az2"},
		{Zone: "eu-west-2b", ZoneID: "euw2-az3"},
		{Zone: "eu-west-2c", ZoneID: "euw2-az1"},
	}
	if diff := cmp.Diff(wantSubnets, nc.Status.Subnets, ignoreIDs); diff != "" {
		t.Errorf("subnets (-want +got):\n%s", diff)
	}
	// Cross-check the IDs with EC2: each is a tagged subnet of its zone.
	for _, s := range nc.Status.Subnets {
		out, err := client.DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{SubnetIds: []string{s.ID}})
		if err != nil || len(out.Subnets) != 1 {
			t.Fatalf("DescribeSubnets(%s) = %v, %v", s.ID, out, err)
		}
		got := out.Subnets[0]
		if aws.ToString(got.AvailabilityZone) != s.Zone || !hasTag(got.Tags, "karpenter.sh/discovery", "ziba-production") {
			t.Errorf("subnet %s: zone %s tags %v", s.ID, aws.ToString(got.AvailabilityZone), got.Tags)
		}
	}

	// Only the tagged node group, not the VPC's default group.
	if diff := cmp.Diff([]v1.SecurityGroup{{Name: "ziba-production-node"}}, nc.Status.SecurityGroups,
		cmpopts.IgnoreFields(v1.SecurityGroup{}, "ID")); diff != "" {
		t.Errorf("security groups (-want +got):\n%s", diff)
	}
	if len(nc.Status.SecurityGroups) == 1 && !strings.HasPrefix(nc.Status.SecurityGroups[0].ID, "sg-") {
		t.Errorf("security group ID %q", nc.Status.SecurityGroups[0].ID)
	}

	// al2023@latest: the newest AL2023 EKS image per architecture.
	wantAMIs := []v1.AMI{
		{Name: "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101", Requirements: archReq("amd64")},
		{Name: "amazon-eks-node-al2023-arm64-standard-1.37-v20261101", Requirements: archReq("arm64")},
	}
	if diff := cmp.Diff(wantAMIs, nc.Status.AMIs, cmpopts.IgnoreFields(v1.AMI{}, "ID")); diff != "" {
		t.Errorf("amis (-want +got):\n%s", diff)
	}
	for _, a := range nc.Status.AMIs {
		out, err := client.DescribeImages(context.Background(), &ec2.DescribeImagesInput{ImageIds: []string{a.ID}})
		if err != nil || len(out.Images) != 1 || aws.ToString(out.Images[0].Name) != a.Name {
			t.Errorf("AMI %s (%s) not found by ID: %v %v", a.ID, a.Name, out, err)
		}
	}
	if ami, ok := nc.AMIFor("arm64"); !ok || ami.Name != wantAMIs[1].Name {
		t.Errorf("AMIFor(arm64) = %v, %v", ami, ok)
	}

	if want := nc.InstanceProfileName("karplab", "eu-west-2"); nc.Status.InstanceProfile != want || !strings.HasPrefix(want, "karplab_") {
		t.Errorf("instanceProfile = %q, want %q", nc.Status.InstanceProfile, want)
	}

	wantConds := map[string]condition{
		v1.ConditionTypeSubnetsReady:         trueCond(v1.ConditionTypeSubnetsReady),
		v1.ConditionTypeSecurityGroupsReady:  trueCond(v1.ConditionTypeSecurityGroupsReady),
		v1.ConditionTypeAMIsReady:            trueCond(v1.ConditionTypeAMIsReady),
		v1.ConditionTypeInstanceProfileReady: trueCond(v1.ConditionTypeInstanceProfileReady),
		status.ConditionReady:                trueCond(status.ConditionReady),
	}
	if diff := cmp.Diff(wantConds, conditions(nc)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if !nc.StatusConditions().Root().IsTrue() {
		t.Errorf("not Ready")
	}

	// Resolving again changes nothing (no status churn for the controller to patch).
	again := nc.DeepCopy()
	if err := resolver(client, "").Resolve(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(nc.Status, again.Status); diff != "" {
		t.Errorf("second resolution differs (-first +second):\n%s", diff)
	}
}

func hasTag(tags []ec2types.Tag, k, v string) bool {
	for _, t := range tags {
		if aws.ToString(t.Key) == k && aws.ToString(t.Value) == v {
			return true
		}
	}
	return false
}

func TestResolveNothingMatches(t *testing.T) {
	_, client := emulator(t)
	nobody := map[string]string{"karpenter.sh/discovery": "nobody"}
	for _, tc := range []struct {
		name   string
		mutate func(nc *v1.EC2NodeClass)
		want   condition
	}{
		{
			name:   "subnets",
			mutate: func(nc *v1.EC2NodeClass) { nc.Spec.SubnetSelectorTerms = []v1.SubnetSelectorTerm{{Tags: nobody}} },
			want: condition{Type: v1.ConditionTypeSubnetsReady, Status: metav1.ConditionFalse,
				Reason: "SubnetsNotFound", Message: "SubnetSelector did not match any Subnets"},
		},
		{
			name: "security groups",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.SecurityGroupSelectorTerms = []v1.SecurityGroupSelectorTerm{{Tags: nobody}}
			},
			want: condition{Type: v1.ConditionTypeSecurityGroupsReady, Status: metav1.ConditionFalse,
				Reason: "SecurityGroupsNotFound", Message: "SecurityGroupSelector did not match any SecurityGroups"},
		},
		{
			name: "unknown subnet id",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.SubnetSelectorTerms = []v1.SubnetSelectorTerm{{ID: "subnet-00000000"}}
			},
			want: condition{Type: v1.ConditionTypeSubnetsReady, Status: metav1.ConditionFalse,
				Reason: "SubnetsNotFound", Message: "SubnetSelector did not match any Subnets"},
		},
		{
			name: "unreleased AMI version",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{Alias: "al2023@v19990101"}}
			},
			want: condition{Type: v1.ConditionTypeAMIsReady, Status: metav1.ConditionFalse,
				Reason: "AMINotFound", Message: "AMISelector did not match any AMIs"},
		},
		{
			name: "AMI family the emulator has no images of",
			mutate: func(nc *v1.EC2NodeClass) {
				// EKS publishes no AL2 images after Kubernetes 1.32; the account's are 1.36/1.37.
				nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{Alias: "al2@latest"}}
			},
			want: condition{Type: v1.ConditionTypeAMIsReady, Status: metav1.ConditionFalse,
				Reason: "AMINotFound", Message: "AMISelector did not match any AMIs"},
		},
		{
			name: "windows alias",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{Alias: "windows2022@latest"}}
			},
			want: condition{Type: v1.ConditionTypeAMIsReady, Status: metav1.ConditionFalse, Reason: "AMINotFound",
				Message: `AMI alias "windows2022@latest" is not supported in the lab: it serves the al2023, al2 and bottlerocket families`},
		},
		{
			name: "AMI tags",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{Tags: map[string]string{"approved": "true"}}}
				nc.Spec.AMIFamily = aws.String(v1.AMIFamilyAL2023)
			},
			want: condition{Type: v1.ConditionTypeAMIsReady, Status: metav1.ConditionFalse,
				Reason: "AMINotFound", Message: "AMISelector did not match any AMIs"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := seed(t)
			tc.mutate(nc)
			if err := resolver(client, "").Resolve(context.Background(), nc); err != nil {
				t.Fatalf("Resolve: %v (matching nothing is not an error)", err)
			}
			got := conditions(nc)
			if diff := cmp.Diff(tc.want, got[tc.want.Type]); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.want.Type, diff)
			}
			wantReady := condition{Type: status.ConditionReady, Status: metav1.ConditionFalse,
				Reason: "UnhealthyDependents", Message: tc.want.Type + "=False"}
			if diff := cmp.Diff(wantReady, got[status.ConditionReady]); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
			// The other conditions still resolved.
			for typ, c := range got {
				if typ != tc.want.Type && typ != status.ConditionReady && c.Status != metav1.ConditionTrue {
					t.Errorf("%s = %s (%s)", typ, c.Status, c.Message)
				}
			}
		})
	}
}

func TestResolveSelectors(t *testing.T) {
	ctx := context.Background()
	_, client := emulator(t)
	// Look up a few IDs to select by.
	subnets, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{
		Filters: []ec2types.Filter{{Name: aws.String("availability-zone"), Values: []string{"eu-west-2b"}}},
	})
	if err != nil || len(subnets.Subnets) == 0 {
		t.Fatalf("DescribeSubnets: %v %v", subnets, err)
	}
	subnetB := aws.ToString(subnets.Subnets[0].SubnetId)
	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{
		Owners:  []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-arm64-standard-1.36-v20260901"}}},
	})
	if err != nil || len(images.Images) != 1 {
		t.Fatalf("DescribeImages: %v %v", images, err)
	}
	oldArm := aws.ToString(images.Images[0].ImageId)

	for _, tc := range []struct {
		name       string
		k8sVersion string
		mutate     func(nc *v1.EC2NodeClass)
		check      func(t *testing.T, nc *v1.EC2NodeClass)
	}{
		{
			name:   "subnet by id",
			mutate: func(nc *v1.EC2NodeClass) { nc.Spec.SubnetSelectorTerms = []v1.SubnetSelectorTerm{{ID: subnetB}} },
			check: func(t *testing.T, nc *v1.EC2NodeClass) {
				want := []v1.Subnet{{ID: subnetB, Zone: "eu-west-2b", ZoneID: "euw2-az3"}}
				if diff := cmp.Diff(want, nc.Status.Subnets); diff != "" {
					t.Errorf("subnets (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "subnets by wildcard tag value, terms ORed without duplicates",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.SubnetSelectorTerms = []v1.SubnetSelectorTerm{
					{Tags: map[string]string{"karpenter.sh/discovery": "*"}},
					{ID: subnetB},
				}
			},
			check: func(t *testing.T, nc *v1.EC2NodeClass) {
				if got := nc.Zones(); !cmp.Equal(got, []string{"eu-west-2a", "eu-west-2b", "eu-west-2c"}) || len(nc.Status.Subnets) != 3 {
					t.Errorf("subnets %v", nc.Status.Subnets)
				}
			},
		},
		{
			name: "security group by name",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.SecurityGroupSelectorTerms = []v1.SecurityGroupSelectorTerm{{Name: "default"}}
			},
			check: func(t *testing.T, nc *v1.EC2NodeClass) {
				if len(nc.Status.SecurityGroups) != 1 || nc.Status.SecurityGroups[0].Name != "default" {
					t.Errorf("security groups %v", nc.Status.SecurityGroups)
				}
			},
		},
		{
			name: "pinned alias",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{Alias: "al2023@v20261001"}}
			},
			check: amiNames(
				"amazon-eks-node-al2023-x86_64-standard-1.37-v20261001",
				"amazon-eks-node-al2023-arm64-standard-1.37-v20261001",
			),
		},
		{
			name:       "latest for a Kubernetes version",
			k8sVersion: "1.36",
			mutate:     func(nc *v1.EC2NodeClass) {},
			check: amiNames(
				"amazon-eks-node-al2023-x86_64-standard-1.36-v20261101",
				"amazon-eks-node-al2023-arm64-standard-1.36-v20261101",
			),
		},
		{
			name: "AMI by id",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{ID: oldArm}}
				nc.Spec.AMIFamily = aws.String(v1.AMIFamilyAL2023)
			},
			check: func(t *testing.T, nc *v1.EC2NodeClass) {
				want := []v1.AMI{{ID: oldArm, Name: "amazon-eks-node-al2023-arm64-standard-1.36-v20260901", Requirements: archReq("arm64")}}
				if diff := cmp.Diff(want, nc.Status.AMIs); diff != "" {
					t.Errorf("amis (-want +got):\n%s", diff)
				}
				if _, ok := nc.AMIFor("amd64"); ok {
					t.Errorf("AMIFor(amd64) found an image for an arm64-only node class")
				}
			},
		},
		{
			name: "AMI by name wildcard picks the newest",
			mutate: func(nc *v1.EC2NodeClass) {
				nc.Spec.AMISelectorTerms = []v1.AMISelectorTerm{{Name: "amazon-eks-node-al2023-x86_64-standard-1.36-*"}}
				nc.Spec.AMIFamily = aws.String(v1.AMIFamilyAL2023)
			},
			check: amiNames("amazon-eks-node-al2023-x86_64-standard-1.36-v20261101"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := seed(t)
			tc.mutate(nc)
			if err := resolver(client, tc.k8sVersion).Resolve(ctx, nc); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if !nc.StatusConditions().Root().IsTrue() {
				t.Errorf("not Ready: %v", conditions(nc))
			}
			tc.check(t, nc)
		})
	}
}

func amiNames(want ...string) func(t *testing.T, nc *v1.EC2NodeClass) {
	return func(t *testing.T, nc *v1.EC2NodeClass) {
		t.Helper()
		var got []string
		for _, a := range nc.Status.AMIs {
			got = append(got, a.Name)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AMI names (-want +got):\n%s", diff)
		}
	}
}

func TestResolveEC2Errors(t *testing.T) {
	ctx := context.Background()
	srv, client := emulator(t)

	// A resolved node class keeps its AMIs through a throttled DescribeImages.
	nc := seed(t)
	if err := resolver(client, "").Resolve(ctx, nc); err != nil {
		t.Fatal(err)
	}
	resolved := nc.DeepCopy()
	if _, err := srv.SetFault(fakeec2.Fault{Kind: fakeec2.FaultThrottle, Action: "DescribeImages", Rate: 1}); err != nil {
		t.Fatal(err)
	}
	err := resolver(client, "").Resolve(ctx, nc)
	if code := errorCode(err); code != "RequestLimitExceeded" {
		t.Fatalf("Resolve error = %v (code %q), want RequestLimitExceeded", err, code)
	}
	if diff := cmp.Diff(resolved.Status, nc.Status); diff != "" {
		t.Errorf("status changed by a throttled call (-before +after):\n%s", diff)
	}
	if err := srv.ClearFaults(""); err != nil {
		t.Fatal(err)
	}

	// A refused DescribeSubnets is a False condition naming the refusal.
	if err := srv.SetPolicy(fakeec2.Policy{Statements: []fakeec2.PolicyStatement{{DenyActions: []string{"DescribeSubnets"}}}}); err != nil {
		t.Fatal(err)
	}
	nc = seed(t)
	err = resolver(client, "").Resolve(ctx, nc)
	if code := errorCode(err); code != "UnauthorizedOperation" {
		t.Fatalf("Resolve error = %v (code %q), want UnauthorizedOperation", err, code)
	}
	got := conditions(nc)[v1.ConditionTypeSubnetsReady]
	if got.Status != metav1.ConditionFalse || got.Reason != nodeclass.ReasonResolutionFailed ||
		!strings.Contains(got.Message, "describing subnets") || !strings.Contains(got.Message, "UnauthorizedOperation") {
		t.Errorf("SubnetsReady = %+v", got)
	}
	if nc.StatusConditions().Root().IsTrue() {
		t.Errorf("Ready while subnets are unknown")
	}
	if len(nc.Status.AMIs) != 2 || len(nc.Status.SecurityGroups) != 1 {
		t.Errorf("the rest was not resolved: %+v", nc.Status)
	}
}

func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func TestNewestPerArch(t *testing.T) {
	img := func(id, name, arch, created, deprecated string) ec2types.Image {
		im := ec2types.Image{ImageId: aws.String(id), Name: aws.String(name), Architecture: ec2types.ArchitectureValues(arch), CreationDate: aws.String(created)}
		if deprecated != "" {
			im.DeprecationTime = aws.String(deprecated)
		}
		return im
	}
	for _, tc := range []struct {
		name   string
		images []ec2types.Image
		want   []string // IDs
	}{
		{
			name: "newest by creation date, not by name",
			images: []ec2types.Image{
				img("ami-1", "z-old", "x86_64", "2026-01-01T00:00:00.000Z", ""),
				img("ami-2", "a-new", "x86_64", "2026-06-01T00:00:00.000Z", ""),
			},
			want: []string{"ami-2"},
		},
		{
			name: "one per architecture, amd64 first",
			images: []ec2types.Image{
				img("ami-1", "arm", "arm64", "2026-01-01T00:00:00.000Z", ""),
				img("ami-2", "x86", "x86_64", "2026-01-01T00:00:00.000Z", ""),
				img("ami-3", "mac", "x86_64_mac", "2026-09-01T00:00:00.000Z", ""),
			},
			want: []string{"ami-2", "ami-1"},
		},
		{
			name: "deprecated only when nothing else",
			images: []ec2types.Image{
				img("ami-1", "old", "x86_64", "2026-01-01T00:00:00.000Z", ""),
				img("ami-2", "new-deprecated", "x86_64", "2026-06-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z"),
				img("ami-3", "arm-deprecated", "arm64", "2026-06-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z"),
				img("ami-4", "future-deprecation", "x86_64", "2025-01-01T00:00:00.000Z", "2027-07-01T00:00:00.000Z"),
			},
			want: []string{"ami-1", "ami-3"},
		},
		{
			name: "same release of two Kubernetes versions: the greater name",
			images: []ec2types.Image{
				img("ami-1", "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101", "x86_64", "2026-11-01T09:00:00.000Z", ""),
				img("ami-2", "amazon-eks-node-al2023-x86_64-standard-1.36-v20261101", "x86_64", "2026-11-01T09:00:00.000Z", ""),
			},
			want: []string{"ami-1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range nodeclass.NewestPerArch(tc.images, now) {
				got = append(got, a.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAliasImageQuery(t *testing.T) {
	for _, tc := range []struct {
		alias, k8s string
		want       []string
	}{
		{"al2023@latest", "", []string{"amazon-eks-node-al2023-x86_64-standard-1.*-v*", "amazon-eks-node-al2023-arm64-standard-1.*-v*"}},
		{"al2023@v20261101", "1.37", []string{"amazon-eks-node-al2023-x86_64-standard-1.37-v20261101", "amazon-eks-node-al2023-arm64-standard-1.37-v20261101"}},
		{"al2@latest", "", []string{"amazon-eks-node-1.*-v*", "amazon-eks-arm64-node-1.*-v*"}},
	} {
		t.Run(tc.alias, func(t *testing.T) {
			a, err := v1.ParseAlias(tc.alias)
			if err != nil {
				t.Fatal(err)
			}
			q, err := nodeclass.AliasImageQuery(a, tc.k8s)
			if err != nil {
				t.Fatal(err)
			}
			want := nodeclass.ImageQuery{Owners: []string{"amazon"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: tc.want}}}
			if diff := cmp.Diff(want, q, cmpopts.IgnoreUnexported(ec2types.Filter{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetHashAnnotations(t *testing.T) {
	nc := seed(t)
	if !nodeclass.SetHashAnnotations(nc) {
		t.Fatal("first call changed nothing")
	}
	want := map[string]string{
		v1.AnnotationEC2NodeClassHash:        nc.Hash(),
		v1.AnnotationEC2NodeClassHashVersion: v1.EC2NodeClassHashVersion,
	}
	if diff := cmp.Diff(want, nc.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if nodeclass.SetHashAnnotations(nc) {
		t.Error("second call changed the annotations again")
	}
	nc.Spec.Tags["owner"] = "someone-else"
	if !nodeclass.SetHashAnnotations(nc) || nc.Annotations[v1.AnnotationEC2NodeClassHash] == want[v1.AnnotationEC2NodeClassHash] {
		t.Error("a spec change did not change the hash annotation")
	}
}
