// Package accounttest is what every service's tests under fakeec2 share: a service on a
// real listener and the aws-sdk-go-v2 configuration that reaches it, as a lab client
// would. It may import the SDK; the account package itself must not.
package accounttest

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/karplab/karplab/fakeec2/account"
)

// Region is the region Config signs for, NewMemoryHost's.
const Region = "eu-west-2"

// AccessKey is the lab client's access key ID: the caller the policy sees.
const AccessKey = "AKIDLAB"

// Server serves svc over host on a real listener, closed when the test ends (or
// earlier by the caller, to model a restart).
func Server(t testing.TB, svc account.Service, host account.Host) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(account.Handler(host, svc))
	t.Cleanup(srv.Close)
	return srv
}

// Start serves svc over host on a real listener and returns its URL.
func Start(t testing.TB, svc account.Service, host account.Host) (url string) {
	t.Helper()
	return Server(t, svc, host).URL
}

// Config is an SDK configuration that reaches url with static credentials for
// accessKey. It makes one attempt per call: a test sees the first answer, not a retry's.
func Config(t testing.TB, url, accessKey string) aws.Config {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(accessKey, "secret", "")),
		config.WithBaseEndpoint(url), config.WithRetryMaxAttempts(1))
	if err != nil {
		t.Fatalf("loading sdk config: %v", err)
	}
	return cfg
}

// APIErrorCode is err's AWS error code: "" for nil, "non-API error: ..." for an error
// the SDK did not decode from an answer.
func APIErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return "non-API error: " + err.Error()
	}
	return ""
}

// APIError is err's AWS error code and HTTP status ("" and 0 for nil); an error that is
// not an API error fails the test.
func APIError(t testing.TB, err error) (code string, status int) {
	t.Helper()
	if err == nil {
		return "", 0
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not an API error: %v", err)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return ae.ErrorCode(), status
}
