package ssm_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/ssm"
)

// start serves a new SSM over host on a real listener and returns it with an SDK client.
func start(t testing.TB, host *account.MemoryHost) (*ssm.Service, *sdk.Client) {
	t.Helper()
	svc, err := ssm.New(host, ssm.Options{})
	if err != nil {
		t.Fatalf("ssm.New: %v", err)
	}
	return svc, sdk.NewFromConfig(accounttest.Config(t, accounttest.Start(t, svc, host), accounttest.AccessKey))
}

func put(t *testing.T, c *sdk.Client, name, value string, typ types.ParameterType, overwrite bool) int64 {
	t.Helper()
	out, err := c.PutParameter(context.Background(), &sdk.PutParameterInput{Name: aws.String(name),
		Value: aws.String(value), Type: typ, Overwrite: aws.Bool(overwrite)})
	if err != nil {
		t.Fatalf("PutParameter %s: %v", name, err)
	}
	return out.Version
}

func get(t *testing.T, c *sdk.Client, name string) (string, error) {
	t.Helper()
	out, err := c.GetParameter(context.Background(), &sdk.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.Parameter.Value), nil
}
