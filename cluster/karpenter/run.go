package karpenter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/awslabs/operatorpkg/controller"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/operator"

	"github.com/karplab/karplab/cluster/installs"
	"github.com/karplab/karplab/fakeec2"
)

// Run runs Karpenter core's operator in this process with the real karpenter-provider-aws
// (ProviderAWS: its operator, cloud provider and every controller, wired as its own main
// does) or the stock kwok provider (ProviderKWOK, the floor to compare with), until ctx ends.
//
// Karpenter's operator reads its flags from os.Args and its settings from the environment
// and panics on setup errors, so Run overwrites os.Args and KUBECONFIG, and can run only
// once per process (its controllers register process-wide metrics): the daemon runs it in
// a child process under a Supervisor. The provider's AWS clients come from the environment
// (AWS_ENDPOINT_URL, AWS_REGION, static credentials), as in a pod. Every listener of the
// process (metrics, health probes) binds 127.0.0.1.
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
	if o.ClusterEndpoint == "" {
		restConfig, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return fmt.Errorf("loading kubeconfig: %w", err)
		}
		o.ClusterEndpoint = restConfig.Host
	}

	// Karpenter's setup panics (lo.Must) instead of returning errors; turn that into one.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("karpenter operator setup panicked: %v\n%s", r, debug.Stack())
		}
	}()
	lc, view, err := o.labTime(ctx)
	if err != nil {
		return err
	}
	os.Args = append([]string{"karpenter"}, o.karpenterArgs()...)
	restoreManager := bindLoopback()
	defer restoreManager()
	opCtx, op := operator.NewOperator()
	if lc != nil {
		op.Clock = lc // before any provider or controller takes op.Clock
		logger.Info("following the lab clock", "offset", lc.Offset().String(), "labTime", lc.Now().UTC().Format(time.RFC3339))
		follow := manager.RunnableFunc(func(ctx context.Context) error { return lc.follow(ctx, o.LabClock, op.GetClient(), view, logger) })
		if err := op.Manager.Add(follow); err != nil {
			return fmt.Errorf("adding the lab clock: %w", err)
		}
	}
	logger.Info("starting karpenter", "provider", o.Provider, "cluster", o.ClusterName, "endpoint", o.ClusterEndpoint)

	var ctrls []controller.Controller
	var clusterState *state.Cluster
	switch o.Provider {
	case ProviderKWOK:
		if ctrls, clusterState, err = kwokControllers(opCtx, op); err != nil {
			return err
		}
	default:
		if ctrls, clusterState, opCtx, err = awsControllers(opCtx, op); err != nil {
			return err
		}
	}
	if lc != nil {
		lc.state.Store(clusterState)
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

// labTime reads the lab clock and the skips so far, and points KUBECONFIG at a copy that
// gives Karpenter its lab-time view of NodeClaims (labview.go) and records what it creates
// (InstallRecord). Without a lab clock the clock is nil and the view changes no time.
func (o Options) labTime(ctx context.Context) (*labClock, *labView, error) {
	if o.LabClock == "" && o.InstallRecord == "" {
		return nil, nil, nil
	}
	view := &labView{log: o.Logger}
	if o.InstallRecord != "" {
		view.record = installs.Open(o.InstallRecord, "karpenter")
	}
	var lc *labClock
	if o.LabClock != "" {
		var err error
		if lc, err = readLabClock(ctx, o.LabClock); err != nil {
			return nil, nil, err
		}
		if err := view.refresh(ctx, fakeec2.NewAdminClient(o.LabClock), lc.Offset()); err != nil {
			return nil, nil, err
		}
	}
	kc, err := labViewKubeconfig(os.Getenv("KUBECONFIG"), view)
	if err != nil {
		return nil, nil, err
	}
	return lc, view, os.Setenv("KUBECONFIG", kc)
}

// kwokControllers are core's controllers over Karpenter's stock kwok provider, as its
// kwok/main.go wires them.
func kwokControllers(opCtx context.Context, op *operator.Operator) ([]controller.Controller, *state.Cluster, error) {
	its, err := kwok.ConstructInstanceTypes(opCtx)
	if err != nil {
		return nil, nil, fmt.Errorf("constructing kwok instance types: %w", err)
	}
	undecorated := kwok.NewCloudProvider(opCtx, op.GetClient(), its)
	cp := overlay.Decorate(undecorated, op.GetClient(), op.InstanceTypeStore)
	matcher, err := health.NewRepairPolicyMatcher(opCtx, cp)
	if err != nil {
		return nil, nil, fmt.Errorf("building repair policies: %w", err)
	}
	cluster := state.NewCluster(op.Clock, op.GetClient(), cp, state.WithRepairPolicyMatcher(matcher))
	return controllers.NewControllers(opCtx, op.Manager, op.Clock, op.GetClient(),
		op.EventRecorder, cp, undecorated, cluster, op.InstanceTypeStore, op.PredictionStore), cluster, nil
}
