package fakeec2_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
	ec2model "github.com/karplab/karplab/fakeec2/ec2"
	fakeeks "github.com/karplab/karplab/fakeec2/eks"
	fakeiam "github.com/karplab/karplab/fakeec2/iam"
	"github.com/karplab/karplab/fakeec2/trail"
)

const nodeRole = "KarpenterNodeRole-ziba-production"

// awsConfig is an SDK config for every service of the emulator at url: one endpoint, as
// AWS_ENDPOINT_URL gives the real Karpenter.
func awsConfig(t *testing.T, url, accessKey string) aws.Config {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("eu-west-2"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(accessKey, "lab-secret", "")),
		config.WithBaseEndpoint(url))
	if err != nil {
		t.Fatalf("loading aws config: %v", err)
	}
	return cfg
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestIntegrationAccountServices: one endpoint answers IAM, STS, EKS and Pricing beside
// EC2, each through its own SDK client; calls land in the one audit trail with their
// service; the one policy denies across services and a denial changes nothing; state
// survives a restart.
func TestIntegrationAccountServices(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	ctx := e.ctx
	cfg := awsConfig(t, e.url, karpenterKey)
	iamc, stsc, eksc, pc := iam.NewFromConfig(cfg), sts.NewFromConfig(cfg), eks.NewFromConfig(cfg), pricing.NewFromConfig(cfg)

	who, err := stsc.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	e.must(err)
	if got, want := aws.ToString(who.Arn), "arn:aws:iam::123456789012:user/"+karpenterKey; got != want {
		t.Errorf("caller ARN %q, want %q", got, want)
	}

	_, err = iamc.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("ziba-general")})
	e.must(err)
	_, err = iamc.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String("ziba-general"), RoleName: aws.String(nodeRole)})
	e.must(err)

	_, err = eksc.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("ziba-production")})
	if code := errorCode(err); code != "ResourceNotFoundException" {
		t.Errorf("DescribeCluster before the cluster is known: %v (code %q), want ResourceNotFoundException", err, code)
	}
	e.must(e.srv.SetEKSCluster(fakeeks.Cluster{Name: "ziba-production", Endpoint: "https://127.0.0.1:6443",
		CertificateAuthorityData: "Y2E=", Version: "1.37", ServiceIPv4CIDR: "10.96.0.0/12",
		RoleARN: "arn:aws:iam::123456789012:role/eks-cluster"}))

	it, _ := ec2model.LookupInstanceTypeIn("eu-west-2", "m6i.large")
	prices, err := pc.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), Filters: []pricingtypes.Filter{
		{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("instanceType"), Value: aws.String("m6i.large")},
		{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("regionCode"), Value: aws.String("eu-west-2")},
		{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("capacitystatus"), Value: aws.String("Used")},
		{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("tenancy"), Value: aws.String("Shared")},
	}})
	e.must(err)
	if len(prices.PriceList) != 1 || !strings.Contains(prices.PriceList[0], onDemandUSD(it.OnDemandPrice)) {
		t.Errorf("m6i.large price list %v, want one product at the ledger's %v USD/h", prices.PriceList, it.OnDemandPrice)
	}

	// The policy speaks for every service: without iam:PassRole no role joins a profile.
	e.must(e.srv.SetPolicy(authz.Policy{Statements: []authz.PolicyStatement{{Sid: "no-pass", DenyActions: []string{"iam:PassRole"}}}}))
	_, err = iamc.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("second")})
	e.must(err)
	_, err = iamc.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String("second"), RoleName: aws.String(nodeRole)})
	if code := errorCode(err); code != "AccessDenied" {
		t.Errorf("AddRoleToInstanceProfile without iam:PassRole: %v, want AccessDenied", err)
	}
	second, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("second")})
	e.must(err)
	if n := len(second.InstanceProfile.Roles); n != 0 {
		t.Errorf("denied AddRoleToInstanceProfile left %d roles in the profile", n)
	}
	denied := e.srv.Audit(trail.AuditQuery{Service: "iam", Action: "AddRoleToInstanceProfile", ErrorCode: "AccessDenied"})
	if len(denied) != 1 || !strings.Contains(denied[0].DenialReason, "iam:PassRole") || denied[0].Caller != karpenterKey {
		t.Errorf("audit of the denial: %+v", denied)
	}
	for _, svc := range []string{"sts", "iam", "eks", "pricing"} {
		if len(e.srv.Audit(trail.AuditQuery{Service: svc})) == 0 {
			t.Errorf("no %s call in the audit trail", svc)
		}
	}
	if n := len(e.srv.Audit(trail.AuditQuery{Service: "ec2"})); n != 0 {
		t.Errorf("%d ec2 events in the audit trail, want none: every call here was for another service", n)
	}

	e.restart()
	iamc, eksc = iam.NewFromConfig(awsConfig(t, e.url, karpenterKey)), eks.NewFromConfig(awsConfig(t, e.url, karpenterKey))
	got, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("ziba-general")})
	e.must(err)
	if r := got.InstanceProfile.Roles; len(r) != 1 || aws.ToString(r[0].RoleName) != nodeRole {
		t.Errorf("after restart the profile holds %v, want %s", r, nodeRole)
	}
	cl, err := eksc.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("ziba-production")})
	e.must(err)
	if aws.ToString(cl.Cluster.Endpoint) != "https://127.0.0.1:6443" || aws.ToString(cl.Cluster.KubernetesNetworkConfig.ServiceIpv4Cidr) != "10.96.0.0/12" {
		t.Errorf("after restart the cluster is %+v", cl.Cluster)
	}
	if n := len(e.srv.Audit(trail.AuditQuery{Service: "iam", ErrorCode: "AccessDenied"})); n != 1 {
		t.Errorf("after restart %d IAM denials in the audit trail, want 1", n)
	}
}

func onDemandUSD(price float64) string {
	b, _ := json.Marshal(price)
	return string(b)
}

// TestIntegrationUnknownService: a request signed for a service the lab does not have
// gets one clear error naming the services it does.
func TestIntegrationUnknownService(t *testing.T) {
	e := newEnv(t)
	req, err := http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader("{}"))
	e.must(err)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=k/20261202/eu-west-2/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	resp, err := http.DefaultClient.Do(req)
	e.must(err)
	defer resp.Body.Close()
	var body struct {
		Message string `json:"message"`
	}
	e.must(json.NewDecoder(resp.Body).Decode(&body))
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amzn-Errortype") != "UnknownServiceException" ||
		!strings.Contains(body.Message, "iam") || !strings.Contains(body.Message, `"dynamodb"`) {
		t.Errorf("status %d, error type %q, message %q: want 400 UnknownServiceException naming the services",
			resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"), body.Message)
	}
}

// TestIntegrationDefaultControllerPolicy: with KarpenterControllerPolicy as the account's
// default, the controller may make every call the provider makes and nothing else, the
// learner is not bound by it, and a reset brings it back after a lab replaced it.
func TestIntegrationDefaultControllerPolicy(t *testing.T) {
	def := authz.Policy{Statements: []authz.PolicyStatement{authz.KarpenterControllerPolicy(karpenterKey)}}
	e := newEnv(t, func(o *fakeec2.Options) { o.DefaultPolicy = &def })
	ctx := e.ctx
	ctrl := iam.NewFromConfig(awsConfig(t, e.url, karpenterKey))
	learner := iam.NewFromConfig(awsConfig(t, e.url, "AKIACOURSELEARNER"))
	if _, err := ctrl.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(nodeRole)}); err != nil {
		t.Errorf("the controller's GetRole: %v", err)
	}
	_, err := ctrl.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("escalate"), AssumeRolePolicyDocument: aws.String(fakeiam.EC2TrustPolicy)})
	if code := errorCode(err); code != "AccessDenied" {
		t.Errorf("the controller's CreateRole: %v, want AccessDenied (not in KarpenterControllerPolicy)", err)
	}
	_, err = e.ec2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{"i-00000000000000001"}})
	if code := errorCode(err); code != "UnauthorizedOperation" {
		t.Errorf("the controller's DeleteTags: %v, want UnauthorizedOperation", err)
	}
	if _, err := learner.ListRoles(ctx, &iam.ListRolesInput{}); err != nil {
		t.Errorf("the learner is bound by the controller's policy: %v", err)
	}
	e.must(e.srv.SetPolicy(authz.Policy{}))
	if _, err := ctrl.ListRoles(ctx, &iam.ListRolesInput{}); err != nil {
		t.Errorf("with an empty policy the controller's ListRoles: %v", err)
	}
	e.must(e.srv.Reset())
	if got := e.srv.Policy(); !reflect.DeepEqual(got, def) {
		t.Errorf("after reset the policy is %+v, want the default", got)
	}
}
