package metrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	kwokclient "sigs.k8s.io/kwok/pkg/client/clientset/versioned"
	kwokmetrics "sigs.k8s.io/kwok/pkg/kwok/metrics"
)

// Defaults of Options.
const (
	// DefaultResolution is metrics-server's --metric-resolution in its release manifest.
	DefaultResolution = 15 * time.Second
	// DefaultEvictionHard is the memory.available hard eviction threshold of the EKS AMIs.
	DefaultEvictionHard = 100 << 20
	// DefaultPressureTransitionPeriod is the kubelet's evictionPressureTransitionPeriod.
	DefaultPressureTransitionPeriod = 5 * time.Minute
)

// DefaultNodeOverhead is what the system (kubelet, container runtime, the OS) adds to a
// node's usage on top of its pods: about what an idle EKS node shows.
var DefaultNodeOverhead = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("40m"),
	corev1.ResourceMemory: resource.MustParse("300Mi"),
}

// Options configure a Server.
type Options struct {
	// RESTConfig reaches the API server as the lab's administrator: the server installs
	// CRDs, a Service, an APIService and a ClusterRole, and asks the API server to review
	// each request's access (SubjectAccessReview). Required.
	RESTConfig *rest.Config
	// Resolution is how often usage is sampled. Default DefaultResolution.
	Resolution time.Duration
	// NodeOverhead is added to each node's usage. Default DefaultNodeOverhead.
	NodeOverhead corev1.ResourceList
	// Enforce makes the lab's kubelet act on usage as a real one does: a container whose
	// memory demand exceeds its limit is OOM-killed and restarted, and a node whose pods use
	// more memory than its allocatable evicts one pod per sample (see pressure.go).
	Enforce bool
	// EvictionHard is the memory.available hard eviction threshold, in bytes, the eviction
	// messages quote. Default DefaultEvictionHard.
	EvictionHard int64
	// PressureTransitionPeriod is how long MemoryPressure stays True after the pressure
	// ends. Default DefaultPressureTransitionPeriod.
	PressureTransitionPeriod time.Duration
	// Logger receives progress (Info), evictions and OOM kills (Info) and profile errors
	// (Warn). Default: discard.
	Logger *slog.Logger
}

// Server is the lab's metrics-server: it samples the pods' usage from their kwok profiles,
// records current and peak usage per pod and node, and serves metrics.k8s.io/v1beta1 to
// the API server's aggregation layer on a loopback port. Its methods are safe for
// concurrent use.
type Server struct {
	opts       Options
	log        *slog.Logger
	kube       kubernetes.Interface
	kwok       kwokclient.Interface
	aggregator aggregator.Interface
	env        *kwokmetrics.Environment
	overhead   amount
	started    atomic.Bool

	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	usages   cache.Store
	clusters cache.Store

	mu        sync.Mutex
	sampledAt time.Time
	podsByUID map[types.UID]*podRecord
	nodesBy   map[string]*nodeRecord
	pressure  map[string]time.Time // node -> last time its pods exceeded allocatable
	addr      string
}

// New checks the options and prepares a Server; Run starts it.
func New(opts Options) (*Server, error) {
	if opts.RESTConfig == nil {
		return nil, errors.New("metrics: Options.RESTConfig is required")
	}
	if opts.Resolution <= 0 {
		opts.Resolution = DefaultResolution
	}
	if opts.NodeOverhead == nil {
		opts.NodeOverhead = DefaultNodeOverhead
	}
	if opts.EvictionHard <= 0 {
		opts.EvictionHard = DefaultEvictionHard
	}
	if opts.PressureTransitionPeriod <= 0 {
		opts.PressureTransitionPeriod = DefaultPressureTransitionPeriod
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := rest.CopyConfig(opts.RESTConfig)
	cfg.UserAgent = "metrics-server karplab"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics: building the API client: %w", err)
	}
	kc, err := kwokclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics: building the kwok client: %w", err)
	}
	ac, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics: building the aggregator client: %w", err)
	}
	env, err := newEnvironment()
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &Server{
		opts: opts, log: opts.Logger, kube: kube, kwok: kc, aggregator: ac, env: env,
		overhead:  amountOf(opts.NodeOverhead),
		podsByUID: map[types.UID]*podRecord{}, nodesBy: map[string]*nodeRecord{}, pressure: map[string]time.Time{},
	}, nil
}

// Run installs kwok's usage CRDs and its default ClusterResourceUsage, starts sampling and
// serving, registers the APIService v1beta1.metrics.k8s.io and closes ready once the API
// server reports it Available. It runs until ctx ends, then unregisters the APIService (so
// discovery does not report an unavailable group) and returns nil. Run may be called once.
func (s *Server) Run(ctx context.Context, ready chan<- struct{}) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("metrics: Run called twice")
	}
	began := time.Now()
	if err := s.installProfiles(ctx); err != nil {
		return err
	}
	s.log.Debug("kwok usage CRDs established", "elapsed", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.startInformers(ctx); err != nil {
		return err
	}
	s.sample(ctx)

	cert, caPEM, err := servingCert()
	if err != nil {
		return err
	}
	auth, err := s.newAuth(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("metrics: listening: %w", err)
	}
	srv := &http.Server{
		Handler:           auth.wrap(s.apiHandler()),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			// The aggregator's client certificate is verified per request (authn).
			ClientAuth: tls.RequestClientCert,
			MinVersion: tls.VersionTLS12,
		},
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	s.mu.Lock()
	s.addr = ln.Addr().String()
	s.mu.Unlock()

	if err := s.register(ctx, int32(port), caPEM); err != nil {
		return err
	}
	s.log.Debug("APIService registered", "elapsed", time.Since(began).Round(time.Millisecond))
	defer s.unregister(context.WithoutCancel(ctx))
	if err := s.waitAvailable(ctx, 60*time.Second); err != nil {
		return err
	}
	s.log.Info("metrics.k8s.io/v1beta1 available", "backend", ln.Addr().String(), "resolution", s.opts.Resolution,
		"elapsed", time.Since(began).Round(time.Millisecond))
	close(ready)

	t := time.NewTicker(s.opts.Resolution)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-served:
			return fmt.Errorf("metrics: serving: %w", err)
		case <-t.C:
			s.sample(ctx)
		}
	}
}

// Addr is the loopback address the metrics API is served on (empty before Run serves).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Reset forgets every record and deletes the profiles labs made (every ResourceUsage and
// every ClusterResourceUsage but kwok's default, which it restores).
func (s *Server) Reset(ctx context.Context) error {
	s.mu.Lock()
	s.podsByUID = map[types.UID]*podRecord{}
	s.nodesBy = map[string]*nodeRecord{}
	s.pressure = map[string]time.Time{}
	s.mu.Unlock()
	return s.resetProfiles(ctx)
}

func (s *Server) startInformers(ctx context.Context) error {
	factory := informers.NewSharedInformerFactory(s.kube, 0)
	s.pods = factory.Core().V1().Pods().Lister()
	s.nodes = factory.Core().V1().Nodes().Lister()
	v1 := s.kwok.KwokV1alpha1()
	ruInformer := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return v1.ResourceUsages("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return v1.ResourceUsages("").Watch(ctx, o)
		},
	}, &v1alpha1.ResourceUsage{}, 0, cache.Indexers{})
	cruInformer := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return v1.ClusterResourceUsages().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return v1.ClusterResourceUsages().Watch(ctx, o)
		},
	}, &v1alpha1.ClusterResourceUsage{}, 0, cache.Indexers{})
	s.usages, s.clusters = ruInformer.GetStore(), cruInformer.GetStore()
	podInformer := factory.Core().V1().Pods().Informer()
	nodeInformer := factory.Core().V1().Nodes().Informer()
	factory.Start(ctx.Done())
	go ruInformer.RunWithContext(ctx)
	go cruInformer.RunWithContext(ctx)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), podInformer.HasSynced, nodeInformer.HasSynced, ruInformer.HasSynced, cruInformer.HasSynced) {
		return errors.New("metrics: the pod, node and usage caches did not sync")
	}
	return nil
}

// sample takes one sample of every running pod and acts on what it finds when enforcing.
func (s *Server) sample(ctx context.Context) {
	pods, _ := s.pods.List(labels.Everything())
	nodes, _ := s.nodes.List(labels.Everything())
	var rus []*v1alpha1.ResourceUsage
	for _, o := range s.usages.List() {
		rus = append(rus, o.(*v1alpha1.ResourceUsage))
	}
	var crus []*v1alpha1.ClusterResourceUsage
	for _, o := range s.clusters.List() {
		crus = append(crus, o.(*v1alpha1.ClusterResourceUsage))
	}
	in := sampleInput{now: time.Now(), pods: pods, nodes: nodes, profiles: newProfiles(s.env, rus, crus), overhead: s.overhead}
	events := s.record(ctx, in)
	if s.opts.Enforce {
		s.enforce(ctx, in, events)
	}
}
