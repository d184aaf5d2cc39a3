package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/reexec"
	"github.com/karplab/karplab/fakeec2/accesskeys"
)

// karpenterService runs Karpenter as a supervised child process of the daemon (its operator
// panics and reads process flags, so a failure must stay contained and restartable). The
// daemon picks its health and metrics ports, so it can wait on /readyz and show them.
func karpenterService(d *daemon, ec2Endpoint string) *service {
	cfg := d.cfg
	var sup *karpenter.Supervisor
	var healthURL, metricsURL string
	// A restart clears Karpenter's in-memory caches (unavailable offerings, instance types).
	d.restartKarpenter = func(ctx context.Context) error {
		if sup == nil {
			return nil
		}
		before, restarts := sup.Status().PID, sup.Status().Restarts
		sup.Restart()
		deadline := time.Now().Add(time.Minute)
		for sup.Status().PID == before || !sup.Status().Running {
			if time.Now().After(deadline) {
				return fmt.Errorf("karpenter did not come back after a restart")
			}
			time.Sleep(100 * time.Millisecond)
		}
		return waitReady(ctx, sup, healthURL, 2*time.Minute, restarts+1)
	}
	d.holdKarpenter = func(ctx context.Context) (func(context.Context) error, error) {
		if sup == nil {
			return func(context.Context) error { return nil }, nil
		}
		restarts := sup.Status().Restarts
		release, err := sup.Hold(ctx)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) error {
			release()
			return waitReady(ctx, sup, healthURL, 2*time.Minute, restarts+1)
		}, nil
	}
	return &service{
		name: "Karpenter controllers (provider " + cfg.Provider + ")",
		start: func(ctx context.Context) (string, error) {
			ports, err := freePorts(2)
			if err != nil {
				return "", err
			}
			healthPort, metricsPort := ports[0], ports[1]
			opts := cfg.Karpenter
			opts.Provider = cfg.Provider
			opts.HealthProbePort = healthPort
			opts.MetricsPort = metricsPort
			opts.LabClock = ec2Endpoint // the controllers run on the account's lab time
			opts.InstallRecord = cfg.Home.InstallRecord()
			opts, env := KarpenterProcess(opts, cfg.Account, cfg.Home.Kubeconfig(), d.restConfig().Host, ec2Endpoint)
			env = append(env, cfg.KarpenterEnv...)
			healthURL = fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)
			metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
			sup = &karpenter.Supervisor{
				Path:    cfg.Executable,
				Args:    reexec.KarpenterArgs(opts.Args()),
				Env:     env,
				LogFile: cfg.Home.KarpenterLog(),
				Logger:  cfg.Logger.With("component", "karpenter-supervisor"),
			}
			if err := sup.Start(ctx); err != nil {
				return "", fmt.Errorf("starting the Karpenter process: %w", err)
			}
			if err := waitReady(ctx, sup, healthURL, 3*time.Minute, 0); err != nil {
				return "", fmt.Errorf("%w\n%s", err, logTail(cfg.Home.KarpenterLog(), 15))
			}
			return fmt.Sprintf("pid %d, metrics %s, log %s", sup.Status().PID, metricsURL, cfg.Home.KarpenterLog()), nil
		},
		stop: func(ctx context.Context) error { return sup.Stop(ctx) },
		components: func(ctx context.Context) []backend.Component {
			st := sup.Status()
			c := backend.Component{Name: "karpenter", Address: metricsURL}
			ok, detail := probe(ctx, healthURL)
			c.Healthy = st.Running && ok
			c.Detail = fmt.Sprintf("pid %d, %d restarts", st.PID, st.Restarts)
			if !ok {
				c.Detail += ", " + detail
			}
			if st.LastExit != nil {
				c.Detail += fmt.Sprintf(", last exit %s: %s", st.LastExit.Time.Local().Format("15:04:05"), st.LastExit.Error)
			}
			return []backend.Component{c}
		},
	}
}

// KarpenterProcess completes opts (the caller's provider, ports and tuning) and returns the
// child's environment, as the daemon runs Karpenter: on the API server apiServer through
// kubeconfig, and on the lab's AWS account at ec2Endpoint with the controller's credential.
func KarpenterProcess(opts karpenter.Options, acct Account, kubeconfig, apiServer, ec2Endpoint string) (karpenter.Options, []string) {
	opts.ClusterName = acct.ClusterName
	opts.Kubeconfig = kubeconfig
	env := []string{
		"KUBECONFIG=" + kubeconfig,
		"AWS_ENDPOINT_URL=" + ec2Endpoint,
		"AWS_REGION=" + acct.Region,
		"AWS_ACCESS_KEY_ID=" + accesskeys.Karpenter,
		"AWS_SECRET_ACCESS_KEY=" + accesskeys.DummySecret,
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_EC2_METADATA_DISABLED=true",
	}
	if opts.Provider == karpenter.ProviderAWS {
		// As the provider's Helm chart sets them; the emulator's SQS has a queue named
		// after the cluster. The child passes the same values as flags too.
		opts.ClusterEndpoint = apiServer
		opts.InterruptionQueue = acct.ClusterName
		env = append(env, "CLUSTER_NAME="+acct.ClusterName, "CLUSTER_ENDPOINT="+opts.ClusterEndpoint,
			"INTERRUPTION_QUEUE="+opts.InterruptionQueue)
	}
	return opts, env
}

// waitReady polls url until it answers 200, failing early when the child keeps exiting:
// three more restarts than the baseline (restarts the caller asked for do not count).
func waitReady(ctx context.Context, sup *karpenter.Supervisor, url string, timeout time.Duration, baseline int) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if ok, _ := probe(ctx, url); ok {
			return nil
		}
		if st := sup.Status(); st.Restarts-baseline >= 3 && st.LastExit != nil {
			return fmt.Errorf("the Karpenter process keeps exiting (last: %s)", st.LastExit.Error)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("karpenter was not ready after %s", timeout)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func probe(ctx context.Context, url string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, "not answering"
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Sprintf("%s: %s", resp.Status, body)
	}
	return true, ""
}

// freePorts asks the kernel for n distinct free loopback ports (holding each until all are
// chosen, so two calls cannot get the same one back).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
