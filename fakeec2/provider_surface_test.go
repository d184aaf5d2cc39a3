package fakeec2_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	sdk "github.com/aws/karpenter-provider-aws/pkg/aws"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/karplab/karplab/fakeec2"
)

// unhandled are the codes with which an endpoint says it has no handler for a call.
var unhandled = map[string]bool{"InvalidAction": true, "UnknownOperationException": true,
	"UnknownServiceException": true, "MissingAction": true}

// TestProviderSurfaceHandled calls every method of karpenter-provider-aws's pkg/aws/sdk.go
// interfaces through the real SDK clients (client-side validation off, every top-level
// string set to "x") and fails when the emulator answers that it has no handler. Errors
// about the input are fine: they come from a handler. Left out on purpose:
// ARCZonalShiftAPI (the provider's zonal-shift support is off unless enabled) and
// TimestreamWriteAPI (its metrics sink, off in the lab).
func TestProviderSurfaceHandled(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.InterruptionQueue = interruptionQueue })
	cfg := awsConfig(t, e.url, karpenterKey)
	cfg.RetryMaxAttempts = 1
	cfg.APIOptions = append(cfg.APIOptions, func(st *middleware.Stack) error {
		_, _ = st.Initialize.Remove("OperationInputValidation") // absent where nothing is required
		return nil
	})
	clients := []struct {
		iface  reflect.Type
		client any
	}{
		{reflect.TypeFor[sdk.EC2API](), ec2.NewFromConfig(cfg)},
		{reflect.TypeFor[sdk.IAMAPI](), iam.NewFromConfig(cfg)},
		{reflect.TypeFor[sdk.SSMAPI](), ssm.NewFromConfig(cfg)},
		{reflect.TypeFor[sdk.SQSAPI](), sqs.NewFromConfig(cfg)},
		{reflect.TypeFor[sdk.PricingAPI](), pricing.NewFromConfig(cfg)},
		{reflect.TypeFor[sdk.EKSAPI](), eks.NewFromConfig(cfg)},
	}
	calls := 0
	for _, c := range clients {
		for i := range c.iface.NumMethod() {
			m := c.iface.Method(i)
			t.Run(c.iface.Name()+"."+m.Name, func(t *testing.T) {
				fn := reflect.ValueOf(c.client).MethodByName(m.Name)
				in := reflect.New(fn.Type().In(1).Elem())
				for j := range in.Elem().NumField() {
					if f := in.Elem().Field(j); f.Type() == reflect.TypeFor[*string]() {
						f.Set(reflect.ValueOf(aws.String("x")))
					}
				}
				out := fn.Call([]reflect.Value{reflect.ValueOf(context.Background()), in})
				calls++
				err, _ := out[1].Interface().(error)
				var ae smithy.APIError
				if errors.As(err, &ae) && unhandled[ae.ErrorCode()] {
					t.Errorf("%s: the emulator has no handler: %v", m.Name, err)
				} else if err != nil && !errors.As(err, &ae) && !strings.Contains(err.Error(), "StatusCode") {
					t.Errorf("%s: not an AWS answer: %v", m.Name, err)
				}
			})
		}
	}
	if calls < 25 {
		t.Errorf("only %d provider methods called; the interfaces were not read", calls)
	}
}
