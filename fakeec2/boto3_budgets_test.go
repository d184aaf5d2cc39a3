package fakeec2_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBoto3Budgets runs testdata/boto3_budgets.py: boto3's budgets client, its
// describe_budgets paginator and its ClientError codes against the emulator.
func TestBoto3Budgets(t *testing.T) {
	py := python3WithBoto3(t)
	url := newEnv(t).url
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "testdata/boto3_budgets.py")
	cmd.Env = boto3Env(t.TempDir(), url)
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("boto3 budgets: %v\n%s", err, stderr)
	}
	type spend struct{ Amount, Unit string }
	var got struct {
		Pages        [][]string `json:"pages"`
		Limit        spend      `json:"limit"`
		Actual       spend      `json:"actual"`
		States       []string   `json:"states"`
		Subscribers  []struct{ SubscriptionType, Address string }
		Duplicate    string `json:"duplicate"`
		Missing      string `json:"missing"`
		OtherAccount string `json:"other_account"`
		Quarterly    string `json:"quarterly"`
		Updated      string `json:"updated"`
		Deleted      string `json:"deleted"`
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	want := got
	want.Pages = [][]string{{"boto3-0", "boto3-1"}, {"boto3-2"}}
	want.Limit, want.Actual, want.States = spend{"5", "USD"}, spend{"0", "USD"}, []string{"OK"}
	want.Subscribers = []struct{ SubscriptionType, Address string }{{"EMAIL", "platform@ziba.example"}}
	want.Duplicate, want.Missing, want.OtherAccount, want.Quarterly = "DuplicateRecordException", "NotFoundException", "AccessDeniedException", "InvalidParameterException"
	want.Updated, want.Deleted = "7.50", "NotFoundException"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("boto3 saw (-want +got):\n%s", d)
	}
}
