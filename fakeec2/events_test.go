package fakeec2_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

const interruptionQueue = "ziba-production"

// eventDoc is the part of an EventBridge document the tests read.
type eventDoc struct {
	Source     string   `json:"source"`
	DetailType string   `json:"detail-type"`
	Resources  []string `json:"resources"`
	Detail     struct {
		InstanceID string `json:"instance-id"`
		State      string `json:"state"`
	} `json:"detail"`
}

// receiveEvents long-polls the interruption queue as Karpenter does, deletes what it got
// and returns the documents' detail types and states ("EC2 Instance State-change
// Notification/shutting-down").
func receiveEvents(t *testing.T, q *sqs.Client, url string, want int) []eventDoc {
	t.Helper()
	var out []eventDoc
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < want && time.Now().Before(deadline) {
		got, err := q.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 20})
		if err != nil {
			t.Fatalf("ReceiveMessage: %v", err)
		}
		for _, m := range got.Messages {
			var d eventDoc
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &d); err != nil {
				t.Fatalf("message is not an EventBridge document: %v\n%s", err, aws.ToString(m.Body))
			}
			out = append(out, d)
			if _, err := q.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("DeleteMessage: %v", err)
			}
		}
	}
	if len(out) != want {
		t.Fatalf("%d events in the interruption queue, want %d: %+v", len(out), want, out)
	}
	return out
}

// TestIntegrationInterruptionQueue: EC2's events reach the interruption queue the way
// EventBridge delivers them to Karpenter: the two-minute spot warning before the reclaim
// (the instance runs until then), state changes from a person's terminate and from the
// reclaim, and a rebalance recommendation.
func TestIntegrationInterruptionQueue(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir(); o.InterruptionQueue = interruptionQueue })
	q := sqs.NewFromConfig(awsConfig(t, e.url, karpenterKey))
	qurl, err := q.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(interruptionQueue)})
	e.must(err)
	url := aws.ToString(qurl.QueueUrl)

	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("spot", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	spotOut, err := e.fleet(e.ec2, "spot", "spot", []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[0])}, seedTags)
	e.must(err)
	odOut, err := e.fleet(e.ec2, "spot", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[1])}, seedTags)
	e.must(err)
	spot, od := spotOut.Instances[0].InstanceIds[0], odOut.Instances[0].InstanceIds[0]
	e.clock.Advance(time.Minute)
	e.describe(spot, od) // both boot
	for _, d := range receiveEvents(t, q, url, 2) {
		if d.DetailType != "EC2 Instance State-change Notification" || d.Detail.State != "running" {
			t.Errorf("boot event %+v, want a running state change", d)
		}
	}

	_, err = e.admin.InterruptSpot(e.ctx, 2*time.Minute, spot)
	e.must(err)
	warn := receiveEvents(t, q, url, 1)[0]
	if warn.Source != "aws.ec2" || warn.DetailType != "EC2 Spot Instance Interruption Warning" || warn.Detail.InstanceID != spot {
		t.Errorf("warning %+v", warn)
	}
	if w := e.srv.Audit(trail.AuditQuery{Action: fakeec2.ActionSpotWarning}); len(w) != 1 || w[0].Parameters["InstanceId.1"] != spot ||
		w[0].Parameters["ReclaimAt"] != w[0].Time.Add(2*time.Minute).UTC().Format(time.RFC3339Nano) {
		t.Errorf("audit trail of the warning %+v, want one record naming %s and its reclaim two minutes on", w, spot)
	}
	e.clock.Advance(119 * time.Second)
	if st := e.describe(spot)[0].State.Name; st != ec2types.InstanceStateNameRunning {
		t.Errorf("1 s before the reclaim the warned instance is %s, want running", st)
	}
	e.clock.Advance(time.Second)
	in := e.describe(spot)[0]
	if in.State.Name != ec2types.InstanceStateNameShuttingDown || aws.ToString(in.StateReason.Code) != fakeec2.StateReasonSpotTermination {
		t.Errorf("at the reclaim the instance is %s (%s)", in.State.Name, aws.ToString(in.StateReason.Code))
	}
	if d := receiveEvents(t, q, url, 1)[0]; d.Detail.State != "shutting-down" || d.Detail.InstanceID != spot {
		t.Errorf("reclaim event %+v", d)
	}
	if n := len(e.srv.Audit(trail.AuditQuery{Action: fakeec2.ActionBidEvicted})); n != 1 {
		t.Errorf("%d BidEvictedEvent records, want 1", n)
	}

	_, err = e.admin.RaiseEvent(e.ctx, fakeec2.EventRebalance, od)
	e.must(err)
	if d := receiveEvents(t, q, url, 1)[0]; d.DetailType != "EC2 Instance Rebalance Recommendation" || d.Detail.InstanceID != od {
		t.Errorf("rebalance event %+v", d)
	}
	_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{od}})
	e.must(err)
	e.clock.Advance(time.Minute)
	e.describe(od)
	var states []string
	for _, d := range receiveEvents(t, q, url, 3) {
		states = append(states, d.Detail.InstanceID+" "+d.Detail.State)
	}
	want := map[string]bool{od + " shutting-down": true, od + " terminated": true, spot + " terminated": true}
	for _, s := range states {
		if !want[s] {
			t.Errorf("unexpected state change %q; want %v", s, want)
		}
	}
}

// TestIntegrationAMIParameters: SSM's public EKS parameters name the account's images,
// and a new AL2023 release moves "recommended" to it.
func TestIntegrationAMIParameters(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	p := ssm.NewFromConfig(awsConfig(t, e.url, karpenterKey))
	const name = "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"
	image := func() string {
		t.Helper()
		out, err := p.GetParameter(e.ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		e.must(err)
		id := aws.ToString(out.Parameter.Value)
		im, err := e.ec2.DescribeImages(e.ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})
		e.must(err)
		if len(im.Images) != 1 {
			t.Fatalf("%s names %s, which DescribeImages does not show", name, id)
		}
		return aws.ToString(im.Images[0].Name)
	}
	if got := image(); got != "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101" {
		t.Errorf("recommended AL2023 image %s, want the newest seeded release", got)
	}
	_, err := e.admin.PublishRelease(e.ctx, "20261202")
	e.must(err)
	if got := image(); got != "amazon-eks-node-al2023-x86_64-standard-1.37-v20261202" {
		t.Errorf("after a release the recommended image is %s", got)
	}
	e.restart()
	p = ssm.NewFromConfig(awsConfig(t, e.url, karpenterKey))
	if got := image(); got != "amazon-eks-node-al2023-x86_64-standard-1.37-v20261202" {
		t.Errorf("after a restart the recommended image is %s", got)
	}
	pinned, err := p.GetParameter(e.ctx, &ssm.GetParameterInput{
		Name: aws.String("/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.37-v20261001/image_id")})
	if err != nil || aws.ToString(pinned.Parameter.Value) == "" {
		t.Errorf("pinned arm64 nvidia parameter: %v", err)
	}
}

// TestIntegrationConsoleThroughAdmin: what the simulated kubelet appends through the admin
// API is what GetConsoleOutput shows, base64 as AWS sends it (the SDK decodes nothing).
func TestIntegrationConsoleThroughAdmin(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	id := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	e.clock.Advance(time.Minute)
	e.must(e.admin.AppendConsoleOutput(e.ctx, id, "nodeadm[1042]: bootstrap script exited 1"))
	out, err := e.ec2.GetConsoleOutput(e.ctx, &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
	e.must(err)
	text, err := base64.StdEncoding.DecodeString(aws.ToString(out.Output))
	e.must(err)
	if !strings.Contains(string(text), "bootstrap script exited 1") {
		t.Errorf("console output lacks the appended line:\n%s", text)
	}
	if err := e.admin.AppendConsoleOutput(e.ctx, "i-0000000000000dead", "x"); err == nil {
		t.Error("appending to an unknown instance succeeded")
	}
}
