package karpenter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/awslabs/operatorpkg/controller"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	corecloudprovider "sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/operator"

	"github.com/karplab/karplab/cluster/karpenter/cloudprovider"
	"github.com/karplab/karplab/fakeec2"
)

// Run runs Karpenter core's operator and controllers in this process, with the lab's EC2
// provider (or the stock kwok provider) and the provider's own controllers, or with the
// real karpenter-provider-aws (ProviderAWS, wired as its own main does), until ctx ends.
//
// Karpenter's operator reads its flags from os.Args and its settings from the environment
// and panics on setup errors, so Run overwrites os.Args and KUBECONFIG, and can run only
// once per process (its controllers register process-wide metrics): the daemon runs it in
// a child process under a Supervisor. The EC2 client comes from the environment
// (AWS_ENDPOINT_URL, AWS_REGION, static credentials), as the real Karpenter's does.
//
// Before starting the lab's EC2 provider, Run does what karpenter-provider-aws does at
// startup: DescribeInstanceTypes with DryRun, which must answer DryRunOperation; anything
// else is an error naming the endpoint. ProviderAWS runs the provider's own check. Every
// listener of the process (metrics, health probes) binds 127.0.0.1.
func Run(ctx context.Context, o Options) (err error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			return fmt.Errorf("reading kubeconfig: %w", err)
		}
		if err := os.Setenv("KUBECONFIG", o.Kubeconfig); err != nil {
			return fmt.Errorf("setting KUBECONFIG: %w", err)
		}
	}
	restConfig, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	if o.ClusterEndpoint == "" {
		o.ClusterEndpoint = restConfig.Host
	}

	var api *ec2.Client
	if o.Provider == ProviderEC2 {
		if api, err = ec2Client(ctx, o.Region); err != nil {
			return err
		}
		if o.Region == "" {
			o.Region = api.Options().Region
		}
		if err := CheckEC2(ctx, api); err != nil {
			return err
		}
	}

	// Karpenter's setup panics (lo.Must) instead of returning errors; turn that into one.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("karpenter operator setup panicked: %v\n%s", r, debug.Stack())
		}
	}()
	os.Args = append([]string{"karpenter"}, o.karpenterArgs()...)
	if o.Provider != ProviderAWS {
		if err := useLabNodeClass(); err != nil {
			return err
		}
	}
	restoreManager := bindLoopback()
	defer restoreManager()
	opCtx, op := operator.NewOperator()
	logger.Info("starting karpenter", "provider", o.Provider, "cluster", o.ClusterName, "endpoint", o.ClusterEndpoint)

	var ctrls []controller.Controller
	switch o.Provider {
	case ProviderAWS:
		if ctrls, opCtx, err = awsControllers(opCtx, op); err != nil {
			return err
		}
	default:
		if ctrls, err = labControllers(opCtx, op, api, restConfig, o); err != nil {
			return err
		}
	}
	op.WithControllers(opCtx, ctrls...)

	runCtx, cancel := context.WithCancel(opCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	// op.Start would panic on a manager error; call the manager to get it back instead.
	if err := op.Manager.Start(runCtx); err != nil {
		return fmt.Errorf("running karpenter controllers: %w", err)
	}
	logger.Info("karpenter stopped")
	return nil
}

// labControllers are core's controllers over the lab's EC2 provider (with its leak
// collector and EC2NodeClass status controller) or the stock kwok provider.
func labControllers(opCtx context.Context, op *operator.Operator, api *ec2.Client, restConfig *rest.Config, o Options) ([]controller.Controller, error) {
	var undecorated corecloudprovider.CloudProvider
	var extra []controller.Controller
	switch o.Provider {
	case ProviderKWOK:
		its, err := kwok.ConstructInstanceTypes(opCtx)
		if err != nil {
			return nil, fmt.Errorf("constructing kwok instance types: %w", err)
		}
		undecorated = kwok.NewCloudProvider(opCtx, op.GetClient(), its)
	default:
		lab := cloudprovider.New(op.GetClient(), api, cloudprovider.Options{
			ClusterName:     o.ClusterName,
			ClusterEndpoint: o.ClusterEndpoint,
			ClusterCA:       caData(restConfig),
			ClusterDNS:      o.ClusterDNS,
			Region:          o.Region,
			OnDemandPrice:   onDemandPrice,
		})
		undecorated = lab
		extra = append(extra, cloudprovider.NewControllers(op.GetClient(), lab, cloudprovider.GCOptions{MinAge: o.GCMinAge, Period: o.GCPeriod})...)
		extra = append(extra, nodeClassControllers(op, api, o)...)
	}
	cp := overlay.Decorate(undecorated, op.GetClient(), op.InstanceTypeStore)
	matcher, err := health.NewRepairPolicyMatcher(opCtx, cp)
	if err != nil {
		return nil, fmt.Errorf("building repair policies: %w", err)
	}
	cluster := state.NewCluster(op.Clock, op.GetClient(), cp, state.WithRepairPolicyMatcher(matcher))
	ctrls := controllers.NewControllers(opCtx, op.Manager, op.Clock, op.GetClient(),
		op.EventRecorder, cp, undecorated, cluster, op.InstanceTypeStore, op.PredictionStore)
	return append(ctrls, extra...), nil
}

// ec2Client is the SDK client the real Karpenter would build: the default credential and
// endpoint chain (AWS_ENDPOINT_URL points it at the emulator).
func ec2Client(ctx context.Context, region string) (*ec2.Client, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = fakeec2.DefaultRegion
	}
	// Request bodies from memory: the SDK's streamed bodies race a server that answers in
	// microseconds and retry for nothing (see fakeec2.NewHTTPClient); harmless against AWS.
	return ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.HTTPClient = fakeec2.NewHTTPClient() }), nil
}

// CheckEC2 is karpenter-provider-aws's startup check: a DryRun DescribeInstanceTypes must be
// answered DryRunOperation (reachable, and allowed).
func CheckEC2(ctx context.Context, api *ec2.Client) error {
	_, err := api.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{DryRun: aws.Bool(true)})
	endpoint := aws.ToString(api.Options().BaseEndpoint)
	if endpoint == "" {
		endpoint = "the default AWS endpoint (set AWS_ENDPOINT_URL to reach the emulator)"
	}
	switch {
	case cloudprovider.IsDryRun(err):
		return nil
	case err == nil:
		return fmt.Errorf("checking EC2 at %s: DescribeInstanceTypes with DryRun succeeded instead of answering DryRunOperation", endpoint)
	case cloudprovider.IsUnauthorized(err):
		return fmt.Errorf("checking EC2 at %s: Karpenter may not call DescribeInstanceTypes: %w", endpoint, err)
	}
	return fmt.Errorf("checking EC2 at %s: %w", endpoint, err)
}

// onDemandPrice plays the part of the real provider's generated on-demand price table (EC2
// has no price API): the emulator's catalog is the same published eu-west-2 figures.
func onDemandPrice(instanceType string) (float64, bool) {
	it, ok := fakeec2.LookupInstanceType(instanceType)
	if !ok || it.OnDemandPrice <= 0 {
		return 0, false
	}
	return it.OnDemandPrice, true
}

func caData(c *rest.Config) []byte {
	if len(c.CAData) > 0 {
		return c.CAData
	}
	if c.CAFile != "" {
		if b, err := os.ReadFile(c.CAFile); err == nil {
			return b
		}
	}
	return nil
}
