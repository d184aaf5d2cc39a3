package ssm_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdk "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/ssm"
)

// start serves a new SSM over host on a real listener and returns it with an SDK client.
func start(t testing.TB, host *account.MemoryHost) (*ssm.Service, *sdk.Client) {
	t.Helper()
	svc, err := ssm.New(host, ssm.Options{})
	if err != nil {
		t.Fatalf("ssm.New: %v", err)
	}
	srv := httptest.NewServer(account.Handler(host, svc))
	t.Cleanup(srv.Close)
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("eu-west-2"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDLAB", "secret", "")))
	if err != nil {
		t.Fatalf("loading sdk config: %v", err)
	}
	return svc, sdk.NewFromConfig(cfg, func(o *sdk.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.RetryMaxAttempts = 1
	})
}

// apiError returns err's AWS error code and HTTP status ("" and 0 for nil).
func apiError(t *testing.T, err error) (string, int) {
	t.Helper()
	if err == nil {
		return "", 0
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not an API error: %v", err)
	}
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return ae.ErrorCode(), status
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
