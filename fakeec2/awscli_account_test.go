package fakeec2_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/fakeec2"
	fakeeks "github.com/karplab/karplab/fakeec2/eks"
	"github.com/karplab/karplab/fakeec2/trail"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// TestIntegrationAWSCLIAccount runs the commands a person investigating uses beside EC2
// with every aws CLI on the machine (Debian's v2 speaks SQS's query protocol, pip's v1 its
// JSON one): who am I, the instance profile of the course's node role, the AMI an alias
// resolves to, the interruption queue's messages, the cluster, the prices.
func TestIntegrationAWSCLIAccount(t *testing.T) {
	clis := karplabtest.AWSCLIs(t)
	e := newEnv(t, func(o *fakeec2.Options) { o.InterruptionQueue = interruptionQueue })
	subnets, _, amd64, _ := e.discover()
	e.must(e.srv.SetEKSCluster(fakeeks.Cluster{Name: "ziba-production", Endpoint: "https://127.0.0.1:6443",
		CertificateAuthorityData: "Y2E=", Version: "1.37", ServiceIPv4CIDR: "10.96.0.0/12",
		RoleARN: "arn:aws:iam::123456789012:role/eks-cluster"}))
	for _, cli := range clis {
		t.Run(cli.Name, func(t *testing.T) {
			const learner = "AKIACOURSELEARNER"
			run := func(args ...string) string {
				t.Helper()
				stdout, stderr, err := cli.Run(t, e.url, learner, args...)
				if err != nil {
					t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				return stdout
			}
			var who struct{ Account, Arn string }
			mustJSON(t, run("sts", "get-caller-identity"), &who)
			if who.Account != "123456789012" || !strings.HasSuffix(who.Arn, ":user/"+learner) {
				t.Errorf("get-caller-identity: %+v", who)
			}

			profile := "ziba-" + cli.Name
			run("iam", "create-instance-profile", "--instance-profile-name", profile)
			run("iam", "add-role-to-instance-profile", "--instance-profile-name", profile, "--role-name", nodeRole)
			var ip struct {
				InstanceProfile struct {
					Arn   string
					Roles []struct{ RoleName string }
				}
			}
			mustJSON(t, run("iam", "get-instance-profile", "--instance-profile-name", profile), &ip)
			if !strings.HasSuffix(ip.InstanceProfile.Arn, ":instance-profile/"+profile) ||
				len(ip.InstanceProfile.Roles) != 1 || ip.InstanceProfile.Roles[0].RoleName != nodeRole {
				t.Errorf("get-instance-profile: %+v", ip)
			}
			_, stderr, err := cli.Run(t, e.url, learner, "iam", "get-instance-profile", "--instance-profile-name", "nope")
			if err == nil || !strings.Contains(stderr, "NoSuchEntity") {
				t.Errorf("get-instance-profile of a missing profile: %v\n%s", err, stderr)
			}

			var param struct{ Parameter struct{ Value, Type string } }
			mustJSON(t, run("ssm", "get-parameter", "--name",
				"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"), &param)
			if param.Parameter.Value != amd64 || param.Parameter.Type != "String" {
				t.Errorf("get-parameter of the recommended AL2023 AMI: %+v, want %s", param.Parameter, amd64)
			}
			_, stderr, err = cli.Run(t, e.url, learner, "ssm", "get-parameter", "--name", "/aws/service/none")
			if err == nil || !strings.Contains(stderr, "ParameterNotFound") {
				t.Errorf("get-parameter of a missing name: %v\n%s", err, stderr)
			}

			// An instance's state change reaches the queue; the CLI reads and deletes it.
			id := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
			e.clock.Advance(time.Minute)
			e.describe(id)
			var qurl struct{ QueueUrl string }
			mustJSON(t, run("sqs", "get-queue-url", "--queue-name", interruptionQueue), &qurl)
			var msgs struct {
				Messages []struct{ Body, ReceiptHandle string }
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(msgs.Messages) == 0 && time.Now().Before(deadline) {
				mustJSON(t, orEmpty(run("sqs", "receive-message", "--queue-url", qurl.QueueUrl, "--wait-time-seconds", "1",
					"--max-number-of-messages", "10")), &msgs)
			}
			if len(msgs.Messages) != 1 || !strings.Contains(msgs.Messages[0].Body, id) ||
				!strings.Contains(msgs.Messages[0].Body, "EC2 Instance State-change Notification") {
				t.Fatalf("receive-message: %+v, want the running state change of %s", msgs, id)
			}
			run("sqs", "delete-message", "--queue-url", qurl.QueueUrl, "--receipt-handle", msgs.Messages[0].ReceiptHandle)

			var cl struct {
				Cluster struct {
					Status, Version         string
					KubernetesNetworkConfig struct{ ServiceIpv4Cidr string }
				}
			}
			mustJSON(t, run("eks", "describe-cluster", "--name", "ziba-production"), &cl)
			if cl.Cluster.Status != "ACTIVE" || cl.Cluster.Version != "1.37" || cl.Cluster.KubernetesNetworkConfig.ServiceIpv4Cidr != "10.96.0.0/12" {
				t.Errorf("describe-cluster: %+v", cl)
			}

			var prices struct{ PriceList []string }
			mustJSON(t, run("pricing", "get-products", "--service-code", "AmazonEC2", "--filters",
				"Type=TERM_MATCH,Field=instanceType,Value=m6i.large", "Type=TERM_MATCH,Field=regionCode,Value=eu-west-2",
				"Type=TERM_MATCH,Field=capacitystatus,Value=Used", "Type=TERM_MATCH,Field=tenancy,Value=Shared"), &prices)
			if len(prices.PriceList) != 1 {
				t.Errorf("get-products for m6i.large: %d products, want 1", len(prices.PriceList))
			}
			mustJSON(t, run("pricing", "get-products", "--service-code", "AmazonEKS", "--filters",
				"Type=TERM_MATCH,Field=regionCode,Value=eu-west-2", "Type=CONTAINS,Field=usagetype,Value=Fargate-vCPU"), &prices)
			if len(prices.PriceList) != 1 || !strings.Contains(prices.PriceList[0], `"usagetype":"EUW2-Fargate-vCPU-Hours:perCPU"`) {
				t.Errorf("get-products for Fargate's vCPU hours: %v, want one EUW2-Fargate-vCPU-Hours:perCPU product", prices.PriceList)
			}
			_, stderr, err = cli.Run(t, e.url, learner, "pricing", "get-products", "--service-code", "AmazonECS")
			if err == nil || !strings.Contains(stderr, "NotFoundException") {
				t.Errorf("get-products for AmazonECS: %v\n%s, want NotFoundException", err, stderr)
			}
		})
	}
	for _, svc := range []string{"sts", "iam", "eks", "pricing", "ssm", "sqs"} {
		if n := len(e.srv.Audit(trail.AuditQuery{Service: svc, Caller: "AKIACOURSELEARNER"})); n == 0 {
			t.Errorf("no %s call by the CLI in the audit trail", svc)
		}
	}
}

// orEmpty is what receive-message printed, or {} when it printed nothing (no message).
func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decoding the CLI's JSON: %v\n%s", err, s)
	}
}
