package kubelet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	kwoklog "sigs.k8s.io/kwok/pkg/log"

	"github.com/karplab/karplab/cluster/bootstrap"
)

// Defaults of Options.
const (
	DefaultClusterName       = "karplab"
	DefaultPollInterval      = time.Second
	DefaultNodeLeaseDuration = 40 * time.Second // the kubelet's nodeLeaseDurationSeconds
	DefaultNodeMonitorPeriod = 5 * time.Second  // the cloud-controller-manager's node-monitor-period
)

// Options configure a Kubelet fleet.
type Options struct {
	// RESTConfig reaches the cluster's API server (required). Each node's kubelet gets its
	// own client from it (user agent kubelet/..., its own QPS budget).
	RESTConfig *rest.Config
	// EC2 is the EC2 API client (required), e.g. ec2.NewFromConfig pointed at the emulator.
	EC2 EC2API
	// ClusterName selects instances tagged kubernetes.io/cluster/<name>=owned; their
	// NodeConfig must name the same cluster. Default "karplab".
	ClusterName string
	// Region labels the Nodes; default: derived from each instance's zone.
	Region string
	// PollInterval is how often DescribeInstances is polled. Default 1s.
	PollInterval time.Duration
	// StartDelay is how long after an instance is seen running its kubelet registers. Default 0.
	StartDelay time.Duration
	// NodeLeaseDuration is the lease duration in kube-node-lease; leases are renewed every
	// quarter of it. Default 40s, the kubelet's.
	NodeLeaseDuration time.Duration
	// NodeMonitorPeriod is how often the cloud node lifecycle check runs. Default 5s.
	NodeMonitorPeriod time.Duration
	// VMMemoryOverheadPercent is the share of nominal memory a node does not report.
	// Default DefaultVMMemoryOverheadPercent; negative means none.
	VMMemoryOverheadPercent float64
	// KubeAPIQPS and KubeAPIBurst limit each node's kubelet client. Default 50 and 100, the kubelet's.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ManageKWOKProviderNodes also runs one kwok controller for the Nodes that Karpenter's own
	// kwok provider creates (label kwok.x-k8s.io/node=fake), for `karplab start --provider kwok`.
	// Those Nodes have no EC2 instance; this fleet never registers such a Node itself.
	ManageKWOKProviderNodes bool
	// Console, if set, receives each instance's bootstrap outcome as console lines (see Console).
	Console Console
	// Logger receives lifecycle lines (Info: registered, stopped; Warn: bootstrap failures;
	// Debug: kwok's detail). Default: discard.
	Logger *slog.Logger
}

// Phase is where an instance is in its life as a node.
type Phase string

const (
	// PhasePending: the instance is pending; nothing runs yet.
	PhasePending Phase = "Pending"
	// PhaseBooting: the instance runs and its bootstrap is in progress (or waiting to retry).
	PhaseBooting Phase = "Booting"
	// PhaseRegistered: the Node is registered and its kubelet reports.
	PhaseRegistered Phase = "Registered"
	// PhaseBootstrapFailed: bootstrap failed; the instance runs but will never register.
	PhaseBootstrapFailed Phase = "BootstrapFailed"
)

// NodeStatus is one pending or running instance as the kubelet fleet sees it.
type NodeStatus struct {
	InstanceID   string
	InstanceType string
	Zone         string
	PrivateIP    string
	NodeName     string
	ProviderID   string
	Phase        Phase
	// Reason says why bootstrap failed, or what a booting node is waiting for.
	Reason       string
	RunningSince time.Time // when the fleet first saw the instance running
	RegisteredAt time.Time // when the Node was created, or adopted
	// Adopted is true when the Node already existed (a restarted daemon took it over).
	Adopted bool
}

// BootstrapFault makes the bootstrap of matching instances fail: they run, but their Node never
// registers. It applies to instances that boot while it is in place.
type BootstrapFault struct {
	// InstanceIDs selects instances by ID; empty selects all.
	InstanceIDs []string
	// Tags selects instances carrying all these tags (e.g. karpenter.sh/nodepool); empty selects all.
	Tags map[string]string
	// Reason is logged as the cause; default "bootstrap broken by fault injection".
	Reason string
}

func (f BootstrapFault) matches(inst ec2types.Instance) bool {
	if len(f.InstanceIDs) > 0 && !slices.Contains(f.InstanceIDs, deref(inst.InstanceId)) {
		return false
	}
	for k, v := range f.Tags {
		found := false
		for _, t := range inst.Tags {
			if deref(t.Key) == k && deref(t.Value) == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Kubelet is the simulated kubelet fleet: one kubelet per running instance of the cluster.
type Kubelet struct {
	opts       Options
	log        *slog.Logger
	kwokLog    *kwoklog.Logger
	kube       kubernetes.Interface // the cloud node lifecycle controller's client
	httpClient *http.Client
	stages     map[internalversion.StageResourceRef][]*internalversion.Stage
	settings   nodeSettings
	started    atomic.Bool
	resync     chan chan struct{} // Resync's requests to the Run loop

	mu        sync.Mutex
	instances map[string]*instanceState
	faults    []BootstrapFault

	typesMu sync.Mutex
	types   map[string]ec2types.InstanceTypeInfo
}

type instanceState struct {
	status NodeStatus
	cancel context.CancelFunc // stops its boot or its kubelet
	done   chan struct{}      // closed when its boot and kubelet have ended
}

// New checks the options and prepares the fleet; Run starts it.
func New(opts Options) (*Kubelet, error) {
	if opts.RESTConfig == nil {
		return nil, errors.New("kubelet: Options.RESTConfig is required")
	}
	if opts.EC2 == nil {
		return nil, errors.New("kubelet: Options.EC2 is required")
	}
	if opts.ClusterName == "" {
		opts.ClusterName = DefaultClusterName
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.NodeLeaseDuration <= 0 {
		opts.NodeLeaseDuration = DefaultNodeLeaseDuration
	}
	if opts.NodeLeaseDuration < time.Second {
		opts.NodeLeaseDuration = time.Second
	}
	if opts.NodeMonitorPeriod <= 0 {
		opts.NodeMonitorPeriod = DefaultNodeMonitorPeriod
	}
	switch {
	case opts.VMMemoryOverheadPercent == 0:
		opts.VMMemoryOverheadPercent = DefaultVMMemoryOverheadPercent
	case opts.VMMemoryOverheadPercent < 0:
		opts.VMMemoryOverheadPercent = 0
	}
	if opts.KubeAPIQPS <= 0 {
		opts.KubeAPIQPS = 50
	}
	if opts.KubeAPIBurst <= 0 {
		opts.KubeAPIBurst = 100
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	stages, err := kwokStages()
	if err != nil {
		return nil, err
	}
	httpClient, err := rest.HTTPClientFor(opts.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("kubelet: building the API server HTTP client: %w", err)
	}
	cfg := rest.CopyConfig(opts.RESTConfig)
	cfg.UserAgent = "karplab-cloud-node-lifecycle"
	kube, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kubelet: building the API client: %w", err)
	}
	return &Kubelet{
		opts:       opts,
		log:        logger,
		kwokLog:    newKwokLogger(logger.Handler()),
		kube:       kube,
		httpClient: httpClient,
		stages:     stages,
		settings: nodeSettings{
			ClusterName:             opts.ClusterName,
			Region:                  opts.Region,
			VMMemoryOverheadPercent: opts.VMMemoryOverheadPercent,
		},
		instances: map[string]*instanceState{},
		resync:    make(chan chan struct{}),
		types:     map[string]ec2types.InstanceTypeInfo{},
	}, nil
}

// Run polls EC2 and runs a kubelet for every running instance of the cluster, and the cloud node
// lifecycle check, until ctx is cancelled; then every kubelet stops and Run returns nil. Nodes
// that already exist for running instances (a restarted daemon) are adopted, not registered
// again. Run may be called once.
func (k *Kubelet) Run(ctx context.Context) error {
	if !k.started.CompareAndSwap(false, true) {
		return errors.New("kubelet: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Go(func() { k.runCloudNodeLifecycle(ctx) })
	if k.opts.ManageKWOKProviderNodes {
		if err := k.startKWOKProviderController(ctx); err != nil {
			return err
		}
	}

	k.log.Info("simulated kubelet fleet started", "cluster", k.opts.ClusterName, "poll", k.opts.PollInterval)
	for {
		wait := k.opts.PollInterval
		if pending, _ := k.sync(ctx, &wg); pending {
			// A machine boots the moment EC2 says running, not on the next poll.
			wait = min(wait, pendingPollInterval)
		}
		select {
		case <-ctx.Done():
			k.log.Info("simulated kubelet fleet stopping")
			return nil
		case <-time.After(wait):
		case reply := <-k.resync:
			_, stopped := k.sync(ctx, &wg)
			for _, done := range stopped {
				select {
				case <-done:
				case <-ctx.Done():
				}
			}
			close(reply)
		}
	}
}

// Resync polls EC2 now and returns once the kubelet of every instance no longer pending or
// running has ended, so no Node registers for one after it (a reset ends every instance).
// Before Run it does nothing.
func (k *Kubelet) Resync(ctx context.Context) error {
	if !k.started.Load() {
		return nil
	}
	reply := make(chan struct{})
	select {
	case k.resync <- reply:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pendingPollInterval is how often EC2 is polled while an instance of the cluster is pending.
const pendingPollInterval = 200 * time.Millisecond

// sync reconciles the fleet with one DescribeInstances: a kubelet boots on every instance newly
// running, and stops on every instance no longer pending or running. It reports whether an
// instance is still pending, and what is closed once each kubelet it stopped has ended.
func (k *Kubelet) sync(ctx context.Context, wg *sync.WaitGroup) (pending bool, stopped []chan struct{}) {
	insts, err := clusterInstances(ctx, k.opts.EC2, k.opts.ClusterName)
	if err != nil {
		if ctx.Err() == nil {
			k.log.Warn("polling EC2 for instances", "err", err)
		}
		return false, nil // without an answer, nothing is known to have stopped
	}
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	seen := make(map[string]bool, len(insts))
	for _, inst := range insts {
		id := deref(inst.InstanceId)
		if id == "" || inst.State == nil {
			continue
		}
		seen[id] = true
		st := k.instances[id]
		if st == nil {
			st = &instanceState{status: NodeStatus{InstanceID: id, Phase: PhasePending}}
			k.instances[id] = st
		}
		st.status.InstanceType = string(inst.InstanceType)
		st.status.PrivateIP = deref(inst.PrivateIpAddress)
		if inst.Placement != nil {
			st.status.Zone = deref(inst.Placement.AvailabilityZone)
		}
		pending = pending || inst.State.Name == ec2types.InstanceStateNamePending
		if inst.State.Name == ec2types.InstanceStateNameRunning && st.status.Phase == PhasePending {
			st.status.Phase = PhaseBooting
			st.status.RunningSince = now
			bootCtx, cancel := context.WithCancel(ctx)
			st.cancel, st.done = cancel, make(chan struct{})
			done := st.done
			wg.Go(func() {
				defer close(done)
				k.boot(bootCtx, inst)
			})
		}
	}
	for id, st := range k.instances {
		if seen[id] {
			continue
		}
		if st.cancel != nil {
			st.cancel()
			stopped = append(stopped, st.done)
		}
		if st.status.Phase == PhaseRegistered {
			k.log.Info("instance is no longer running: its kubelet stops, the Node stops reporting",
				"instance", id, "node", st.status.NodeName)
		}
		delete(k.instances, id)
	}
	return pending, stopped
}

// bootstrapError is a bootstrap failure no retry can fix: the node never registers. console
// is what the machine prints about it (default: its bootstrap agent's failure line).
type bootstrapError struct {
	reason  string
	console string
}

func (e *bootstrapError) Error() string { return e.reason }

func errBootstrap(format string, args ...any) error {
	return &bootstrapError{reason: fmt.Sprintf(format, args...)}
}

// boot plays nodeadm and the kubelet on one running instance, retrying API errors until the
// Node is registered, bootstrap fails for good, or ctx ends (the instance stopped running).
func (k *Kubelet) boot(ctx context.Context, inst ec2types.Instance) {
	id := deref(inst.InstanceId)
	if !sleepCtx(ctx, k.opts.StartDelay) {
		return
	}
	backoff := k.opts.PollInterval
	for {
		err := k.tryBoot(ctx, inst)
		if err == nil || ctx.Err() != nil {
			return
		}
		var be *bootstrapError
		if errors.As(err, &be) {
			k.update(id, func(s *NodeStatus) {
				s.Phase = PhaseBootstrapFailed
				s.Reason = be.reason
			})
			k.log.Warn("bootstrap failed: the instance runs but its node will never register",
				"instance", id, "reason", be.reason)
			text := be.console
			if text == "" {
				text = consoleBootstrapFailed(bootstrap.FormatAL2023, be.reason, time.Now())
			}
			k.appendConsole(ctx, id, text)
			return
		}
		k.update(id, func(s *NodeStatus) { s.Reason = err.Error() })
		k.log.Debug("bootstrap step failed, retrying", "instance", id, "err", err, "in", backoff)
		if !sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// tryBoot makes one attempt at bootstrap. A *bootstrapError is final; other errors are retried.
func (k *Kubelet) tryBoot(ctx context.Context, inst ec2types.Instance) error {
	id := deref(inst.InstanceId)
	region := k.settings.Region
	if region == "" && inst.Placement != nil {
		region = regionOf(deref(inst.Placement.AvailabilityZone))
	}
	name := nodeName(inst, region)
	client, err := k.nodeClient(name, nodeArch(inst, ec2types.InstanceTypeInfo{}))
	if err != nil {
		return err
	}

	// A restarted daemon finds the Node its kubelet registered earlier: adopt it.
	existing, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		if id2, _ := instanceIDFromProviderID(existing.Spec.ProviderID); id2 != id {
			return fmt.Errorf("node %s already exists with provider ID %q (an earlier instance with the same IP?): waiting for it to be deleted", name, existing.Spec.ProviderID)
		}
		return k.startKubelet(ctx, inst, existing, true, client)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("looking up node %s: %w", name, err)
	}

	raw, err := userData(ctx, k.opts.EC2, id)
	if err != nil {
		return err
	}
	if strings.TrimSpace(raw) == "" {
		return errBootstrap("the instance has no user data: nodeadm has no NodeConfig to join a cluster with")
	}
	ud, err := bootstrap.Parse(raw)
	if err != nil {
		return errBootstrap("nodeadm cannot read the user data: %v", err)
	}
	// The failure lines name what each format calls its settings.
	settings := map[bootstrap.Format]string{bootstrap.FormatAL2: "bootstrap.sh call", bootstrap.FormatBottlerocket: "Bottlerocket settings"}[ud.Format]
	if settings == "" {
		settings = "NodeConfig"
	}
	// ran is what the boot printed so far: it reaches the console with the outcome, once.
	var ran strings.Builder
	failed := func(format string, args ...any) error {
		reason := fmt.Sprintf(format, args...)
		return &bootstrapError{reason: reason, console: ran.String() + consoleBootstrapFailed(ud.Format, reason, time.Now())}
	}
	if got := ud.Node.ClusterName; got != k.opts.ClusterName {
		return failed("the %s names cluster %q, not %q: the kubelet has no cluster to join", settings, got, k.opts.ClusterName)
	}
	if ud.Node.APIServerEndpoint == "" {
		return failed("the %s has no API server endpoint: the kubelet cannot reach the API server", settings)
	}
	for i, script := range ud.Scripts {
		ran.WriteString(consoleScriptOutput(scriptOutput(script)))
		if status, line := scriptFailure(script); status != 0 {
			now := time.Now()
			return &bootstrapError{
				reason:  fmt.Sprintf("user data script part %d exited with status %d at line %d, before the kubelet started", i+1, status, line),
				console: ran.String() + consoleScriptFailed(i+1, status, now) + consoleCloudInitFinished(ud.Format, inst, now),
			}
		}
	}
	ran.WriteString(consoleCloudInitFinished(ud.Format, inst, time.Now()))
	if f, ok := k.faultFor(inst); ok {
		return failed("%s", f.Reason)
	}
	it, err := k.instanceType(ctx, string(inst.InstanceType))
	if err != nil {
		return err
	}
	rootGiB, err := rootVolumeGiB(ctx, k.opts.EC2, inst)
	if err != nil {
		k.log.Debug("root volume size unknown, assuming the default", "instance", id, "err", err)
		rootGiB = 0
	}
	node, err := buildNode(machine{Instance: inst, UserData: ud, InstanceType: it, RootVolumeGiB: rootGiB}, k.settings)
	if err != nil {
		return failed("%v", err)
	}
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("registering node %s: %w", name, err)
	}
	k.appendConsole(ctx, id, ran.String()+consoleRegistered(ud.Format, name, time.Now()))
	return k.startKubelet(ctx, inst, created, false, client)
}

// startKubelet starts the node's kwok controller and marks the instance registered.
func (k *Kubelet) startKubelet(ctx context.Context, inst ec2types.Instance, node *corev1.Node, adopted bool, client kubernetes.Interface) error {
	id := deref(inst.InstanceId)
	err := startKwok(ctx, kwokNode{
		Name:          node.Name,
		IP:            deref(inst.PrivateIpAddress),
		PodCIDR:       podCIDR(deref(inst.PrivateIpAddress)),
		LeaseDuration: k.opts.NodeLeaseDuration,
		Client:        client,
		Stages:        k.stages,
		Logger:        k.kwokLog.With("node", node.Name),
	})
	if err != nil {
		return err
	}
	now := time.Now()
	var since time.Time
	k.update(id, func(s *NodeStatus) {
		s.Phase = PhaseRegistered
		s.Reason = ""
		s.NodeName = node.Name
		s.ProviderID = node.Spec.ProviderID
		s.RegisteredAt = now
		s.Adopted = adopted
		since = s.RunningSince
	})
	if adopted {
		k.log.Info("adopted existing node", "instance", id, "node", node.Name)
	} else {
		k.log.Info("node registered", "instance", id, "node", node.Name, "type", string(inst.InstanceType),
			"providerID", node.Spec.ProviderID, "afterRunning", now.Sub(since).Round(time.Millisecond))
	}
	return nil
}

// KWOKProviderNodeSelector selects the Nodes of Karpenter's kwok provider.
const KWOKProviderNodeSelector = "kwok.x-k8s.io/node=fake"

// startKWOKProviderController starts the kwok controller of Karpenter's kwok provider's Nodes.
func (k *Kubelet) startKWOKProviderController(ctx context.Context) error {
	cfg := rest.CopyConfig(k.opts.RESTConfig)
	cfg.QPS, cfg.Burst = 4*k.opts.KubeAPIQPS, 4*k.opts.KubeAPIBurst
	cfg.UserAgent = "kwok-controller karplab"
	client, err := kubernetes.NewForConfigAndClient(cfg, k.httpClient)
	if err != nil {
		return fmt.Errorf("kubelet: building the kwok provider client: %w", err)
	}
	err = startKwok(ctx, kwokNode{
		Name:          "karplab-kwok-provider",
		PodCIDR:       "10.128.0.0/12",
		LeaseDuration: k.opts.NodeLeaseDuration,
		Client:        client,
		Stages:        k.stages,
		Logger:        k.kwokLog.With("controller", "kwok-provider"),
		LabelSelector: KWOKProviderNodeSelector,
	})
	if err != nil {
		return fmt.Errorf("kubelet: %w", err)
	}
	k.log.Info("kwok manages the kwok provider's nodes", "selector", KWOKProviderNodeSelector)
	return nil
}

// nodeClient is the API client of one node's kubelet.
func (k *Kubelet) nodeClient(name, arch string) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(k.opts.RESTConfig)
	cfg.QPS = k.opts.KubeAPIQPS
	cfg.Burst = k.opts.KubeAPIBurst
	cfg.UserAgent = fmt.Sprintf("kubelet/%s (linux/%s) karplab node=%s", KubeletVersion, arch, name)
	c, err := kubernetes.NewForConfigAndClient(cfg, k.httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the kubelet client of %s: %w", name, err)
	}
	return c, nil
}

// instanceType describes an instance type once and caches it. The lock is held across the
// call so a burst of launches of one type asks EC2 once.
func (k *Kubelet) instanceType(ctx context.Context, name string) (ec2types.InstanceTypeInfo, error) {
	k.typesMu.Lock()
	defer k.typesMu.Unlock()
	if it, ok := k.types[name]; ok {
		return it, nil
	}
	var it ec2types.InstanceTypeInfo
	out, err := k.opts.EC2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{
		InstanceTypes: []ec2types.InstanceType{ec2types.InstanceType(name)},
	})
	if err != nil {
		return it, fmt.Errorf("describing instance type %s: %w", name, err)
	}
	if len(out.InstanceTypes) == 0 {
		return it, errBootstrap("EC2 does not know instance type %q", name)
	}
	it = out.InstanceTypes[0]
	k.types[name] = it
	return it, nil
}

func (k *Kubelet) update(id string, f func(*NodeStatus)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if st, ok := k.instances[id]; ok {
		f(&st.status)
	}
}

// Nodes returns the fleet's pending and running instances, ordered by instance ID.
func (k *Kubelet) Nodes() []NodeStatus {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]NodeStatus, 0, len(k.instances))
	for _, st := range k.instances {
		out = append(out, st.status)
	}
	slices.SortFunc(out, func(a, b NodeStatus) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return out
}

// BreakBootstrap makes the bootstrap of instances matching f fail from now on: they run, but
// never register a Node, so Karpenter's registration timeout applies. Nodes already
// registered are not affected.
func (k *Kubelet) BreakBootstrap(f BootstrapFault) {
	if f.Reason == "" {
		f.Reason = "bootstrap broken by fault injection"
	}
	f.InstanceIDs = slices.Clone(f.InstanceIDs)
	tags := make(map[string]string, len(f.Tags))
	for k, v := range f.Tags {
		tags[k] = v
	}
	f.Tags = tags
	k.mu.Lock()
	defer k.mu.Unlock()
	k.faults = append(k.faults, f)
}

// RepairBootstrap removes every bootstrap fault. Instances whose bootstrap already failed stay
// broken (a real machine does not retry); instances that boot later register normally.
func (k *Kubelet) RepairBootstrap() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.faults = nil
}

// BootstrapFaults returns the faults in place.
func (k *Kubelet) BootstrapFaults() []BootstrapFault {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.faults)
}

func (k *Kubelet) faultFor(inst ec2types.Instance) (BootstrapFault, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, f := range k.faults {
		if f.matches(inst) {
			return f, true
		}
	}
	return BootstrapFault{}, false
}

// runCloudNodeLifecycle stands in for the cloud-controller-manager's node lifecycle controller
// (k8s.io/cloud-provider's NodeLifecycleController with the AWS provider), which the lab does not
// run: every NodeMonitorPeriod it deletes the Nodes that are not Ready and whose EC2 instance no
// longer exists (terminated, or unknown to EC2). Karpenter normally deletes its Nodes first;
// this catches instances that went away behind its back.
func (k *Kubelet) runCloudNodeLifecycle(ctx context.Context) {
	t := time.NewTicker(k.opts.NodeMonitorPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := k.cloudNodeLifecycle(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("cloud node lifecycle check", "err", err)
		}
	}
}

func (k *Kubelet) cloudNodeLifecycle(ctx context.Context) error {
	nodes, err := k.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	byInstance := map[string]corev1.Node{}
	for _, n := range nodes.Items {
		id, ok := instanceIDFromProviderID(n.Spec.ProviderID)
		if !ok || nodeReady(&n) {
			continue
		}
		byInstance[id] = n
	}
	if len(byInstance) == 0 {
		return nil
	}
	ids := make([]string, 0, len(byInstance))
	for id := range byInstance {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	insts, err := instancesByID(ctx, k.opts.EC2, ids)
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	for _, inst := range insts {
		if inst.State != nil && inst.State.Name != ec2types.InstanceStateNameTerminated {
			exists[deref(inst.InstanceId)] = true
		}
	}
	for _, id := range ids {
		if exists[id] {
			continue
		}
		n := byInstance[id]
		err := k.kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &n.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting node %s: %w", n.Name, err)
		}
		if err == nil {
			k.log.Info("deleted node: its instance no longer exists", "node", n.Name, "instance", id)
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
