package sqs_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/sqs"
)

// fakeClock is the host clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type env struct {
	host   *account.MemoryHost
	clock  *fakeClock
	svc    *sqs.Service
	srv    *httptest.Server
	client *awssqs.Client
}

func newEnv(t testing.TB) *env {
	t.Helper()
	host := account.NewMemoryHost()
	clock := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	host.Clock = clock.Now
	e := &env{host: host, clock: clock}
	e.start(t)
	return e
}

// start opens a Service over e.host's store: what a restart does.
func (e *env) start(t testing.TB) {
	t.Helper()
	if e.srv != nil {
		e.srv.Close()
	}
	svc, err := sqs.New(e.host, sqs.Options{})
	if err != nil {
		t.Fatalf("sqs.New: %v", err)
	}
	e.svc = svc
	e.srv = accounttest.Server(t, svc, e.host)
	e.client = awssqs.NewFromConfig(accounttest.Config(t, e.srv.URL, accounttest.AccessKey))
}

func (e *env) createQueue(t testing.TB, name string, attrs map[string]string) string {
	t.Helper()
	out, err := e.client.CreateQueue(context.Background(), &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// karpenterReceive is the ReceiveMessage karpenter-provider-aws's sqs provider sends.
func karpenterReceive(url string) *awssqs.ReceiveMessageInput {
	return &awssqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 20, WaitTimeSeconds: 20,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp},
		MessageAttributeNames:       []string{string(types.QueueAttributeNameAll)},
	}
}

func TestQueues(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	url := e.createQueue(t, "ziba-production", map[string]string{"MessageRetentionPeriod": "300"})
	if want := e.srv.URL + "/123456789012/ziba-production"; url != want {
		t.Fatalf("QueueUrl = %q, want %q", url, want)
	}
	tests := []struct {
		name     string
		call     func() error
		wantCode string
	}{
		{"create again with the same attributes", func() error {
			_, err := e.client.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("ziba-production"),
				Attributes: map[string]string{"MessageRetentionPeriod": "300"}})
			return err
		}, ""},
		{"create again with other attributes", func() error {
			_, err := e.client.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("ziba-production"),
				Attributes: map[string]string{"VisibilityTimeout": "60"}})
			return err
		}, "QueueAlreadyExists"},
		{"bad queue name", func() error {
			_, err := e.client.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("no spaces")})
			return err
		}, "InvalidParameterValue"},
		{"attribute out of range", func() error {
			_, err := e.client.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("q2"),
				Attributes: map[string]string{"VisibilityTimeout": "43201"}})
			return err
		}, "InvalidAttributeValue"},
		{"unknown attribute", func() error {
			_, err := e.client.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("q2"),
				Attributes: map[string]string{"Colour": "blue"}})
			return err
		}, "InvalidAttributeName"},
		{"get url of a missing queue", func() error {
			_, err := e.client.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("nope")})
			return err
		}, "AWS.SimpleQueueService.NonExistentQueue"},
		{"attributes of a queue url of another host", func() error {
			_, err := e.client.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{
				QueueUrl: aws.String("https://sqs.eu-west-2.amazonaws.com/123456789012/ziba-production")})
			return err
		}, ""},
		{"url with no queue path", func() error {
			_, err := e.client.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(e.srv.URL + "/x")})
			return err
		}, "InvalidAddress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := accounttest.APIErrorCode(tt.call()); got != tt.wantCode {
				t.Errorf("error code = %q, want %q", got, tt.wantCode)
			}
		})
	}

	_, err := e.client.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("nope")})
	var qdne *types.QueueDoesNotExist
	if !errors.As(err, &qdne) {
		t.Errorf("GetQueueUrl of a missing queue: %v, want a *types.QueueDoesNotExist", err)
	}

	got, err := e.client.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	want := map[string]string{
		"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesDelayed": "0",
		"ApproximateNumberOfMessagesNotVisible": "0", "CreatedTimestamp": "1772366400",
		"DelaySeconds": "0", "LastModifiedTimestamp": "1772366400", "MaximumMessageSize": "1048576",
		"MessageRetentionPeriod": "300", "QueueArn": "arn:aws:sqs:eu-west-2:123456789012:ziba-production",
		"ReceiveMessageWaitTimeSeconds": "0", "SqsManagedSseEnabled": "true", "VisibilityTimeout": "30",
	}
	if d := cmp.Diff(want, got.Attributes); d != "" {
		t.Errorf("attributes (-want +got):\n%s", d)
	}

	if _, err := e.client.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url),
		Attributes: map[string]string{"VisibilityTimeout": "45"}}); err != nil {
		t.Fatalf("SetQueueAttributes: %v", err)
	}
	got, err = e.client.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameVisibilityTimeout}})
	if err != nil || got.Attributes["VisibilityTimeout"] != "45" || len(got.Attributes) != 1 {
		t.Errorf("VisibilityTimeout after set = %v, %v; want only 45", got.Attributes, err)
	}

	e.createQueue(t, "other", nil)
	list, err := e.client.ListQueues(ctx, &awssqs.ListQueuesInput{QueueNamePrefix: aws.String("zi")})
	if err != nil {
		t.Fatalf("ListQueues: %v", err)
	}
	if d := cmp.Diff([]string{url}, list.QueueUrls); d != "" {
		t.Errorf("ListQueues (-want +got):\n%s", d)
	}

	if _, err := e.client.DeleteQueue(ctx, &awssqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatalf("DeleteQueue: %v", err)
	}
	if _, err := e.client.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("ziba-production")}); accounttest.APIErrorCode(err) != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Errorf("GetQueueUrl after delete: %v", err)
	}
}

func TestKarpenterReceiveAndDelete(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createQueue(t, "ziba-production", nil)
	// Karpenter finds its queue by name, then uses that URL for everything.
	u, err := e.client.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("ziba-production")})
	if err != nil {
		t.Fatalf("GetQueueUrl: %v", err)
	}
	url := aws.ToString(u.QueueUrl)
	body := `{"version":"0","detail-type":"EC2 Spot Instance Interruption Warning"}`
	if err := e.svc.Send("ziba-production", body); err != nil {
		t.Fatalf("Send: %v", err)
	}
	sentAt := e.clock.Now()
	e.clock.Advance(time.Second)

	out, err := e.client.ReceiveMessage(ctx, karpenterReceive(url))
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("received %d messages, want 1", len(out.Messages))
	}
	m := out.Messages[0]
	if aws.ToString(m.Body) != body {
		t.Errorf("Body = %q, want %q", aws.ToString(m.Body), body)
	}
	if d := cmp.Diff(map[string]string{"SentTimestamp": strconv.FormatInt(sentAt.UnixMilli(), 10)}, m.Attributes); d != "" {
		t.Errorf("Attributes (-want +got):\n%s", d)
	}

	counts := func() (string, string) {
		a, err := e.client.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
				types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			t.Fatalf("GetQueueAttributes: %v", err)
		}
		return a.Attributes["ApproximateNumberOfMessages"], a.Attributes["ApproximateNumberOfMessagesNotVisible"]
	}
	if v, nv := counts(); v != "0" || nv != "1" {
		t.Errorf("while in flight: visible %s, not visible %s; want 0, 1", v, nv)
	}

	// Past the 20s visibility timeout the message is back, received a second time.
	e.clock.Advance(21 * time.Second)
	in := karpenterReceive(url)
	in.WaitTimeSeconds = 0
	in.MessageSystemAttributeNames = []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}
	again, err := e.client.ReceiveMessage(ctx, in)
	if err != nil || len(again.Messages) != 1 {
		t.Fatalf("second ReceiveMessage: %d messages, %v; want 1", len(again.Messages), err)
	}
	a := again.Messages[0].Attributes
	if a["ApproximateReceiveCount"] != "2" || a["ApproximateFirstReceiveTimestamp"] != strconv.FormatInt(sentAt.Add(time.Second).UnixMilli(), 10) {
		t.Errorf("system attributes = %v", a)
	}

	tests := []struct {
		name     string
		handle   string
		wantCode string
		wantLeft int
	}{
		{"malformed handle", "not-a-handle", "ReceiptHandleIsInvalid", 1},
		{"superseded handle deletes nothing", aws.ToString(m.ReceiptHandle), "", 1},
		{"latest handle", aws.ToString(again.Messages[0].ReceiptHandle), "", 0},
		{"already deleted", aws.ToString(again.Messages[0].ReceiptHandle), "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.client.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(tt.handle)})
			if got := accounttest.APIErrorCode(err); got != tt.wantCode {
				t.Errorf("error code = %q, want %q", got, tt.wantCode)
			}
			left, err := e.svc.Messages("ziba-production")
			if err != nil || len(left) != tt.wantLeft {
				t.Errorf("messages left = %d (%v), want %d", len(left), err, tt.wantLeft)
			}
		})
	}
}

func TestSendMessage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	url := e.createQueue(t, "q", nil)
	tests := []struct {
		name     string
		in       *awssqs.SendMessageInput
		wantCode string
	}{
		{"plain", &awssqs.SendMessageInput{MessageBody: aws.String("hello")}, ""},
		{"with attributes", &awssqs.SendMessageInput{MessageBody: aws.String("hi"), MessageAttributes: map[string]types.MessageAttributeValue{
			"kind": {DataType: aws.String("String"), StringValue: aws.String("spot")},
			"blob": {DataType: aws.String("Binary"), BinaryValue: []byte{1, 2, 3}},
		}}, ""},
		{"empty body", &awssqs.SendMessageInput{MessageBody: aws.String("")}, "MissingParameter"},
		{"delay too long", &awssqs.SendMessageInput{MessageBody: aws.String("x"), DelaySeconds: 901}, "InvalidParameterValue"},
		{"invalid character", &awssqs.SendMessageInput{MessageBody: aws.String("a\x01b")}, "InvalidMessageContents"},
		{"bad attribute type", &awssqs.SendMessageInput{MessageBody: aws.String("x"), MessageAttributes: map[string]types.MessageAttributeValue{
			"k": {DataType: aws.String("Float"), StringValue: aws.String("1")}}}, "InvalidParameterValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.QueueUrl = aws.String(url)
			out, err := e.client.SendMessage(ctx, tt.in) // the SDK checks MD5OfMessageBody itself
			if got := accounttest.APIErrorCode(err); got != tt.wantCode {
				t.Fatalf("error code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if err == nil && aws.ToString(out.MessageId) == "" {
				t.Errorf("no MessageId")
			}
		})
	}

	in := karpenterReceive(url)
	in.WaitTimeSeconds = 0
	out, err := e.client.ReceiveMessage(ctx, in)
	if err != nil || len(out.Messages) != 2 {
		t.Fatalf("ReceiveMessage: %d messages, %v; want 2", len(out.Messages), err)
	}
	m := out.Messages[1]
	// The digest AWS documents for these attributes, as moto computes it.
	if got := aws.ToString(m.MD5OfMessageAttributes); got != wantAttrMD5 {
		t.Errorf("MD5OfMessageAttributes = %s, want %s", got, wantAttrMD5)
	}
	if got := m.MessageAttributes["blob"].BinaryValue; !cmp.Equal(got, []byte{1, 2, 3}) {
		t.Errorf("binary attribute = %v", got)
	}

	delayed, err := e.client.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("later"), DelaySeconds: 10})
	if err != nil {
		t.Fatalf("SendMessage delayed: %v", err)
	}
	if got, _ := e.client.ReceiveMessage(ctx, in); len(got.Messages) != 0 {
		t.Errorf("a delayed message was received before its delay")
	}
	e.clock.Advance(10 * time.Second)
	got, err := e.client.ReceiveMessage(ctx, in)
	if err != nil || len(got.Messages) != 1 || aws.ToString(got.Messages[0].MessageId) != aws.ToString(delayed.MessageId) {
		t.Errorf("after the delay: %v, %v", got, err)
	}
}

func TestReceiveLimits(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue(t, "q", nil)
	tests := []struct {
		name string
		in   awssqs.ReceiveMessageInput
	}{
		{"too many messages", awssqs.ReceiveMessageInput{MaxNumberOfMessages: 11}},
		{"wait too long", awssqs.ReceiveMessageInput{WaitTimeSeconds: 21}},
		{"negative visibility", awssqs.ReceiveMessageInput{VisibilityTimeout: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.QueueUrl = aws.String(url)
			_, err := e.client.ReceiveMessage(context.Background(), &tt.in)
			if got := accounttest.APIErrorCode(err); got != "InvalidParameterValue" {
				t.Errorf("error code = %q, want InvalidParameterValue", got)
			}
		})
	}
}

func TestVisibilityAndPurge(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	url := e.createQueue(t, "q", nil)
	if err := e.svc.Send("q", "one"); err != nil {
		t.Fatal(err)
	}
	in := &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url)}
	out, err := e.client.ReceiveMessage(ctx, in)
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("ReceiveMessage: %v, %v", out, err)
	}
	h := out.Messages[0].ReceiptHandle
	if _, err := e.client.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
		ReceiptHandle: h, VisibilityTimeout: 43201}); accounttest.APIErrorCode(err) != "InvalidParameterValue" {
		t.Errorf("ChangeMessageVisibility 43201: %v", err)
	}
	// VisibilityTimeout 0 is the SDK's zero value, which it does not send: use 1s.
	if _, err := e.client.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
		ReceiptHandle: h, VisibilityTimeout: 1}); err != nil {
		t.Fatalf("ChangeMessageVisibility: %v", err)
	}
	e.clock.Advance(time.Second)
	if _, err := e.client.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
		ReceiptHandle: h, VisibilityTimeout: 5}); accounttest.APIErrorCode(err) != "AWS.SimpleQueueService.MessageNotInflight" {
		t.Errorf("ChangeMessageVisibility of a visible message: %v", err)
	}
	if out, err := e.client.ReceiveMessage(ctx, in); err != nil || len(out.Messages) != 1 {
		t.Errorf("ReceiveMessage after visibility change: %v, %v", out, err)
	}

	if _, err := e.client.PurgeQueue(ctx, &awssqs.PurgeQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatalf("PurgeQueue: %v", err)
	}
	if left, _ := e.svc.Messages("q"); len(left) != 0 {
		t.Errorf("%d messages left after purge", len(left))
	}
	if _, err := e.client.PurgeQueue(ctx, &awssqs.PurgeQueueInput{QueueUrl: aws.String(url)}); accounttest.APIErrorCode(err) != "AWS.SimpleQueueService.PurgeQueueInProgress" {
		t.Errorf("second PurgeQueue within 60s: %v", err)
	}
}

func TestBatches(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	url := e.createQueue(t, "q", nil)
	sent, err := e.client.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(url),
		Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("a"), MessageBody: aws.String("one")},
			{Id: aws.String("b"), MessageBody: aws.String("")},
			{Id: aws.String("c"), MessageBody: aws.String("three")},
		}})
	if err != nil {
		t.Fatalf("SendMessageBatch: %v", err)
	}
	if len(sent.Successful) != 2 || len(sent.Failed) != 1 || aws.ToString(sent.Failed[0].Id) != "b" {
		t.Errorf("SendMessageBatch: %d ok, failed %v", len(sent.Successful), sent.Failed)
	}
	_, err = e.client.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(url),
		Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("1")}, {Id: aws.String("a"), MessageBody: aws.String("2")}}})
	if got := accounttest.APIErrorCode(err); got != "AWS.SimpleQueueService.BatchEntryIdsNotDistinct" {
		t.Errorf("duplicate ids: %q", got)
	}
	got, err := e.client.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 2 {
		t.Fatalf("ReceiveMessage: %v, %v", got, err)
	}
	del, err := e.client.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: aws.String(url),
		Entries: []types.DeleteMessageBatchRequestEntry{
			{Id: aws.String("x"), ReceiptHandle: got.Messages[0].ReceiptHandle},
			{Id: aws.String("y"), ReceiptHandle: got.Messages[1].ReceiptHandle},
			{Id: aws.String("z"), ReceiptHandle: aws.String("bogus")},
		}})
	if err != nil {
		t.Fatalf("DeleteMessageBatch: %v", err)
	}
	if len(del.Successful) != 2 || len(del.Failed) != 1 || aws.ToString(del.Failed[0].Code) != "ReceiptHandleIsInvalid" {
		t.Errorf("DeleteMessageBatch: ok %v failed %v", del.Successful, del.Failed)
	}
	if _, err := e.client.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: aws.String(url),
		Entries: []types.DeleteMessageBatchRequestEntry{}}); accounttest.APIErrorCode(err) != "AWS.SimpleQueueService.EmptyBatchRequest" {
		t.Errorf("empty batch: %v", err)
	}
}

func TestLongPollReturnsOnSend(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue(t, "q", nil)
	done := make(chan *awssqs.ReceiveMessageOutput, 1)
	start := time.Now()
	go func() {
		out, err := e.client.ReceiveMessage(context.Background(), karpenterReceive(url))
		if err != nil {
			t.Errorf("ReceiveMessage: %v", err)
		}
		done <- out
	}()
	time.Sleep(200 * time.Millisecond)
	if err := e.svc.Send("q", "wake up"); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if out == nil || len(out.Messages) != 1 {
			t.Fatalf("long poll returned %v", out)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("long poll took %v after the send", el)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("long poll did not return after a send")
	}

	// With nothing to receive, a 1s wait returns empty after about 1s.
	in := karpenterReceive(url)
	in.WaitTimeSeconds = 1
	start = time.Now()
	out, err := e.client.ReceiveMessage(context.Background(), in)
	if el := time.Since(start); err != nil || len(out.Messages) != 0 || el < 900*time.Millisecond || el > 5*time.Second {
		t.Errorf("empty 1s poll: %d messages, %v, took %v", len(out.Messages), err, el)
	}
}

func TestPolicyDenial(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue(t, "q", nil)
	var asked []string
	e.host.Policy = func(caller, action, resource string) string {
		asked = append(asked, caller+" "+action+" "+resource)
		if action == "sqs:SendMessage" {
			return "explicit deny in the lab's policy"
		}
		return ""
	}
	_, err := e.client.SendMessage(context.Background(), &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")})
	if got := accounttest.APIErrorCode(err); got != "AccessDenied" {
		t.Errorf("error code = %q, want AccessDenied", got)
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() != 403 {
		t.Errorf("status = %d, want 403", re.HTTPStatusCode())
	}
	if d := cmp.Diff([]string{"AKIDLAB sqs:SendMessage arn:aws:sqs:eu-west-2:123456789012:q"}, asked); d != "" {
		t.Errorf("policy asked (-want +got):\n%s", d)
	}
	if left, _ := e.svc.Messages("q"); len(left) != 0 {
		t.Errorf("a denied send queued %d messages", len(left))
	}
}

func TestRestartKeepsMessagesAndReceiveState(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	url := e.createQueue(t, "q", map[string]string{"VisibilityTimeout": "60"})
	for _, b := range []string{"first", "second"} {
		if err := e.svc.Send("q", b); err != nil {
			t.Fatal(err)
		}
	}
	out, err := e.client.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("ReceiveMessage: %v, %v", out, err)
	}

	e.start(t)
	views, err := e.svc.Messages("q")
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Body     string
		Count    int
		InFlight bool
	}
	var got []view
	for _, v := range views {
		got = append(got, view{v.Body, v.ReceiveCount, v.InFlight})
	}
	if d := cmp.Diff([]view{{"first", 1, true}, {"second", 0, false}}, got); d != "" {
		t.Errorf("messages after restart (-want +got):\n%s", d)
	}
	url = e.srv.URL + "/123456789012/q" // the new listener's address
	a, err := e.client.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameVisibilityTimeout}})
	if err != nil || a.Attributes["VisibilityTimeout"] != "60" {
		t.Errorf("VisibilityTimeout after restart = %v, %v", a, err)
	}
	// The receipt handle from before the restart still deletes its message.
	if _, err := e.client.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: out.Messages[0].ReceiptHandle}); err != nil {
		t.Fatalf("DeleteMessage after restart: %v", err)
	}
	if views, _ := e.svc.Messages("q"); len(views) != 1 || views[0].Body != "second" {
		t.Errorf("after delete: %v", views)
	}
	if err := e.svc.Reset(); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	if _, err := e.svc.Messages("q"); err == nil {
		t.Errorf("queue q survived Reset and a restart")
	}
}

func TestEnsureQueue(t *testing.T) {
	e := newEnv(t)
	url, err := e.svc.EnsureQueue("ziba-production")
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://sqs.eu-west-2.amazonaws.com/123456789012/ziba-production"; url != want {
		t.Errorf("EnsureQueue = %q, want %q", url, want)
	}
	if _, err := e.svc.EnsureQueue("ziba-production"); err != nil {
		t.Errorf("EnsureQueue again: %v", err)
	}
	if err := e.svc.Send("missing", "x"); err == nil {
		t.Errorf("Send to a missing queue succeeded")
	}
	// The SDK accepts the regional URL EnsureQueue returns: only the path is used.
	if _, err := e.client.SendMessage(context.Background(), &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")}); err != nil {
		t.Errorf("SendMessage to the EnsureQueue URL: %v", err)
	}
}

// wantAttrMD5 is moto 5.2.1's Message.attribute_md5 (AWS's documented algorithm) of
// {"blob": Binary 0x010203, "kind": String "spot"}.
const wantAttrMD5 = "c6e59ce135e1ea3cf6f268820fe68308"
