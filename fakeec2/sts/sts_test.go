package sts_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/sts"
)

func start(t *testing.T, host *account.MemoryHost, opts sts.Options) string {
	t.Helper()
	svc, err := sts.New(host, opts)
	if err != nil {
		t.Fatalf("sts.New: %v", err)
	}
	return accounttest.Start(t, svc, host)
}

func client(t *testing.T, endpoint, key string) *sdk.Client {
	return sdk.NewFromConfig(accounttest.Config(t, endpoint, key))
}

// policy denies what deny lists and records every question.
type policy struct {
	mu    sync.Mutex
	deny  map[string]bool
	asked []string
}

func (p *policy) authorize(caller, action, resource string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, action)
	if p.deny[action] || p.deny["*"] {
		return "the lab denies " + action
	}
	return ""
}

func TestGetCallerIdentity(t *testing.T) {
	host := account.NewMemoryHost()
	pol := &policy{deny: map[string]bool{"*": true}}
	host.Policy = pol.authorize
	url := start(t, host, sts.Options{})
	ctx := context.Background()

	tests := []struct {
		name    string
		key     string
		wantArn string
	}{
		{name: "the lab key", key: "AKIDLAB", wantArn: "arn:aws:iam::123456789012:user/AKIDLAB"},
		{name: "another key", key: "AKIDOTHER", wantArn: "arn:aws:iam::123456789012:user/AKIDOTHER"},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client(t, url, tt.key)
			first, err := c.GetCallerIdentity(ctx, &sdk.GetCallerIdentityInput{})
			if err != nil {
				t.Fatalf("GetCallerIdentity under a deny-all policy: %v", err)
			}
			second, err := c.GetCallerIdentity(ctx, &sdk.GetCallerIdentityInput{})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{aws.ToString(first.Account), aws.ToString(first.Arn)}
			if d := cmp.Diff([]string{"123456789012", tt.wantArn}, got); d != "" {
				t.Errorf("identity (-want +got):\n%s", d)
			}
			id := aws.ToString(first.UserId)
			if !strings.HasPrefix(id, "AIDA") || len(id) != 21 || id != aws.ToString(second.UserId) {
				t.Errorf("UserId %q then %q: want one stable AIDA ID of 21 characters", id, aws.ToString(second.UserId))
			}
			ids[tt.key] = id
		})
	}
	if ids["AKIDLAB"] == ids["AKIDOTHER"] {
		t.Errorf("two keys share UserId %q", ids["AKIDLAB"])
	}
	if len(pol.asked) != 0 {
		t.Errorf("policy asked %v; GetCallerIdentity is never denied", pol.asked)
	}
}

type decoded struct {
	Allowed      bool   `json:"allowed"`
	ExplicitDeny bool   `json:"explicitDeny"`
	Reason       string `json:"reason"`
	Context      struct {
		Principal struct {
			ID  string `json:"id"`
			Arn string `json:"arn"`
		} `json:"principal"`
		Action     string `json:"action"`
		Resource   string `json:"resource"`
		Conditions struct {
			Items []any `json:"items"`
		} `json:"conditions"`
	} `json:"context"`
	MatchedStatements struct {
		Items []any `json:"items"`
	} `json:"matchedStatements"`
}

func TestDecodeAuthorizationMessage(t *testing.T) {
	const iamWorded = "User: arn:aws:iam::123456789012:user/AKIDLAB is not authorized to perform: iam:PassRole on resource: arn:aws:iam::123456789012:role/R because no identity-based policy allows the iam:PassRole action"
	reasons := map[string]string{
		"enc-zone": "statement 0 does not allow availability zone eu-west-2c (allowed: eu-west-2a)",
		"enc-iam":  iamWorded,
	}
	byReason := sts.Options{Decode: func(m string) (string, bool) { r, ok := reasons[m]; return r, ok }}
	byDenial := sts.Options{DecodeDenial: func(m string) (sts.Denial, bool) {
		return sts.Denial{Caller: "AKIDNODE", Action: "ec2:RunInstances", Resource: "arn:aws:ec2:eu-west-2::image/ami-1",
			Reason: "denied by statement 1", ExplicitDeny: true}, m == "enc-full"
	}}
	tests := []struct {
		name     string
		opts     sts.Options
		message  string
		wantCode string
		wantHTTP int
		want     func(d decoded) []string // fields to compare with wantVals
		wantVals []string
	}{
		{name: "a lab reason", opts: byReason, message: "enc-zone",
			want:     func(d decoded) []string { return []string{d.Reason, d.Context.Action} },
			wantVals: []string{reasons["enc-zone"], ""}},
		{name: "an IAM-worded reason names action and resource", opts: byReason, message: "enc-iam",
			want:     func(d decoded) []string { return []string{d.Context.Action, d.Context.Resource} },
			wantVals: []string{"iam:PassRole", "arn:aws:iam::123456789012:role/R"}},
		{name: "a whole denial", opts: byDenial, message: "enc-full",
			want: func(d decoded) []string {
				return []string{d.Context.Principal.Arn, d.Context.Action, d.Context.Resource, d.Reason}
			},
			wantVals: []string{"arn:aws:iam::123456789012:user/AKIDNODE", "ec2:RunInstances", "arn:aws:ec2:eu-west-2::image/ami-1", "denied by statement 1"}},
		{name: "unknown message", opts: byReason, message: "enc-never", wantCode: "InvalidAuthorizationMessageException", wantHTTP: 400},
		{name: "no decoder knows nothing", message: "enc-zone", wantCode: "InvalidAuthorizationMessageException", wantHTTP: 400},
		{name: "empty message", opts: byReason, message: "", wantCode: "ValidationError", wantHTTP: 400},
		{name: "message too long", opts: byReason, message: strings.Repeat("x", 10241), wantCode: "ValidationError", wantHTTP: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client(t, start(t, account.NewMemoryHost(), tt.opts), "AKIDLAB")
			out, err := c.DecodeAuthorizationMessage(context.Background(), &sdk.DecodeAuthorizationMessageInput{EncodedMessage: aws.String(tt.message)})
			if code, status := accounttest.APIError(t, err); code != tt.wantCode || status != tt.wantHTTP {
				t.Fatalf("got %q (HTTP %d): %v; want %q (HTTP %d)", code, status, err, tt.wantCode, tt.wantHTTP)
			}
			if err != nil {
				return
			}
			var d decoded
			if err := json.Unmarshal([]byte(aws.ToString(out.DecodedMessage)), &d); err != nil {
				t.Fatalf("DecodedMessage %q is not JSON: %v", aws.ToString(out.DecodedMessage), err)
			}
			if d.Allowed || d.Context.Conditions.Items == nil || d.MatchedStatements.Items == nil {
				t.Errorf("decoded %+v: want allowed false and AWS's empty item lists", d)
			}
			if d := cmp.Diff(tt.wantVals, tt.want(d)); d != "" {
				t.Errorf("decoded fields (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeDenied(t *testing.T) {
	host := account.NewMemoryHost()
	pol := &policy{deny: map[string]bool{"sts:DecodeAuthorizationMessage": true}}
	host.Policy = pol.authorize
	decoderCalled := false
	url := start(t, host, sts.Options{Decode: func(string) (string, bool) { decoderCalled = true; return "r", true }})
	_, err := client(t, url, "AKIDLAB").DecodeAuthorizationMessage(context.Background(),
		&sdk.DecodeAuthorizationMessageInput{EncodedMessage: aws.String("enc")})
	if code, status := accounttest.APIError(t, err); code != "AccessDenied" || status != 403 {
		t.Fatalf("got %q (HTTP %d): %v; want AccessDenied (403)", code, status, err)
	}
	if !strings.Contains(err.Error(), "not authorized to perform: sts:DecodeAuthorizationMessage") {
		t.Errorf("message %q does not name the action", err.Error())
	}
	if decoderCalled {
		t.Errorf("a denied call decoded the message")
	}
	if d := cmp.Diff([]string{"sts:DecodeAuthorizationMessage"}, pol.asked); d != "" {
		t.Errorf("policy questions (-want +got):\n%s", d)
	}
}
