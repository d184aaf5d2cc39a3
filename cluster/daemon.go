package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/cluster/metrics"
	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/fakeec2"
)

// DaemonConfig configures one lab daemon.
type DaemonConfig struct {
	Home Home
	// Backend is "embedded" (default), "kind" or "existing".
	Backend string
	// Kubeconfig and Context name the cluster of the existing backend (kubectl's defaults
	// when empty).
	Kubeconfig, Context string
	// Provider is the Karpenter cloud provider: "aws" (default, the real karpenter-provider-aws
	// on the emulated account) or "kwok" (Karpenter's stock kwok provider, no EC2).
	Provider string
	// EC2Addr is where the EC2 emulator listens (default 127.0.0.1:4566).
	EC2Addr string
	// BootDelay is how long an emulated instance stays pending before running (0: 2s,
	// negative: none).
	BootDelay time.Duration
	// Account is the lab's AWS account (region, zones, cluster name); zero: the home's.
	Account Account
	Logger  *slog.Logger
	// Status receives one line per finished start-up step (the foreground user's progress).
	Status io.Writer
	// Executable is the karplab binary the Karpenter child runs; empty means this process's.
	Executable string
	// Karpenter tunes the Karpenter process (batch window, log level, feature gates); the
	// daemon sets provider, cluster name, kubeconfig, endpoint, queue and ports itself.
	Karpenter karpenter.Options
	// MetricsResolution is how often the metrics API samples usage (0: metrics-server's 15s).
	MetricsResolution time.Duration
	// Replay is a bundle's directory (labs/replay) the lab is started from: the control
	// plane's controllers, the kubelets and Karpenter start only once its objects are in.
	Replay string
	// KarpenterEnv is added to the Karpenter process's environment (a replay's settings).
	KarpenterEnv []string
	// Settings are Karpenter's settings given at start (NAME=VALUE, checked by
	// karpenter.CheckSetting), carried as a replay's are.
	Settings []string
	// Preflighted says the process that launched the daemon has just run Preflight on the
	// same choices (Start does): the daemon does not check again. A daemon run in the
	// foreground runs its own.
	Preflighted bool
}

func (c *DaemonConfig) defaults() {
	if len(c.Settings) > 0 {
		env := map[string]string{}
		for _, kv := range c.Settings {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		carryKarpenterSettings(c, env)
		c.Settings = nil // carried once
	}
	if c.Backend == "" {
		c.Backend = "embedded"
	}
	if c.Provider == "" {
		c.Provider = karpenter.ProviderAWS
	}
	if c.EC2Addr == "" {
		c.EC2Addr = DefaultEC2Addr
	}
	if c.BootDelay == 0 {
		c.BootDelay = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Executable == "" {
		c.Executable, _ = os.Executable()
	}
	if c.Status == nil {
		c.Status = io.Discard
	}
}

// DefaultEC2Addr is the EC2 emulator's default listen address (LocalStack's port, which AWS
// tooling users expect).
const DefaultEC2Addr = "127.0.0.1:4566"

// service is one part of the running lab, started in order and stopped in reverse.
type service struct {
	name       string
	start      func(ctx context.Context) (detail string, err error)
	stop       func(ctx context.Context) error
	components func(ctx context.Context) []backend.Component
}

// daemon is a running lab: its services and its published state.
type daemon struct {
	cfg DaemonConfig
	// Set by newServices, valid once their service started.
	restConfig       func() *rest.Config // the admin config, recording what it creates
	baseline         *baseline           // the cluster's own objects, which reset keeps
	ec2              func() *fakeec2.Server
	recorder         func() *recorder.Recorder
	kubelet          func() *kubelet.Kubelet
	metrics          func() *metrics.Server // returns nil when the metrics API does not run (kind)
	restartKarpenter func(context.Context) error
	// holdKarpenter stops Karpenter until the returned resume (nil when it does not run).
	holdKarpenter func(context.Context) (resume func(context.Context) error, err error)
	resetMu       sync.Mutex
	mu            sync.Mutex
	state         State
	started       []*service
}

// RunDaemon runs the lab in this process until ctx ends: it starts every service, publishes
// progress and endpoints in the state file, serves live status on a loopback control endpoint,
// and on the way out stops everything in reverse order and removes its runtime files. A second
// daemon for the same home fails at once with an error naming the running one.
func RunDaemon(ctx context.Context, cfg DaemonConfig) (err error) {
	cfg.defaults()
	h := cfg.Home
	if !cfg.Preflighted {
		if err := Preflight(ctx, h, cfg.target(), cfg.Status); err != nil {
			return err
		}
	}
	if err := h.Ensure(); err != nil {
		return err
	}
	if cfg.Account.Region == "" {
		acct, err := h.ChooseAccount("", nil, "")
		if err != nil {
			return err
		}
		cfg.Account = acct
	}
	if err := h.claimPIDFile(); err != nil {
		return err
	}
	d := &daemon{cfg: cfg, state: State{
		PID: os.Getpid(), Phase: PhaseStarting, Backend: cfg.Backend, Provider: cfg.Provider,
		StartedAt: time.Now().UTC(), Kubeconfig: h.Kubeconfig(),
	}}
	d.publish()
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if stopErr := d.stopAll(stopCtx); stopErr != nil && err == nil {
			err = stopErr
		}
		if err != nil {
			// Keep the failed state for the CLI that waits on it; the next start clears it.
			os.Remove(h.PIDFile())
			return
		}
		h.removeRuntimeFiles()
	}()

	services, err := newServices(d)
	if err != nil {
		d.fail(err)
		return err
	}
	for _, s := range services {
		begin := time.Now()
		cfg.Logger.Info("starting", "component", s.name)
		detail, err := s.start(ctx)
		if err != nil {
			err = fmt.Errorf("starting %s: %w", s.name, err)
			d.fail(err)
			return err
		}
		d.started = append(d.started, s)
		step := Step{Name: s.name, Took: time.Since(begin).Round(time.Millisecond), Detail: detail}
		d.mu.Lock()
		d.state.Steps = append(d.state.Steps, step)
		d.mu.Unlock()
		d.publish()
		fmt.Fprintf(cfg.Status, " ✓ %s (%s)%s\n", step.Name, step.Took, detailSuffix(detail))
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		err = fmt.Errorf("listening for the control endpoint: %w", err)
		d.fail(err)
		return err
	}
	srv := &http.Server{Handler: d.controlHandler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	d.mu.Lock()
	d.state.ControlURL = "http://" + ln.Addr().String()
	d.state.Phase = PhaseReady
	d.mu.Unlock()
	d.publish()
	cfg.Logger.Info("lab ready", "kubeconfig", h.Kubeconfig())

	<-ctx.Done()
	d.mu.Lock()
	d.state.Phase = PhaseStopping
	d.mu.Unlock()
	d.publish()
	return nil
}

func detailSuffix(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}

func (d *daemon) fail(err error) {
	d.mu.Lock()
	d.state.Phase = PhaseFailed
	d.state.Error = err.Error()
	d.mu.Unlock()
	d.publish()
	d.cfg.Logger.Error("start-up failed", "err", err)
}

// publish writes the state file; a failure is logged, not fatal (status is advisory).
func (d *daemon) publish() {
	d.mu.Lock()
	s := d.state
	s.Steps = append([]Step(nil), d.state.Steps...)
	d.mu.Unlock()
	if err := writeJSONAtomic(d.cfg.Home.StateFile(), s); err != nil {
		d.cfg.Logger.Warn("writing state file", "err", err)
	}
}

func (d *daemon) setEndpoint(f func(*State)) {
	d.mu.Lock()
	f(&d.state)
	d.mu.Unlock()
	d.publish()
}

func (d *daemon) stopAll(ctx context.Context) error {
	var errs []error
	for i := len(d.started) - 1; i >= 0; i-- {
		s := d.started[i]
		if s.stop == nil {
			continue
		}
		d.cfg.Logger.Info("stopping", "component", s.name)
		if err := s.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", s.name, err))
		}
	}
	d.started = nil
	return errors.Join(errs...)
}

func (d *daemon) status(ctx context.Context) Status {
	d.mu.Lock()
	st := Status{State: d.state}
	st.State.Steps = append([]Step(nil), d.state.Steps...)
	started := append([]*service(nil), d.started...)
	d.mu.Unlock()
	for _, s := range started {
		if s.components != nil {
			st.Components = append(st.Components, s.components(ctx)...)
		}
	}
	return st
}

func (d *daemon) controlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(d.status(r.Context()))
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		fl, _ := w.(http.Flusher)
		if err := d.reset(r.Context(), &lineWriter{enc: enc, fl: fl}); err != nil {
			d.cfg.Logger.Error("reset failed", "err", err)
			enc.Encode(controlLine{Error: err.Error()})
			return
		}
		enc.Encode(controlLine{Done: "reset"})
	})
	d.kubeletHandlers(mux)
	d.metricsHandlers(mux)
	d.timeHandlers(mux)
	// Go's profiles of the daemon (the control plane, the kubelets, the emulator), for
	// go tool pprof: the endpoint listens on loopback only, like the rest of it.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	return mux
}

// reset brings the lab back to its starting point; one at a time.
func (d *daemon) reset(ctx context.Context, status io.Writer) error {
	d.resetMu.Lock()
	defer d.resetMu.Unlock()
	d.cfg.Logger.Info("resetting the lab")
	r, err := newResetter(d.restConfig(), status)
	if err != nil {
		return err
	}
	r.keep, r.labNodes = d.baseline, d.cfg.Home.recordedNodes
	if srv := d.ec2(); srv != nil {
		r.ec2 = func(context.Context) error { return srv.Reset() }
	}
	r.hold = d.holdKarpenter
	if kl := d.kubelet(); kl != nil {
		r.settle = kl.Resync
	}
	r.after = func(ctx context.Context) error {
		if kl := d.kubelet(); kl != nil {
			kl.RepairBootstrap()
		}
		if ms := d.metrics(); ms != nil {
			if err := ms.Reset(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	if rec := d.recorder(); rec != nil {
		r.history = rec.Truncate
	}
	return r.run(ctx)
}

// claimPIDFile writes this process's PID to the PID file, refusing when a live daemon owns it
// and replacing a stale one.
func (h Home) claimPIDFile() error {
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(h.PIDFile(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.WriteString(pidFileContent())
			cerr := f.Close()
			return errors.Join(werr, cerr)
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("writing pid file: %w", err)
		}
		pid, perr := h.daemonPID() // removes a stale file
		if perr == nil {
			return &AlreadyRunningError{PID: pid}
		}
	}
	return fmt.Errorf("could not claim %s", h.PIDFile())
}

// AlreadyRunningError means a daemon already runs for this home.
type AlreadyRunningError struct{ PID int }

func (e *AlreadyRunningError) Error() string {
	return fmt.Sprintf("the lab is already running (pid %d); nothing changed (karplab status shows it, karplab stop ends it)", e.PID)
}
