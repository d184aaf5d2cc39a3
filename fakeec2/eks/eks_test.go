package eks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/eks"
)

var created = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

func labCluster(name string) eks.Cluster {
	return eks.Cluster{
		Name:                     name,
		Endpoint:                 "https://0123456789ABCDEF.gr7.eu-west-2.eks.amazonaws.com",
		CertificateAuthorityData: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",
		Version:                  "1.37",
		PlatformVersion:          "eks.3",
		ServiceIPv4CIDR:          "172.20.0.0/16",
		RoleARN:                  "arn:aws:iam::123456789012:role/eks-cluster",
		VPC: eks.VPCConfig{VPCID: "vpc-0a1b2c3d", SubnetIDs: []string{"subnet-1", "subnet-2"},
			SecurityGroupIDs: []string{"sg-extra"}, ClusterSecurityGroupID: "sg-cluster",
			EndpointPublicAccess: true, EndpointPrivateAccess: true},
		AuthenticationMode: "API",
		CreatedAt:          created,
		Tags:               map[string]string{"karpenter.sh/discovery": name},
	}
}

func start(t *testing.T, host *account.MemoryHost) (*eks.Service, *awseks.Client) {
	t.Helper()
	svc, err := eks.New(host)
	if err != nil {
		t.Fatalf("eks.New: %v", err)
	}
	return svc, awseks.NewFromConfig(accounttest.Config(t, accounttest.Start(t, svc, host), accounttest.AccessKey))
}

func TestDescribeCluster(t *testing.T) {
	svc, c := start(t, account.NewMemoryHost())
	if err := svc.SetCluster(labCluster("lab")); err != nil {
		t.Fatalf("SetCluster: %v", err)
	}
	out, err := c.DescribeCluster(context.Background(), &awseks.DescribeClusterInput{Name: aws.String("lab")})
	if err != nil {
		t.Fatalf("DescribeCluster: %v", err)
	}
	want := &types.Cluster{
		Name:                 aws.String("lab"),
		Arn:                  aws.String("arn:aws:eks:eu-west-2:123456789012:cluster/lab"),
		CreatedAt:            aws.Time(created),
		Version:              aws.String("1.37"),
		Endpoint:             aws.String("https://0123456789ABCDEF.gr7.eu-west-2.eks.amazonaws.com"),
		RoleArn:              aws.String("arn:aws:iam::123456789012:role/eks-cluster"),
		Status:               types.ClusterStatusActive,
		PlatformVersion:      aws.String("eks.3"),
		CertificateAuthority: &types.Certificate{Data: aws.String("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==")},
		ResourcesVpcConfig: &types.VpcConfigResponse{VpcId: aws.String("vpc-0a1b2c3d"),
			SubnetIds: []string{"subnet-1", "subnet-2"}, SecurityGroupIds: []string{"sg-extra"},
			ClusterSecurityGroupId: aws.String("sg-cluster"), EndpointPublicAccess: true, EndpointPrivateAccess: true,
			PublicAccessCidrs: []string{"0.0.0.0/0"}},
		KubernetesNetworkConfig: &types.KubernetesNetworkConfigResponse{ServiceIpv4Cidr: aws.String("172.20.0.0/16"),
			IpFamily: types.IpFamilyIpv4, ElasticLoadBalancing: &types.ElasticLoadBalancing{Enabled: aws.Bool(false)}},
		Logging: &types.Logging{ClusterLogging: []types.LogSetup{{Enabled: aws.Bool(false),
			Types: []types.LogType{"api", "audit", "authenticator", "controllerManager", "scheduler"}}}},
		Tags:                      map[string]string{"karpenter.sh/discovery": "lab"},
		Health:                    &types.ClusterHealth{Issues: []types.ClusterIssue{}},
		AccessConfig:              &types.AccessConfigResponse{AuthenticationMode: types.AuthenticationModeApi},
		UpgradePolicy:             &types.UpgradePolicyResponse{SupportType: types.SupportTypeStandard},
		DeletionProtection:        aws.Bool(false),
		ControlPlaneScalingConfig: &types.ControlPlaneScalingConfig{Tier: types.ProvisionedControlPlaneTierStandard},
	}
	issuer := out.Cluster.Identity
	out.Cluster.Identity = nil
	if diff := cmp.Diff(want, out.Cluster, cmpopts.IgnoreUnexported(types.Cluster{}, types.Certificate{},
		types.VpcConfigResponse{}, types.KubernetesNetworkConfigResponse{}, types.ElasticLoadBalancing{},
		types.Logging{}, types.LogSetup{}, types.ClusterHealth{}, types.AccessConfigResponse{},
		types.UpgradePolicyResponse{}, types.ControlPlaneScalingConfig{})); diff != "" {
		t.Errorf("cluster (-want +got):\n%s", diff)
	}
	if issuer == nil || issuer.Oidc == nil || len(aws.ToString(issuer.Oidc.Issuer)) != len("https://oidc.eks.eu-west-2.amazonaws.com/id/")+32 {
		t.Errorf("identity = %+v, want an oidc issuer with a 32-digit ID", issuer)
	}
}

func TestDescribeClusterErrors(t *testing.T) {
	svc, c := start(t, account.NewMemoryHost())
	if err := svc.SetCluster(labCluster("lab")); err != nil {
		t.Fatalf("SetCluster: %v", err)
	}
	tests := []struct {
		name, cluster, want string
	}{
		{"known", "lab", ""},
		{"unknown", "other", "ResourceNotFoundException"},
		{"case matters", "LAB", "ResourceNotFoundException"},
		{"escaped characters", "la b/c", "ResourceNotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.DescribeCluster(context.Background(), &awseks.DescribeClusterInput{Name: aws.String(tt.cluster)})
			if got := accounttest.APIErrorCode(err); got != tt.want {
				t.Errorf("error code = %q, want %q (%v)", got, tt.want, err)
			}
		})
	}
}

func TestListClusters(t *testing.T) {
	svc, c := start(t, account.NewMemoryHost())
	for i := range 5 {
		if err := svc.SetCluster(labCluster(fmt.Sprintf("c%d", i))); err != nil {
			t.Fatalf("SetCluster: %v", err)
		}
	}
	tests := []struct {
		name string
		max  int32
		want []string
		code string
	}{
		{"default page", 0, []string{"c0", "c1", "c2", "c3", "c4"}, ""},
		{"pages of two", 2, []string{"c0", "c1", "c2", "c3", "c4"}, ""},
		{"max results over 100", 101, nil, "InvalidParameterException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &awseks.ListClustersInput{}
			if tt.max > 0 {
				in.MaxResults = aws.Int32(tt.max)
			}
			var got []string
			p := awseks.NewListClustersPaginator(c, in)
			for p.HasMorePages() {
				out, err := p.NextPage(context.Background())
				if code := accounttest.APIErrorCode(err); code != tt.code {
					t.Fatalf("error code = %q, want %q (%v)", code, tt.code, err)
				}
				if err != nil {
					return
				}
				if tt.max > 0 && len(out.Clusters) > int(tt.max) {
					t.Errorf("page of %d, want at most %d", len(out.Clusters), tt.max)
				}
				got = append(got, out.Clusters...)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
	// The paginator drops a zero limit, so these go straight to the client.
	for _, in := range []*awseks.ListClustersInput{{MaxResults: aws.Int32(0)}, {NextToken: aws.String("bogus!")}} {
		_, err := c.ListClusters(context.Background(), in)
		if code := accounttest.APIErrorCode(err); code != "InvalidParameterException" {
			t.Errorf("ListClusters(%+v): code %q, want InvalidParameterException", in, code)
		}
	}
}

func TestPolicyDenial(t *testing.T) {
	host := account.NewMemoryHost()
	var asked []string
	host.Policy = func(caller, action, resource string) string {
		asked = append(asked, action+" "+resource)
		return "explicit deny"
	}
	svc, c := start(t, host)
	if err := svc.SetCluster(labCluster("lab")); err != nil {
		t.Fatalf("SetCluster: %v", err)
	}
	tests := []struct {
		name, want string
		call       func() error
	}{
		{"DescribeCluster", "eks:DescribeCluster arn:aws:eks:eu-west-2:123456789012:cluster/lab", func() error {
			_, err := c.DescribeCluster(context.Background(), &awseks.DescribeClusterInput{Name: aws.String("lab")})
			return err
		}},
		{"ListClusters", "eks:ListClusters *", func() error {
			_, err := c.ListClusters(context.Background(), &awseks.ListClustersInput{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			if code := accounttest.APIErrorCode(tt.call()); code != "AccessDeniedException" {
				t.Errorf("error code = %q, want AccessDeniedException", code)
			}
			if diff := cmp.Diff([]string{tt.want}, asked); diff != "" {
				t.Errorf("policy questions (-want +got):\n%s", diff)
			}
		})
	}
	if got, ok := svc.Cluster("lab"); !ok || got.Status != "ACTIVE" {
		t.Errorf("cluster after denials = %+v, %v", got, ok)
	}
}

func TestRestart(t *testing.T) {
	host := account.NewMemoryHost()
	svc, _ := start(t, host)
	for _, n := range []string{"keep", "gone"} {
		if err := svc.SetCluster(labCluster(n)); err != nil {
			t.Fatalf("SetCluster: %v", err)
		}
	}
	if ok, err := svc.RemoveCluster("gone"); !ok || err != nil {
		t.Fatalf("RemoveCluster = %v, %v", ok, err)
	}
	_, c := start(t, host)
	out, err := c.ListClusters(context.Background(), &awseks.ListClustersInput{})
	if err != nil {
		t.Fatalf("ListClusters: %v", err)
	}
	if diff := cmp.Diff([]string{"keep"}, out.Clusters); diff != "" {
		t.Errorf("clusters after restart (-want +got):\n%s", diff)
	}
	d, err := c.DescribeCluster(context.Background(), &awseks.DescribeClusterInput{Name: aws.String("keep")})
	if err != nil {
		t.Fatalf("DescribeCluster after restart: %v", err)
	}
	if got := aws.ToString(d.Cluster.KubernetesNetworkConfig.ServiceIpv4Cidr); got != "172.20.0.0/16" || !d.Cluster.CreatedAt.Equal(created) {
		t.Errorf("after restart: cidr %q, created %v", got, d.Cluster.CreatedAt)
	}
}

func TestSetClusterDefaultsAndRejects(t *testing.T) {
	host := account.NewMemoryHost()
	now := time.Date(2026, 5, 5, 5, 5, 5, 0, time.UTC)
	host.Clock = func() time.Time { return now }
	svc, c := start(t, host)
	bare := labCluster("fresh")
	bare.CreatedAt, bare.AuthenticationMode, bare.PlatformVersion = time.Time{}, "", ""
	bare.IPFamily, bare.ServiceIPv4CIDR, bare.ServiceIPv6CIDR = "ipv6", "", "fd00:ab::/108"
	if err := svc.SetCluster(bare); err != nil {
		t.Fatalf("SetCluster: %v", err)
	}
	out, err := c.DescribeCluster(context.Background(), &awseks.DescribeClusterInput{Name: aws.String("fresh")})
	if err != nil {
		t.Fatalf("DescribeCluster: %v", err)
	}
	got := []string{out.Cluster.CreatedAt.UTC().String(), string(out.Cluster.AccessConfig.AuthenticationMode),
		string(out.Cluster.KubernetesNetworkConfig.IpFamily), aws.ToString(out.Cluster.KubernetesNetworkConfig.ServiceIpv6Cidr),
		fmt.Sprint(out.Cluster.KubernetesNetworkConfig.ServiceIpv4Cidr == nil)}
	want := []string{now.String(), "API_AND_CONFIG_MAP", "ipv6", "fd00:ab::/108", "true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	rejects := []struct {
		name string
		edit func(*eks.Cluster)
	}{
		{"bad name", func(c *eks.Cluster) { c.Name = "-x" }},
		{"no endpoint", func(c *eks.Cluster) { c.Endpoint = "" }},
		{"ipv4 without cidr", func(c *eks.Cluster) { c.ServiceIPv4CIDR = "" }},
		{"bad family", func(c *eks.Cluster) { c.IPFamily = "ipv5" }},
		{"bad log type", func(c *eks.Cluster) { c.EnabledLogTypes = []string{"kubelet"} }},
	}
	for _, tt := range rejects {
		t.Run(tt.name, func(t *testing.T) {
			cl := labCluster("rejected")
			tt.edit(&cl)
			if err := svc.SetCluster(cl); err == nil {
				t.Errorf("SetCluster accepted it")
			}
			if _, ok := svc.Cluster("rejected"); ok {
				t.Errorf("a rejected cluster was stored")
			}
		})
	}
}
