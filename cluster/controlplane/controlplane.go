package controlplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/configz"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

// Config says where a control plane keeps its state and how it is reached.
type Config struct {
	// DataDir holds etcd data, PKI, kubeconfigs and the persisted port (see the package
	// doc). Required. Reusing it keeps the same CA, certificates, port and data.
	DataDir string
	// BindAddress is the IP the API server listens on; default 127.0.0.1. etcd, the
	// scheduler and the controller manager always listen on 127.0.0.1.
	BindAddress string
	// APIServerPort is the API server's port. 0 picks a free port the first time and
	// persists it in DataDir, so later starts reuse it.
	APIServerPort int
	// Logger receives the control plane's progress (Info) and its components' logs:
	// routine component output at Debug and below, their warnings and errors as such.
	// nil discards everything.
	Logger *slog.Logger
	// HoldControllers keeps kube-scheduler and kube-controller-manager from starting until
	// ReleaseControllers: a replay creates a captured cluster's objects first, so that no
	// controller acts on half of them (a ReplicaSet making pods its captured pods would be,
	// the scheduler binding a pending pod before the bound ones exist).
	HoldControllers bool
}

// Component is the state of one control-plane component, as Components reports it.
type Component struct {
	Name    string // etcd, kube-apiserver, kube-scheduler, kube-controller-manager
	Address string // https://host:port it serves on
	Healthy bool
	Detail  string // why it is unhealthy, or a short status line
}

// ErrStopped is what Err returns after Stop.
var ErrStopped = errors.New("control plane stopped")

// ErrAlreadyRunning is returned by Start while another ControlPlane of this process runs:
// the components register process-global state (component config pages, metrics, klog)
// and cannot run twice side by side. Stop the first one, then Start again.
var ErrAlreadyRunning = errors.New("a control plane already runs in this process")

// active is the process's running control plane, if any.
var (
	activeMu sync.Mutex
	active   *ControlPlane
)

// ControlPlane is a running etcd, kube-apiserver, kube-scheduler and
// kube-controller-manager. Its methods are safe for concurrent use.
type ControlPlane struct {
	cfg Config
	log *slog.Logger
	pki *pki

	lock      *os.File
	etcd      *embed.Etcd
	etcdURL   string
	apiURL    string
	schedURL  string
	kcmURL    string
	schedID   string
	admin     *rest.Config
	client    kubernetes.Interface
	listeners []net.Listener
	httpOnce  sync.Once
	http      *http.Client

	// held is the controllers' setup while HoldControllers keeps them from starting.
	held *componentSetup
	// The API server and the two controllers are stopped in that order, each tier waited.
	stopControllers context.CancelFunc
	controllers     sync.WaitGroup
	stopAPI         context.CancelFunc
	api             sync.WaitGroup

	done     chan struct{}
	mu       sync.Mutex
	err      error
	stopping bool
	stopOnce sync.Once
	stopErr  error
}

// readyTimeout bounds Start when ctx has no deadline.
const readyTimeout = 3 * time.Minute

// Start brings the control plane up on cfg.DataDir and returns once the API server answers
// /readyz, the scheduler and the controller manager hold their leader leases, the
// scheduler is ready, the controller manager's controllers run, and the ServiceAccount
// "default" exists in namespace "default" (so pods can be created).
//
// ctx bounds startup only (default limit 3 minutes); the control plane runs until Stop.
// Start fails with ErrDataDirInUse if another control plane runs on the directory, and
// with a listen error if the API server's port is taken. On any failure everything
// started so far is stopped again. Start routes process-wide klog and grpclog output to
// cfg.Logger (see the package doc).
func Start(ctx context.Context, cfg Config) (*ControlPlane, error) {
	began := time.Now()
	if cfg.DataDir == "" {
		return nil, errors.New("starting control plane: Config.DataDir is required")
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("starting control plane: %w", err)
	}
	cfg.DataDir = dir
	if cfg.BindAddress == "" {
		cfg.BindAddress = "127.0.0.1"
	}
	bind := net.ParseIP(cfg.BindAddress)
	if bind == nil {
		return nil, fmt.Errorf("starting control plane: BindAddress %q is not an IP address", cfg.BindAddress)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readyTimeout)
		defer cancel()
	}

	cp := &ControlPlane{cfg: cfg, log: cfg.Logger, done: make(chan struct{})}
	if err := cp.start(ctx, bind); err != nil {
		_ = cp.Stop()
		return nil, fmt.Errorf("starting control plane: %w", err)
	}
	cp.log.Info("control plane ready", "apiserver", cp.apiURL, "elapsed", time.Since(began).Round(time.Millisecond))
	return cp, nil
}

// start brings the components up in dependency order, logging each tier's time: the data
// directory claimed, PKI and listeners, etcd, the API server, then the scheduler and the
// controller manager. On a failure Start's Stop undoes what of it ran.
func (cp *ControlPlane) start(ctx context.Context, bind net.IP) error {
	if err := cp.claim(); err != nil {
		return err
	}
	setup, err := cp.prepare(bind)
	if err != nil {
		return err
	}
	if err := cp.runEtcd(ctx); err != nil {
		return err
	}
	if err := cp.runAPIServer(ctx, setup.apiLn); err != nil {
		return err
	}
	if cp.cfg.HoldControllers {
		cp.mu.Lock()
		cp.held = setup
		cp.mu.Unlock()
		cp.log.Info("kube-scheduler and kube-controller-manager held until released")
		return nil
	}
	return cp.runControllers(ctx, setup)
}

// ErrNotHeld is ReleaseControllers' answer when the controllers run already.
var ErrNotHeld = errors.New("the scheduler and the controller manager are not held")

// ReleaseControllers starts the kube-scheduler and kube-controller-manager that
// HoldControllers held, and returns once they lead and run (as Start would have).
func (cp *ControlPlane) ReleaseControllers(ctx context.Context) error {
	cp.mu.Lock()
	setup := cp.held
	cp.held = nil
	cp.mu.Unlock()
	if setup == nil {
		return ErrNotHeld
	}
	if err := cp.runControllers(ctx, setup); err != nil {
		return fmt.Errorf("releasing the controllers: %w", err)
	}
	return nil
}

// claim takes the data directory's lock and the process's one control-plane slot (the
// components' state is process-global), and routes the process's global logs to cp's.
func (cp *ControlPlane) claim() error {
	dir := cp.cfg.DataDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating data directory: %w", err)
	}
	var err error
	if cp.lock, err = lockDataDir(dir); err != nil {
		return err
	}
	activeMu.Lock()
	if active != nil {
		activeMu.Unlock()
		return fmt.Errorf("%w (on %s)", ErrAlreadyRunning, active.cfg.DataDir)
	}
	active = cp
	activeMu.Unlock()
	routeGlobalLogs(cp.log)
	return enableReleaseOnExit()
}

// componentSetup is what prepare makes for the components before any of them runs: the
// listeners they serve on and the scheduler's and controller manager's config files.
type componentSetup struct {
	apiLn, schedLn, kcmLn                       net.Listener
	schedKubeconfig, kcmKubeconfig, schedConfig string
}

// prepare loads or creates the PKI, opens the components' listeners and writes their
// config files.
func (cp *ControlPlane) prepare(bind net.IP) (*componentSetup, error) {
	step := time.Now()
	var err error
	if cp.pki, err = loadOrCreatePKI(filepath.Join(cp.cfg.DataDir, "pki"), []net.IP{bind}); err != nil {
		return nil, err
	}
	s := &componentSetup{}
	if err := cp.listen(bind, s); err != nil {
		return nil, err
	}
	if err := cp.writeComponentConfigs(s); err != nil {
		return nil, err
	}
	cp.log.Info("pki ready", "dir", cp.pki.dir, "elapsed", time.Since(step).Round(time.Millisecond))
	return s, nil
}

// listen opens the API server's listener (on its persisted port; its URL and the admin
// client follow from it) and the scheduler's and controller manager's, on free ports.
func (cp *ControlPlane) listen(bind net.IP, s *componentSetup) error {
	var err error
	if s.apiLn, err = listenAPIServer(cp.cfg.DataDir, bind, cp.cfg.APIServerPort); err != nil {
		return err
	}
	cp.listeners = append(cp.listeners, s.apiLn)
	cp.apiURL = "https://" + hostPort(advertiseIP(bind), s.apiLn.Addr().(*net.TCPAddr).Port)
	cp.admin = restConfig(cp.apiURL, cp.pki.ca, cp.pki.admin)
	if cp.client, err = kubernetes.NewForConfig(cp.admin); err != nil {
		return fmt.Errorf("creating admin client: %w", err)
	}
	if s.schedLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return fmt.Errorf("listening for kube-scheduler: %w", err)
	}
	cp.listeners = append(cp.listeners, s.schedLn)
	cp.schedURL = "https://" + s.schedLn.Addr().String()
	if s.kcmLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return fmt.Errorf("listening for kube-controller-manager: %w", err)
	}
	cp.listeners = append(cp.listeners, s.kcmLn)
	cp.kcmURL = "https://" + s.kcmLn.Addr().String()
	return nil
}

// writeComponentConfigs writes, beside the PKI, the kubeconfigs the scheduler and the
// controller manager reach the API server with and the scheduler's configuration.
func (cp *ControlPlane) writeComponentConfigs(s *componentSetup) error {
	pkiDir := cp.pki.dir
	s.schedKubeconfig = filepath.Join(pkiDir, "kube-scheduler.kubeconfig")
	s.kcmKubeconfig = filepath.Join(pkiDir, "kube-controller-manager.kubeconfig")
	s.schedConfig = filepath.Join(pkiDir, "kube-scheduler.yaml")
	if err := writeKubeconfig(s.schedKubeconfig, cp.apiURL, cp.pki.ca, cp.pki.scheduler, "system:kube-scheduler"); err != nil {
		return err
	}
	if err := writeKubeconfig(s.kcmKubeconfig, cp.apiURL, cp.pki.ca, cp.pki.controllerMgr, "system:kube-controller-manager"); err != nil {
		return err
	}
	return writeSchedulerConfig(s.schedConfig, s.schedKubeconfig)
}

// runEtcd starts etcd on a free port and watches it: its end is a failure of the control
// plane.
func (cp *ControlPlane) runEtcd(ctx context.Context) error {
	step := time.Now()
	etcdPort, err := freePort()
	if err != nil {
		return err
	}
	if cp.etcd, err = startEtcd(ctx, filepath.Join(cp.cfg.DataDir, "etcd"), cp.pki, etcdPort, cp.log); err != nil {
		return err
	}
	cp.etcdURL = fmt.Sprintf("https://127.0.0.1:%d", etcdPort)
	go cp.watchEtcd(cp.etcd)
	cp.log.Info("etcd ready", "url", cp.etcdURL, "elapsed", time.Since(step).Round(time.Millisecond))
	return nil
}

// runAPIServer runs kube-apiserver on apiLn until Stop (its own context, not start's) and
// waits for its /readyz.
func (cp *ControlPlane) runAPIServer(ctx context.Context, apiLn net.Listener) error {
	step := time.Now()
	apiCtx, stopAPI := context.WithCancel(context.Background())
	cp.stopAPI = stopAPI
	runAPI, err := newAPIServer(apiCtx, cp.pki, cp.etcdURL, apiLn)
	if err != nil {
		return err
	}
	cp.goRun(&cp.api, "kube-apiserver", apiCtx, runAPI)
	if err := cp.waitAPIServer(ctx); err != nil {
		return err
	}
	cp.log.Info("kube-apiserver ready", "url", cp.apiURL, "elapsed", time.Since(step).Round(time.Millisecond))
	return nil
}

// runControllers runs kube-scheduler and kube-controller-manager until Stop (one context,
// so Stop ends them together, before the API server) and waits until they lead and run.
func (cp *ControlPlane) runControllers(ctx context.Context, s *componentSetup) error {
	step := time.Now()
	// The data-dir lock proves no other scheduler or controller manager uses this etcd,
	// so a lease left by a crashed run is stale: drop it rather than wait for it to expire.
	if err := cp.deleteStaleLeases(ctx); err != nil {
		return err
	}
	ctlCtx, stopControllers := context.WithCancel(context.Background())
	cp.stopControllers = stopControllers
	runSched, schedID, err := newScheduler(ctlCtx, cp.pki, s.schedConfig, s.schedKubeconfig, s.schedLn)
	if err != nil {
		return err
	}
	cp.schedID = schedID
	if !controllerManagerGone() {
		return errors.New("a kube-controller-manager of an earlier Start in this process never finished stopping (it was stopped while starting); restart the process")
	}
	runKCM, err := newControllerManager(ctlCtx, cp.pki, s.kcmKubeconfig, s.kcmLn)
	if err != nil {
		return err
	}
	cp.goRun(&cp.controllers, "kube-scheduler", ctlCtx, runSched)
	cp.goRun(&cp.controllers, "kube-controller-manager", ctlCtx, runKCM)
	if err := cp.waitControllers(ctx); err != nil {
		return err
	}
	cp.log.Info("kube-scheduler and kube-controller-manager ready", "elapsed", time.Since(step).Round(time.Millisecond))
	return nil
}

// goRun runs a component; its return before Stop is a failure of the control plane.
func (cp *ControlPlane) goRun(wg *sync.WaitGroup, name string, ctx context.Context, run func(context.Context) error) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := run(ctx)
		if ctx.Err() == nil {
			if err == nil {
				err = fmt.Errorf("%s exited", name)
			}
			cp.fail(err)
		}
	}()
}

func (cp *ControlPlane) watchEtcd(e *embed.Etcd) {
	select {
	case err, ok := <-e.Err():
		if !ok || err == nil {
			err = errors.New("stopped")
		}
		cp.fail(fmt.Errorf("etcd: %w", err))
	case <-e.Server.StopNotify():
		cp.fail(errors.New("etcd stopped"))
	}
}

// fail records the first failure and closes Done, unless Stop is underway.
func (cp *ControlPlane) fail(err error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopping || cp.err != nil {
		return
	}
	cp.err = err
	cp.log.Error("control plane component failed", "err", err)
	close(cp.done)
}

// failed returns the recorded failure, if any.
func (cp *ControlPlane) failed() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopping {
		return nil
	}
	return cp.err
}

func (cp *ControlPlane) waitAPIServer(ctx context.Context) error {
	return poll(ctx, cp, "kube-apiserver /readyz", func(ctx context.Context) (bool, string) {
		code := 0
		res := cp.client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		if code == 200 {
			return true, ""
		}
		body, _ := res.Raw()
		return false, fmt.Sprintf("status %d: %s", code, lastLines(string(body), 5))
	})
}

func (cp *ControlPlane) deleteStaleLeases(ctx context.Context) error {
	for _, name := range []string{schedulerLease, controllerManagerLease} {
		err := cp.client.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting stale lease %s: %w", name, err)
		}
	}
	return nil
}

// waitControllers waits until both hold their leases, the scheduler reports ready (caches
// and event handlers synced), the controller manager has built and started every
// controller, and ServiceAccount default/default exists.
func (cp *ControlPlane) waitControllers(ctx context.Context) error {
	return poll(ctx, cp, "kube-scheduler and kube-controller-manager", func(ctx context.Context) (bool, string) {
		leases := cp.client.CoordinationV1().Leases(metav1.NamespaceSystem)
		l, err := leases.Get(ctx, schedulerLease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != cp.schedID {
			return false, fmt.Sprintf("kube-scheduler does not hold lease %s", schedulerLease)
		}
		if ok, why := cp.probe(ctx, cp.schedURL+"/readyz"); !ok {
			return false, "kube-scheduler not ready: " + why
		}
		l, err = leases.Get(ctx, controllerManagerLease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return false, fmt.Sprintf("kube-controller-manager does not hold lease %s", controllerManagerLease)
		}
		// The controllers' health checks are registered once all of them are built, just
		// before they start. (On a restart default/default already exists, so the
		// ServiceAccount alone does not prove the controllers run.)
		if _, body, _ := cp.get(ctx, cp.kcmURL+"/healthz?verbose"); !strings.Contains(body, "serviceaccount-controller") {
			return false, "kube-controller-manager controllers not started yet"
		}
		if _, err := cp.client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, fmt.Sprintf("no ServiceAccount default/default yet: %v", err)
		}
		return true, ""
	})
}

// poll calls check every 100ms until it succeeds, a component fails or ctx ends; the
// error then carries check's last explanation.
func poll(ctx context.Context, cp *ControlPlane, what string, check func(context.Context) (bool, string)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		if err := cp.failed(); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, why := check(cctx)
		cancel()
		if ok {
			return nil
		}
		last = why
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %s)", what, context.Cause(ctx), last)
		case <-cp.done:
		case <-tick.C:
		}
	}
}

// RESTConfig returns a new admin (system:masters) client configuration for the API server.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return rest.CopyConfig(cp.admin)
}

// WriteKubeconfig writes an admin kubeconfig with embedded certificates to path (mode
// 0600, replaced atomically). Cluster, user and context are all named "karplab".
func (cp *ControlPlane) WriteKubeconfig(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return writeKubeconfig(path, cp.apiURL, cp.pki.ca, cp.pki.admin, clusterName)
}

// Done is closed when a component stops by itself (Err then says which and why) or when
// Stop has finished.
func (cp *ControlPlane) Done() <-chan struct{} { return cp.done }

// Err returns nil while the control plane runs, the first component failure once Done is
// closed by one, and ErrStopped after a Stop without prior failure.
func (cp *ControlPlane) Err() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.err
}

// Stop stops the controller manager and scheduler (releasing their leases), then the API
// server, then etcd, closes every listener and releases the data directory. It waits for
// each step and is safe to call more than once; later calls return the first call's result.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() { cp.stopErr = cp.stop() })
	return cp.stopErr
}

func (cp *ControlPlane) stop() error {
	began := time.Now()
	cp.mu.Lock()
	cp.stopping = true
	cp.mu.Unlock()

	var errs []error
	if cp.stopControllers != nil {
		cp.stopControllers()
		if !waitTimeout(&cp.controllers, 30*time.Second) {
			errs = append(errs, errors.New("kube-scheduler or kube-controller-manager still running 30s after stop"))
		}
		// Let the controllers finish against a live API server (they get 10s upstream).
		deadline := time.Now().Add(20 * time.Second)
		for !controllerManagerGone() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !controllerManagerGone() {
			errs = append(errs, errors.New("kube-controller-manager controllers still running 20s after stop"))
		}
	}
	if cp.stopAPI != nil {
		cp.stopAPI()
		if !waitTimeout(&cp.api, 60*time.Second) {
			errs = append(errs, errors.New("kube-apiserver still running 60s after stop"))
		}
	}
	if cp.etcd != nil {
		cp.etcd.Close()
	}
	for _, ln := range cp.listeners {
		_ = ln.Close() // most are closed already by their server
	}
	// Component config pages are process-global; a later Start registers them again.
	configz.Delete("componentconfig")
	configz.Delete(kcmapp.ConfigzName)
	if err := unlockDataDir(cp.lock); err != nil {
		errs = append(errs, fmt.Errorf("releasing data directory: %w", err))
	}
	activeMu.Lock()
	if active == cp {
		active = nil
	}
	activeMu.Unlock()

	cp.mu.Lock()
	if cp.err == nil {
		cp.err = ErrStopped
		close(cp.done)
	}
	cp.mu.Unlock()
	cp.log.Info("control plane stopped", "elapsed", time.Since(began).Round(time.Millisecond))
	return errors.Join(errs...)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	select {
	case <-c:
		return true
	case <-time.After(d):
		return false
	}
}
