package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/controlplane"
	"github.com/karplab/karplab/cluster/existing"
	"github.com/karplab/karplab/cluster/installs"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/kind"
	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/cluster/metrics"
	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/fakeec2/authz"
)

// Target is the user's choice of cluster and provider.
type Target struct {
	Backend, Provider   string
	Kubeconfig, Context string // the existing backend's cluster
}

func (c DaemonConfig) target() Target {
	return Target{Backend: c.Backend, Provider: c.Provider, Kubeconfig: c.Kubeconfig, Context: c.Context}
}

// newBackend returns the Kubernetes backend the config names.
func newBackend(cfg DaemonConfig) (backend.Backend, error) {
	switch cfg.Backend {
	case "kind":
		return kind.New(kind.Options{Home: string(cfg.Home), Recorded: cfg.Home.recordedBy()}), nil
	case "existing":
		// RunDaemon's Preflight, or the CLI's it trusts, has just checked the cluster.
		return existing.New(existing.Options{Kubeconfig: cfg.Kubeconfig, Context: cfg.Context, Recorded: cfg.Home.recordedBy(), Checked: true}), nil
	case "embedded":
		return newEmbedded(cfg.Home.ControlPlaneDir(), cfg.Logger.With("component", "controlplane"), cfg.Replay != ""), nil
	default:
		return nil, Preflight(context.Background(), cfg.Home, cfg.target(), io.Discard)
	}
}

// Preflight checks the user's choices before anything starts, so a bad flag, a host that
// cannot run the backend or a cluster the lab cannot use fails at once, with the fix in
// the message and nothing installed. For kind it also chooses the engine (what the user
// should know of the choice goes to status) and makes sure the node image is there,
// building it offline when it is not, with progress on status.
func Preflight(ctx context.Context, h Home, t Target, status io.Writer) error {
	switch t.Provider {
	case "", karpenter.ProviderAWS, karpenter.ProviderKWOK:
	case "ec2":
		return fmt.Errorf("provider %q (the lab's own model of Karpenter on AWS) is retired: use --provider aws (the default, the real karpenter-provider-aws on the emulated account) or --provider kwok", t.Provider)
	default:
		return fmt.Errorf("unknown provider %q: use --provider aws (the default, the real karpenter-provider-aws on the emulated account) or --provider kwok (Karpenter's stock kwok provider, no EC2)", t.Provider)
	}
	if (t.Kubeconfig != "" || t.Context != "") && t.Backend != "existing" {
		return fmt.Errorf("--kubeconfig and --context name an existing cluster: add --backend existing (the %s backend makes its own cluster)", orDefault(t.Backend, "embedded"))
	}
	switch t.Backend {
	case "", "embedded":
		return nil
	case "kind":
		_, err := kind.Prepare(ctx, kind.Options{Home: string(h)}, status)
		return err
	case "existing":
		cfg, _, err := existing.Load(t.Kubeconfig, t.Context)
		if err != nil {
			return err
		}
		_, err = existing.Check(ctx, cfg, h.recordedBy())
		return err
	default:
		return fmt.Errorf("unknown backend %q: use --backend embedded (the default), kind (needs Docker or podman) or existing --kubeconfig FILE (a cluster you have)", t.Backend)
	}
}

// NewEC2Client returns an aws-sdk-go-v2 EC2 client for the lab's emulator, signing as
// accessKeyID.
func NewEC2Client(endpoint, accessKeyID string) *ec2.Client {
	return NewEC2ClientIn(DefaultRegion, endpoint, accessKeyID)
}

// NewEC2ClientIn is NewEC2Client for the account's region.
func NewEC2ClientIn(region, endpoint, accessKeyID string) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKeyID, accesskeys.DummySecret, ""),
		// The lab's own components talk to a local emulator: few, quick retries.
		RetryMaxAttempts: 5,
	})
}

// DefaultPolicy is the account's policy when it is new and after a reset: with the real
// provider, the controller's key gets the getting-started stack's KarpenterControllerPolicy
// (least privilege: what it is not granted is denied). kwok calls no AWS API.
func DefaultPolicy(provider string) *authz.Policy {
	if provider != "aws" {
		return nil
	}
	return &authz.Policy{Statements: []authz.PolicyStatement{authz.KarpenterControllerPolicy(accesskeys.Karpenter)}}
}

// newServices lists the lab's parts in start order. Each constructor returns its service
// and publishes, through d, how the rest of the daemon reaches what it runs.
func newServices(d *daemon) ([]*service, error) {
	be, err := newBackend(d.cfg)
	if err != nil {
		return nil, err
	}
	// The EC2 emulator listens on a fixed address the learner's aws CLI is pointed at.
	endpoint := "http://" + d.cfg.EC2Addr
	// A replay loads its bundle before the kubelets start and lets the controllers go after
	// them; it sets Karpenter's settings, so it comes before karpenterService reads them.
	var load, release []*service
	if d.cfg.Replay != "" {
		l, r, err := replayServices(d, be)
		if err != nil {
			return nil, err
		}
		load, release = []*service{l}, []*service{r}
	}
	services := []*service{
		controlPlaneService(d, be),
		ec2Service(d, be, endpoint),
		crdService(d, be),
		metricsService(d, be),
		recorderService(d),
	}
	services = append(services, load...)
	services = append(services, kubeletService(d, endpoint))
	services = append(services, release...)
	return append(services, karpenterService(d, endpoint)), nil
}

// controlPlaneService starts the backend's cluster and takes its baseline. It owns the
// admin config the later services use (d.restConfig), which records what they create.
func controlPlaneService(d *daemon, be backend.Backend) *service {
	cfg := d.cfg
	// Every object the daemon's clients create is recorded, for stop --uninstall.
	record := installs.Open(cfg.Home.InstallRecord(), "daemon")
	var admin *rest.Config
	d.restConfig = func() *rest.Config { return admin }
	d.metrics = func() *metrics.Server { return nil }
	return &service{
		name: "Kubernetes control plane (" + be.Name() + ")",
		start: func(ctx context.Context) (string, error) {
			if err := be.Start(ctx, cfg.Home.Kubeconfig(), cfg.Status); err != nil {
				return "", err
			}
			b, err := ensureBaseline(ctx, cfg.Home, be.Name(), be.RESTConfig())
			if err != nil {
				return "", errors.Join(err, be.Stop(ctx))
			}
			d.baseline, admin = b, installs.WrapConfig(be.RESTConfig(), record)
			host := be.RESTConfig().Host
			d.setEndpoint(func(s *State) { s.APIServer = host })
			return host, nil
		},
		stop:       be.Stop,
		components: be.Components,
	}
}

// ec2Service serves the EC2 emulator on endpoint (d.cfg.EC2Addr), told about the backend's
// cluster as EKS would be, and writes the env file that points the learner's aws CLI at it.
func ec2Service(d *daemon, be backend.Backend, endpoint string) *service {
	cfg := d.cfg
	var ec2srv *fakeec2.Server
	var httpSrv *http.Server
	d.ec2 = func() *fakeec2.Server { return ec2srv }
	return &service{
		name: "EC2 API emulator",
		start: func(ctx context.Context) (string, error) {
			ln, err := net.Listen("tcp", cfg.EC2Addr)
			if err != nil {
				return "", fmt.Errorf("listening on %s (is another emulator running? use --ec2-addr): %w", cfg.EC2Addr, err)
			}
			ec2srv, err = fakeec2.New(fakeec2.Options{
				Region:       cfg.Account.Region,
				Zones:        cfg.Account.Zones,
				DiscoveryTag: cfg.Account.DiscoveryTag,
				StateDir:     cfg.Home.EC2Dir(),
				BootDelay:    cfg.BootDelay,
				// Karpenter's INTERRUPTION_QUEUE (provider aws), as its CloudFormation stack makes it.
				InterruptionQueue: cfg.Account.ClusterName,
				DefaultPolicy:     DefaultPolicy(cfg.Provider),
				Logger:            cfg.Logger.With("component", "ec2"),
			})
			if err != nil {
				ln.Close()
				return "", err
			}
			cluster, err := eksCluster(be, cfg.Account)
			if err == nil {
				err = ec2srv.SetEKSCluster(cluster)
			}
			if err != nil {
				ln.Close()
				return "", errors.Join(fmt.Errorf("telling EKS about the cluster: %w", err), ec2srv.Close())
			}
			httpSrv = &http.Server{Handler: ec2srv, ReadHeaderTimeout: 10 * time.Second}
			go httpSrv.Serve(ln)
			if err := cfg.Home.writeEnvFile(endpoint, cfg.Executable); err != nil {
				return "", fmt.Errorf("writing env file: %w", err)
			}
			d.setEndpoint(func(s *State) { s.EC2Endpoint = endpoint })
			return endpoint + " (" + cfg.Account.Region + ", cluster " + cfg.Account.ClusterName + ")", nil
		},
		stop: func(ctx context.Context) error {
			err := httpSrv.Shutdown(ctx)
			return errors.Join(err, ec2srv.Close())
		},
		components: func(ctx context.Context) []backend.Component {
			return []backend.Component{ec2Component(ctx, endpoint)}
		},
	}
}

// ec2Component is the emulator's line in status, from its admin API's health report.
func ec2Component(ctx context.Context, endpoint string) backend.Component {
	c := backend.Component{Name: "ec2-emulator", Address: endpoint}
	h, err := fakeec2.NewAdminClient(endpoint).Health(ctx)
	c.Healthy = err == nil
	if err != nil {
		c.Detail = err.Error()
	} else {
		c.Detail = fmt.Sprintf("region %s, %d instances, persisted=%t", h.Region, h.Instances, h.Persisted)
	}
	return c
}

// crdService installs what Karpenter needs before it starts: the lab's namespace, its CRDs
// and the kube-dns Service.
func crdService(d *daemon, be backend.Backend) *service {
	return &service{
		name: "Karpenter and EC2NodeClass CRDs, kube-dns Service, namespace " + karpenter.LabNamespace,
		start: func(ctx context.Context) (string, error) {
			admin := d.restConfig()
			if err := karpenter.EnsureNamespace(ctx, admin, karpenter.LabNamespace); err != nil {
				return "", err
			}
			if err := karpenter.InstallCRDs(ctx, admin); err != nil {
				return "", err
			}
			// karpenter-provider-aws reads kube-system/kube-dns at start, as on EKS. The
			// embedded cluster's Service CIDR is known; another cluster picks the IP.
			dnsIP := ""
			if be.Name() == "embedded" {
				dnsIP = controlplane.KubeDNSIP
			}
			created, err := karpenter.EnsureKubeDNS(ctx, admin, dnsIP)
			if err != nil {
				return "", err
			}
			detail := fmt.Sprintf("%d CRDs established", len(karpenter.CRDs()))
			if created != "" {
				detail += ", kube-dns Service " + created + " created"
			}
			return detail, nil
		},
	}
}

// recorderService runs the evidence recorder, which appends what happens in the cluster to
// the lab's history file.
func recorderService(d *daemon) *service {
	cfg := d.cfg
	var rec *recorder.Recorder
	stopRec := func(context.Context) error { return nil }
	d.recorder = func() *recorder.Recorder { return rec }
	return &service{
		name: "evidence recorder",
		start: func(ctx context.Context) (string, error) {
			var err error
			rec, err = recorder.New(recorder.Options{Config: d.restConfig(), Path: cfg.Home.History(), Logger: cfg.Logger.With("component", "recorder")})
			if err != nil {
				return "", err
			}
			stopRec, err = goService("recorder", cfg.Logger, rec.Run)
			return cfg.Home.History(), err
		},
		stop: func(ctx context.Context) error { return stopRec(ctx) },
	}
}

// kubeletService runs the simulated kubelet, which boots the emulator's instances into
// Nodes: it reads EC2 with the node role's key and writes console output through the
// emulator's admin API.
func kubeletService(d *daemon, endpoint string) *service {
	cfg := d.cfg
	var kl *kubelet.Kubelet
	stopKubelet := func(context.Context) error { return nil }
	d.kubelet = func() *kubelet.Kubelet { return kl }
	return &service{
		name: "simulated kubelet (kwok)",
		start: func(ctx context.Context) (string, error) {
			var err error
			kl, err = kubelet.New(kubelet.Options{
				RESTConfig: d.restConfig(),
				EC2:        NewEC2ClientIn(cfg.Account.Region, endpoint, accesskeys.Kubelet),
				// What the instance's OS prints (nodeadm, cloud-init) reaches GetConsoleOutput.
				Console:     fakeec2.NewAdminClient(endpoint),
				ClusterName: cfg.Account.ClusterName,
				Region:      cfg.Account.Region,
				Logger:      cfg.Logger.With("component", "kubelet"),
				// Karpenter's stock kwok provider makes Nodes itself; kwok keeps them Ready.
				ManageKWOKProviderNodes: cfg.Provider == "kwok",
			})
			if err != nil {
				return "", err
			}
			stopKubelet, err = goService("kubelet", cfg.Logger, func(ctx context.Context, ready chan<- struct{}) error {
				close(ready)
				return kl.Run(ctx)
			})
			return "", err
		},
		stop: func(ctx context.Context) error { return stopKubelet(ctx) },
		components: func(ctx context.Context) []backend.Component {
			nodes := kl.Nodes()
			return []backend.Component{{Name: "simulated-kubelet", Healthy: true, Detail: fmt.Sprintf("%d instances known", len(nodes))}}
		},
	}
}

// goService runs fn in a goroutine until the returned stop function is called. It returns
// once fn signals ready, or with fn's error when fn ends first. stop waits for fn to return.
func goService(name string, log *slog.Logger, fn func(ctx context.Context, ready chan<- struct{}) error) (stop func(context.Context) error, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		err := fn(ctx, ready)
		if err != nil && ctx.Err() == nil {
			log.Error("service stopped", "service", name, "err", err)
		}
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		if err == nil {
			err = fmt.Errorf("%s ended during start-up", name)
		}
		return nil, err
	}
	return func(stopCtx context.Context) error {
		cancel()
		select {
		case <-done:
			return nil
		case <-stopCtx.Done():
			return fmt.Errorf("%s did not stop: %w", name, stopCtx.Err())
		}
	}, nil
}
