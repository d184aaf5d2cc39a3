package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

const controllerManagerLease = "kube-controller-manager"

// kcmInformerName is the process-global informer name the controller manager reserves
// while its controllers run (client-go's informer-name registry).
const kcmInformerName = "kube-controller-manager"

// controllerManagerGone reports whether no controller manager of this process holds its
// informer name. Its app.Run returns before the controllers stopped (its leader election
// does not wait for them); they are gone once the shared informer factory has shut down
// and released the name. A controller manager stopped while still building its
// controllers never releases it, and then none can start again in this process.
func controllerManagerGone() bool {
	n, err := cache.NewInformerName(kcmInformerName)
	if err != nil {
		return false
	}
	n.Release()
	return true
}

func controllerManagerFlags(p *pki, kubeconfigPath string) []string {
	return []string{
		"--kubeconfig=" + kubeconfigPath,
		"--authentication-kubeconfig=" + kubeconfigPath,
		"--authorization-kubeconfig=" + kubeconfigPath,
		"--client-ca-file=" + p.ca.certFile,
		"--tls-cert-file=" + p.controllerMgr.certFile,
		"--tls-private-key-file=" + p.controllerMgr.keyFile,
		"--root-ca-file=" + p.ca.certFile,
		"--service-account-private-key-file=" + p.saKeyFile,
		// Each controller acts as its own service account (kubeadm does the same), so
		// RBAC denials in the lab name the controller.
		"--use-service-account-credentials=true",
		// The upstream default set. Everything the lab relies on is in it (service accounts
		// and tokens, namespaces, deployments/replicasets, garbage collection, node lifecycle
		// and taint eviction, daemonsets, jobs, disruption, endpoint slices, PV/PVC); a cold
		// start takes ~3s with all of them, so none is switched off.
		"--controllers=*",
		"--leader-elect=true",
		"--leader-elect-resource-name=" + controllerManagerLease,
		"--cluster-name=" + clusterName,
		"--profiling=false",
		// With one service account per controller, startup makes ~150 requests (create
		// account, request token, discovery); the default 20 QPS made that 5 seconds.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		// Node lifecycle: the upstream defaults, stated so a change is deliberate. Nodes are
		// checked every 5s, turn Unknown 50s after their last heartbeat (the lab's simulated
		// kubelet must renew leases or status faster), and their pods are evicted by taint
		// 300s later (DefaultTolerationSeconds).
		"--node-monitor-period=5s",
		"--node-monitor-grace-period=50s",
	}
}

// enableReleaseOnExit turns on the feature gate without which the controller manager
// calls klog.FlushAndExit (ending the whole process) when its context is cancelled. With
// it, cancellation releases the leader lease and Run returns.
func enableReleaseOnExit() error {
	const gate = "ControllerManagerReleaseLeaderElectionLockOnExit"
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{gate: true}); err != nil {
		return fmt.Errorf("enabling feature gate %s: %w", gate, err)
	}
	return nil
}

// newControllerManager builds a kube-controller-manager serving /healthz on ln. run returns
// nil after ctx is cancelled and every controller stopped, or an error if the controller
// manager stopped by itself (for instance after losing its leader lease).
func newControllerManager(ctx context.Context, p *pki, kubeconfigPath string, ln net.Listener) (func(context.Context) error, error) {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager options: %w", err)
	}
	all, disabled, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	named := s.Flags(all, disabled, aliases)
	s.ParsedFlags = &named
	fs := pflag.NewFlagSet("kube-controller-manager", pflag.ContinueOnError)
	for _, f := range named.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(controllerManagerFlags(p, kubeconfigPath)); err != nil {
		return nil, fmt.Errorf("parsing kube-controller-manager flags: %w", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	s.SecureServing.Listener = ln
	s.SecureServing.BindAddress = addr.IP
	s.SecureServing.BindPort = addr.Port

	c, err := s.Config(ctx, all, disabled, aliases)
	if err != nil {
		return nil, fmt.Errorf("configuring kube-controller-manager: %w", err)
	}
	completed := c.Complete()
	return func(ctx context.Context) error {
		err := kcmapp.Run(ctx, completed)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			err = errors.New("stopped (leader lease lost?)")
		}
		return fmt.Errorf("kube-controller-manager: %w", err)
	}, nil
}
