package karpenter_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/controlplane"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/accesskeys"
)

// The test binary doubles as the supervised child: with childEnv set, TestMain runs the
// mode it names instead of the tests, the way `karplab internal karpenter` runs in the lab.
const childEnv = "KARPLAB_TEST_CHILD"

// Access keys: the emulator's audit trail tells callers apart by them. Karpenter's is the
// one the daemon gives it.
const (
	karpenterKey = accesskeys.Karpenter
	kubeletKey   = "AKIAKUBELETTEST"
	testKey      = "AKIATESTOBSERVER"
)

// env is the lab the integration tests share: one control plane per test binary (its
// components are process-global), the emulator, the simulated kubelet and a supervised
// Karpenter child running the real karpenter-provider-aws. nil under -short.
var env *testEnv

type testEnv struct {
	dir         string
	cp          *controlplane.ControlPlane
	rest        *rest.Config
	kube        kubernetes.Interface
	client      client.Client
	dyn         dynamic.Interface
	srv         *fakeec2.Server
	endpoint    string
	ec2         *ec2.Client
	admin       *fakeec2.AdminClient
	kubelet     *kubelet.Kubelet
	sup         *karpenter.Supervisor
	health      int
	metrics     int
	healthURL   string
	logFile     string
	kubeconfig  string
	stopKubelet context.CancelFunc
	kubeletDone chan struct{}
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	var err error
	env, err = setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "setting up the lab: %v\n", err)
		if env != nil {
			env.teardown(true)
		}
		os.Exit(1)
	}
	code := m.Run()
	env.teardown(code != 0)
	os.Exit(code)
}

// child runs one supervised-process mode and returns its exit code.
func child(mode string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch mode {
	case "karpenter":
		opts, err := karpenter.ParseArgs(os.Args[1:])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		if err := karpenter.Run(ctx, opts); err != nil {
			fmt.Fprintf(os.Stderr, "karpenter: %v\n", err)
			return 1
		}
		return 0
	case "sleep": // until SIGTERM
		fmt.Println("sleeping")
		<-ctx.Done()
		return 0
	case "stubborn": // ignores SIGTERM: only SIGKILL ends it
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("stubborn")
		time.Sleep(time.Hour)
		return 0
	case "exit":
		fmt.Println("exiting")
		return 3
	}
	fmt.Fprintf(os.Stderr, "unknown child mode %q\n", mode)
	return 2
}

func ec2Client(endpoint, key string) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       "eu-west-2",
		BaseEndpoint: aws.String(endpoint),
		HTTPClient:   fakeec2.NewHTTPClient(),
		Credentials:  credentials.NewStaticCredentialsProvider(key, "secret", ""),
	})
}

func setup() (*testEnv, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "karplab-karpenter-test-")
	if err != nil {
		return nil, err
	}
	e := &testEnv{dir: dir, logFile: filepath.Join(dir, "karpenter.log")}
	fmt.Fprintf(os.Stderr, "lab state and logs in %s\n", dir)

	began := time.Now()
	e.cp, err = controlplane.Start(ctx, controlplane.Config{DataDir: filepath.Join(dir, "controlplane")})
	if err != nil {
		return e, fmt.Errorf("starting the control plane: %w", err)
	}
	fmt.Fprintf(os.Stderr, "control plane up in %s\n", time.Since(began).Round(time.Millisecond))
	e.rest = e.cp.RESTConfig()
	e.rest.QPS, e.rest.Burst = 200, 400
	kubeconfig := filepath.Join(dir, "kubeconfig")
	e.kubeconfig = kubeconfig
	if err := e.cp.WriteKubeconfig(kubeconfig); err != nil {
		return e, err
	}
	if e.kube, err = kubernetes.NewForConfig(e.rest); err != nil {
		return e, err
	}
	if e.dyn, err = dynamic.NewForConfig(e.rest); err != nil {
		return e, err
	}
	// client-go's global scheme holds the provider's EC2NodeClass (its package registers it).
	if e.client, err = client.New(e.rest, client.Options{}); err != nil {
		return e, err
	}
	if err := karpenter.InstallCRDs(ctx, e.rest); err != nil {
		return e, err
	}
	if _, err := karpenter.EnsureKubeDNS(ctx, e.rest, controlplane.KubeDNSIP); err != nil {
		return e, err
	}

	// The account as the lab's daemon makes it: the interruption queue, and the controller's
	// key bound by the getting-started stack's KarpenterControllerPolicy.
	e.srv, err = fakeec2.New(fakeec2.Options{StateDir: filepath.Join(dir, "ec2"), InterruptionQueue: cluster.DefaultClusterName,
		DefaultPolicy: cluster.DefaultPolicy(karpenter.ProviderAWS)})
	if err != nil {
		return e, fmt.Errorf("starting the EC2 emulator: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return e, err
	}
	go e.srv.Serve(ln) //nolint:errcheck // returns nil after Close
	e.endpoint = "http://" + ln.Addr().String()
	e.ec2 = ec2Client(e.endpoint, testKey)
	e.admin = fakeec2.NewAdminClient(e.endpoint)

	if err := e.startKubelet(0); err != nil {
		return e, err
	}

	if err := e.tellEKS(); err != nil {
		return e, err
	}
	if e.health, e.metrics, err = freePorts(); err != nil {
		return e, err
	}
	e.healthURL = fmt.Sprintf("http://127.0.0.1:%d/readyz", e.health)
	// The real karpenter-provider-aws, as the daemon runs it (the settings its Helm chart
	// passes), on real time: no lab clock.
	opts, childEnvironment := cluster.KarpenterProcess(karpenter.Options{Provider: karpenter.ProviderAWS,
		HealthProbePort: e.health, MetricsPort: e.metrics, LogLevel: "debug"}, cluster.DefaultAccount(), kubeconfig, e.rest.Host, e.endpoint)
	e.sup = &karpenter.Supervisor{
		Path:       os.Args[0],
		Args:       opts.Args(),
		Env:        append(childEnvironment, childEnv+"=karpenter"),
		LogFile:    e.logFile,
		MinBackoff: 200 * time.Millisecond,
	}
	if err := e.sup.Start(context.Background()); err != nil {
		return e, err
	}
	if err := e.waitKarpenterReady(ctx); err != nil {
		return e, err
	}
	fmt.Fprintf(os.Stderr, "lab up in %s\n", time.Since(began).Round(time.Millisecond))
	return e, nil
}

func (e *testEnv) waitKarpenterReady(ctx context.Context) error {
	return e.waitReady(ctx, e.healthURL, e.logFile)
}

// waitReady polls a Karpenter child's /readyz.
func (e *testEnv) waitReady(ctx context.Context, url, logFile string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("karpenter not ready: %w\n%s", ctx.Err(), logTail(logFile, 30))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// startKubelet runs the simulated kubelet fleet, polling EC2 every poll (0: its default),
// in place of the one running (a benchmark changes the poll).
func (e *testEnv) startKubelet(poll time.Duration) error {
	if e.stopKubelet != nil {
		e.stopKubelet()
		<-e.kubeletDone
	}
	kl, err := kubelet.New(kubelet.Options{RESTConfig: e.rest, EC2: ec2Client(e.endpoint, kubeletKey), ClusterName: "karplab",
		ManageKWOKProviderNodes: true, Console: e.admin, PollInterval: poll})
	if err != nil {
		return err
	}
	kctx, stopKubelet := context.WithCancel(context.Background())
	e.kubelet, e.stopKubelet, e.kubeletDone = kl, stopKubelet, make(chan struct{})
	done := e.kubeletDone
	go func() {
		defer close(done)
		if err := kl.Run(kctx); err != nil {
			fmt.Fprintf(os.Stderr, "kubelet: %v\n", err)
		}
	}()
	return nil
}

// teardown stops everything; keep leaves the state directory (logs) for a failed run.
func (e *testEnv) teardown(keep bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if e.sup != nil {
		if err := e.sup.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "stopping karpenter: %v\n", err)
		}
	}
	if e.stopKubelet != nil {
		e.stopKubelet()
		<-e.kubeletDone
	}
	if e.srv != nil {
		_ = e.srv.Close()
	}
	if e.cp != nil {
		if err := e.cp.Stop(); err != nil && !errors.Is(err, controlplane.ErrStopped) {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}
	if keep || os.Getenv("KARPLAB_KEEP_TEST_DIR") != "" {
		fmt.Fprintf(os.Stderr, "kept %s\n", e.dir)
		return
	}
	os.RemoveAll(e.dir)
}

// logTail is the end of the Karpenter child's log, for failure messages.
func (e *testEnv) logTail(lines int) string { return logTail(e.logFile, lines) }

func logTail(file string, lines int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return "--- " + filepath.Base(file) + " (tail) ---\n" + strings.Join(all, "\n")
}

// freePorts picks two free loopback ports, both listeners held until both are chosen (two
// separate picks may get the same port).
func freePorts() (int, int, error) {
	a, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	b, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer b.Close()
	return a.Addr().(*net.TCPAddr).Port, b.Addr().(*net.TCPAddr).Port, nil
}

// tellEKS registers the cluster in the emulator's EKS, as on AWS: the provider reads its
// endpoint, CA, service CIDR and version there.
func (e *testEnv) tellEKS() error {
	c, err := cluster.EKSCluster(e.rest, controlplane.ServiceCIDR, cluster.DefaultClusterName)
	if err == nil {
		err = e.srv.SetEKSCluster(c)
	}
	if err != nil {
		return fmt.Errorf("telling EKS about the cluster: %w", err)
	}
	return nil
}

// lab returns the shared lab, skipping the test under -short.
func lab(t testing.TB) *testEnv {
	t.Helper()
	if env == nil {
		t.Skip("integration test: needs the embedded control plane (skipped with -short)")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(env.logTail(60))
		}
	})
	return env
}
