package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"

	"k8s.io/client-go/tools/leaderelection"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedoptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

const schedulerLease = "kube-scheduler"

// writeSchedulerConfig writes a KubeSchedulerConfiguration (JSON is YAML) pointing at the
// scheduler's kubeconfig; everything else is the upstream default.
func writeSchedulerConfig(path, kubeconfigPath string) error {
	cfg := map[string]any{
		"apiVersion":       "kubescheduler.config.k8s.io/v1",
		"kind":             "KubeSchedulerConfiguration",
		"clientConnection": map[string]any{"kubeconfig": kubeconfigPath},
		"leaderElection":   map[string]any{"leaderElect": true, "resourceName": schedulerLease, "resourceNamespace": "kube-system"},
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding scheduler configuration: %w", err)
	}
	return writeFileAtomic(path, data, 0o600)
}

// newScheduler builds a kube-scheduler serving /healthz and /metrics on ln. ctx bounds the
// goroutines the scheduler starts while being built; pass the same ctx to run.
//
// The upstream app.Run exits the process (os.Exit) when its leader election ends, even on a
// requested stop, so the election is run here and app.Run only once the lease is held.
// run returns nil after ctx is cancelled and the scheduler has stopped (lease released), or
// an error if the lease was lost.
func newScheduler(ctx context.Context, p *pki, configPath, kubeconfigPath string, ln net.Listener) (run func(context.Context) error, identity string, err error) {
	opts := schedoptions.NewOptions()
	opts.ConfigFile = configPath
	addr := ln.Addr().(*net.TCPAddr)
	opts.SecureServing.Listener = ln
	opts.SecureServing.BindAddress = addr.IP
	opts.SecureServing.BindPort = addr.Port
	opts.SecureServing.ServerCert.CertKey.CertFile = p.scheduler.certFile
	opts.SecureServing.ServerCert.CertKey.KeyFile = p.scheduler.keyFile
	opts.Authentication.ClientCert.ClientCA = p.ca.certFile
	opts.Authentication.RemoteKubeConfigFile = kubeconfigPath
	opts.Authorization.RemoteKubeConfigFile = kubeconfigPath

	cc, sched, err := schedapp.Setup(ctx, opts)
	if err != nil {
		return nil, "", fmt.Errorf("configuring kube-scheduler: %w", err)
	}
	if cc.LeaderElection == nil {
		return nil, "", errors.New("configuring kube-scheduler: leader election is off")
	}
	le := *cc.LeaderElection
	cc.LeaderElection = nil
	cc.ComponentConfig.LeaderElection.LeaderElect = false
	identity = le.Lock.Identity()

	run = func(ctx context.Context) error {
		var (
			mu      sync.Mutex
			stopped bool
			running sync.WaitGroup
			runErr  error
		)
		le.Callbacks = leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				mu.Lock()
				if stopped {
					mu.Unlock()
					return
				}
				running.Add(1)
				mu.Unlock()
				defer running.Done()
				// Without leader election app.Run ends with this error once ctx is done.
				if err := schedapp.Run(lctx, cc, sched); err != nil && lctx.Err() == nil {
					mu.Lock()
					runErr = err
					mu.Unlock()
				}
			},
			OnStoppedLeading: func() {},
		}
		le.ReleaseOnCancel = true
		elector, err := leaderelection.NewLeaderElector(le)
		if err != nil {
			return fmt.Errorf("kube-scheduler leader election: %w", err)
		}
		elector.Run(ctx)
		mu.Lock()
		stopped = true
		mu.Unlock()
		running.Wait()
		switch {
		case runErr != nil:
			return fmt.Errorf("kube-scheduler: %w", runErr)
		case ctx.Err() == nil:
			return errors.New("kube-scheduler lost its leader lease")
		}
		return nil
	}
	return run, identity, nil
}
