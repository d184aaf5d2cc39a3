package metrics

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// Usage is an amount of CPU and memory: cores as millicores ("500m"), bytes in binary
// units ("4Gi").
type Usage struct {
	CPU    resource.Quantity `json:"cpu"`
	Memory resource.Quantity `json:"memory"`
}

// ContainerUsage is one container's usage as the lab's metrics server sampled it.
type ContainerUsage struct {
	Name string `json:"name"`
	// Current is the latest sample; Peak the highest of each resource since the pod first ran.
	// Neither exceeds the container's limits: past its memory limit the container is
	// OOM-killed, past its CPU limit it is throttled.
	Current Usage `json:"current"`
	Peak    Usage `json:"peak"`
	// Request and Limit are the container's spec (zero when unset).
	Request Usage `json:"request"`
	Limit   Usage `json:"limit"`
	// OOMKills counts the samples whose memory demand exceeded the limit.
	OOMKills int `json:"oomKills,omitempty"`
}

// PodUsage is the record of one pod (by UID) from its first sample on. It is kept after the
// pod stops running or is deleted, until Reset, so evidence can show what a pod used before
// it was evicted or replaced.
type PodUsage struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	Node      string    `json:"node"`
	// Running is false once the pod no longer runs (ended, evicted or deleted).
	Running      bool      `json:"running"`
	FirstSampled time.Time `json:"firstSampled"`
	LastSampled  time.Time `json:"lastSampled"`
	// Current is the sum of the containers' latest samples. Peak holds the highest pod
	// total of each resource, reached at PeakCPUAt and PeakMemoryAt.
	Current      Usage     `json:"current"`
	Peak         Usage     `json:"peak"`
	PeakCPUAt    time.Time `json:"peakCPUAt"`
	PeakMemoryAt time.Time `json:"peakMemoryAt"`
	// Request and Limit sum the containers' spec.
	Request    Usage            `json:"request"`
	Limit      Usage            `json:"limit"`
	Containers []ContainerUsage `json:"containers"`
	// Source names the kwok objects the usage comes from ("ClusterResourceUsage
	// usage-from-annotation"); empty when none applies (the pod uses nothing).
	Source string `json:"source,omitempty"`
	// Error is the latest failure to evaluate the pod's profile (a CEL error); its usage
	// then counts as 0, as in kwok.
	Error string `json:"error,omitempty"`
	// Evicted is the eviction message when the lab's kubelet evicted the pod.
	Evicted string `json:"evicted,omitempty"`
}

// NodeUsage is one Ready node's usage: its running pods' plus the system's overhead.
type NodeUsage struct {
	Name        string    `json:"name"`
	LastSampled time.Time `json:"lastSampled"`
	Current     Usage     `json:"current"`
	Peak        Usage     `json:"peak"`
	// Pods is the running pods' part of Current.
	Pods        Usage `json:"pods"`
	Allocatable Usage `json:"allocatable"`
	Capacity    Usage `json:"capacity"`
	// MemoryPressure is the node's MemoryPressure condition as the lab's kubelet set it.
	MemoryPressure bool `json:"memoryPressure,omitempty"`
}

// Report is everything the metrics server recorded.
type Report struct {
	// Resolution is how often usage is sampled (metrics-server's --metric-resolution).
	Resolution string      `json:"resolution"`
	SampledAt  time.Time   `json:"sampledAt"`
	Pods       []PodUsage  `json:"pods"`
	Nodes      []NodeUsage `json:"nodes"`
}

// amount is CPU in nanocores and memory in bytes, as the kubelet's summary API counts them.
type amount struct{ cpu, memory int64 }

func (a amount) add(b amount) amount { return amount{a.cpu + b.cpu, a.memory + b.memory} }

func (a amount) usage() Usage {
	return Usage{
		CPU:    *resource.NewMilliQuantity(a.cpu/1e6, resource.DecimalSI),
		Memory: *resource.NewQuantity(a.memory, resource.BinarySI),
	}
}

func amountOf(l corev1.ResourceList) amount {
	var a amount
	if q, ok := l[corev1.ResourceCPU]; ok {
		a.cpu = q.ScaledValue(resource.Nano)
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		a.memory = q.Value()
	}
	return a
}

type containerRecord struct {
	name       string
	cur, peak  amount
	req, limit amount
	oomKills   int
	// The restart back-off after OOM kills (Options.Enforce).
	backoff   time.Duration
	lastKill  time.Time
	restartAt time.Time // zero unless waiting in CrashLoopBackOff
}

type podRecord struct {
	ns, name, node string
	uid            types.UID
	labels         map[string]string
	running        bool
	first, last    time.Time
	cur, peak      amount
	peakCPUAt      time.Time
	peakMemAt      time.Time
	containers     []*containerRecord
	source, err    string
	evicted        string
}

func (r *podRecord) container(name string) *containerRecord {
	for _, c := range r.containers {
		if c.name == name {
			return c
		}
	}
	c := &containerRecord{name: name}
	r.containers = append(r.containers, c)
	return c
}

func (r *podRecord) view() PodUsage {
	u := PodUsage{
		Namespace: r.ns, Name: r.name, UID: r.uid, Node: r.node, Running: r.running,
		FirstSampled: r.first, LastSampled: r.last,
		Current: r.cur.usage(), Peak: r.peak.usage(), PeakCPUAt: r.peakCPUAt, PeakMemoryAt: r.peakMemAt,
		Source: r.source, Error: r.err, Evicted: r.evicted,
	}
	var req, limit amount
	for _, c := range r.containers {
		req, limit = req.add(c.req), limit.add(c.limit)
		u.Containers = append(u.Containers, ContainerUsage{
			Name: c.name, Current: c.cur.usage(), Peak: c.peak.usage(),
			Request: c.req.usage(), Limit: c.limit.usage(), OOMKills: c.oomKills,
		})
	}
	u.Request, u.Limit = req.usage(), limit.usage()
	return u
}

type nodeRecord struct {
	name                  string
	labels                map[string]string
	last                  time.Time
	cur, peak, pods       amount
	allocatable, capacity amount
	memoryPressure        bool
}

func (r *nodeRecord) view() NodeUsage {
	return NodeUsage{
		Name: r.name, LastSampled: r.last, Current: r.cur.usage(), Peak: r.peak.usage(), Pods: r.pods.usage(),
		Allocatable: r.allocatable.usage(), Capacity: r.capacity.usage(), MemoryPressure: r.memoryPressure,
	}
}

// maxGoneRecords bounds the records kept for pods that no longer run.
const maxGoneRecords = 5000

// containerEvent is what the kubelet does to a container after a sample (with
// Options.Enforce): an OOM kill, then a restart at once (backoff 0) or after the back-off;
// or, with restart set, the restart that ends a back-off.
type containerEvent struct {
	pod           *corev1.Pod
	container     string
	restart       bool
	demand, limit int64
	backoff       time.Duration
}

// The kubelet's container restart back-off: the first restart is immediate, the next wait
// 10s, doubling up to 5 minutes; it starts over after 10 minutes without a failure.
const (
	initialBackoff = 10 * time.Second
	maxBackoff     = 5 * time.Minute
)

// sampleInput is one tick's view of the cluster.
type sampleInput struct {
	now      time.Time
	pods     []*corev1.Pod
	nodes    []*corev1.Node
	profiles *profiles
	overhead amount
}

// evaluated is one running pod's containers at a sample: usage held to the limits, and
// the memory each container asked for.
type evaluated struct {
	pod     *corev1.Pod
	amounts map[string]amount
	demands map[string]int64
	source  string
	err     string
}

// evaluate runs every running pod's profiles; it takes no lock (CEL may take a while).
func evaluate(ctx context.Context, in sampleInput) []evaluated {
	nodes := map[string]*corev1.Node{}
	for _, n := range in.nodes {
		nodes[n.Name] = n
	}
	var done []evaluated
	for _, pod := range in.pods {
		// A node that is not Ready has no kubelet to report its pods, as for metrics-server.
		node := nodes[pod.Spec.NodeName]
		if node == nil || !nodeReady(node) || pod.Status.Phase != corev1.PodRunning {
			continue
		}
		e := evaluated{pod: pod, amounts: map[string]amount{}, demands: map[string]int64{}}
		var sources []string
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			d, err := in.profiles.containerDemand(ctx, node, pod, c)
			if err != nil && e.err == "" {
				e.err = err.Error()
			}
			if d.source != "" && !slices.Contains(sources, d.source) {
				sources = append(sources, d.source)
			}
			a := amount{cpu: int64(d.cpu * 1e9), memory: int64(d.memory)}
			e.demands[c.Name] = a.memory
			limit := amountOf(c.Resources.Limits)
			if limit.cpu > 0 {
				a.cpu = min(a.cpu, limit.cpu)
			}
			if limit.memory > 0 {
				a.memory = min(a.memory, limit.memory)
			}
			e.amounts[c.Name] = a
		}
		slices.Sort(sources)
		e.source = strings.Join(sources, ", ")
		done = append(done, e)
	}
	return done
}

// record samples every running pod and Ready node, updates their records, and returns what
// the kubelet does to containers that ran past their memory limit.
func (s *Server) record(ctx context.Context, in sampleInput) []containerEvent {
	done := evaluate(ctx, in)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sampledAt = in.now
	seen := map[types.UID]bool{}
	var events []containerEvent
	for _, e := range done {
		pod := e.pod
		seen[pod.UID] = true
		r := s.podsByUID[pod.UID]
		if r == nil {
			r = &podRecord{ns: pod.Namespace, name: pod.Name, uid: pod.UID, first: in.now}
			s.podsByUID[pod.UID] = r
		}
		r.node, r.labels, r.running, r.last = pod.Spec.NodeName, pod.Labels, true, in.now
		r.source, r.err = e.source, e.err
		r.cur = amount{}
		for _, c := range pod.Spec.Containers {
			cr := r.container(c.Name)
			cr.req, cr.limit = amountOf(c.Resources.Requests), amountOf(c.Resources.Limits)
			if ev, ok := s.containerSampleLocked(cr, e, c.Name, in.now); ok {
				events = append(events, ev)
			}
			cr.peak = amount{max(cr.peak.cpu, cr.cur.cpu), max(cr.peak.memory, cr.cur.memory)}
			r.cur = r.cur.add(cr.cur)
		}
		if r.cur.cpu > r.peak.cpu || r.peakCPUAt.IsZero() {
			r.peak.cpu, r.peakCPUAt = r.cur.cpu, in.now
		}
		if r.cur.memory > r.peak.memory || r.peakMemAt.IsZero() {
			r.peak.memory, r.peakMemAt = r.cur.memory, in.now
		}
	}
	for uid, r := range s.podsByUID {
		if !seen[uid] {
			r.running = false
		}
	}
	s.pruneLocked()
	s.recordNodesLocked(in)
	return events
}

// containerSampleLocked sets one container's current usage and says what the kubelet does
// to it: a container in back-off uses nothing; one past its memory limit is OOM-killed.
func (s *Server) containerSampleLocked(cr *containerRecord, e evaluated, name string, now time.Time) (containerEvent, bool) {
	cr.cur = e.amounts[name]
	if !cr.restartAt.IsZero() {
		if now.Before(cr.restartAt) {
			cr.cur = amount{}
			return containerEvent{}, false
		}
		cr.restartAt = time.Time{}
		return containerEvent{pod: e.pod, container: name, restart: true}, true
	}
	demand := e.demands[name]
	if cr.limit.memory == 0 || demand <= cr.limit.memory {
		return containerEvent{}, false
	}
	cr.oomKills++
	ev := containerEvent{pod: e.pod, container: name, demand: demand, limit: cr.limit.memory}
	if !s.opts.Enforce {
		return ev, true
	}
	if now.Sub(cr.lastKill) > 2*maxBackoff {
		cr.backoff = 0
	}
	cr.lastKill = now
	ev.backoff = cr.backoff
	if cr.backoff > 0 && e.pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		cr.restartAt = now.Add(cr.backoff)
	}
	cr.backoff = min(max(2*cr.backoff, initialBackoff), maxBackoff)
	return ev, true
}

// recordNodesLocked sums the running pods of every Ready node and adds the system overhead.
func (s *Server) recordNodesLocked(in sampleInput) {
	sums := map[string]amount{}
	for _, r := range s.podsByUID {
		if r.running && r.last.Equal(in.now) {
			sums[r.node] = sums[r.node].add(r.cur)
		}
	}
	present := map[string]bool{}
	for _, n := range in.nodes {
		if !nodeReady(n) {
			continue
		}
		present[n.Name] = true
		r := s.nodesBy[n.Name]
		if r == nil {
			r = &nodeRecord{name: n.Name}
			s.nodesBy[n.Name] = r
		}
		r.labels, r.last = n.Labels, in.now
		r.pods = sums[n.Name]
		r.cur = r.pods.add(in.overhead)
		r.peak = amount{max(r.peak.cpu, r.cur.cpu), max(r.peak.memory, r.cur.memory)}
		r.allocatable, r.capacity = amountOf(n.Status.Allocatable), amountOf(n.Status.Capacity)
		r.memoryPressure = nodeCondition(n, corev1.NodeMemoryPressure)
	}
	for name := range s.nodesBy {
		if !present[name] {
			delete(s.nodesBy, name)
		}
	}
}

// pruneLocked drops the oldest records of pods that no longer run beyond maxGoneRecords.
func (s *Server) pruneLocked() {
	var gone []*podRecord
	for _, r := range s.podsByUID {
		if !r.running {
			gone = append(gone, r)
		}
	}
	if len(gone) <= maxGoneRecords {
		return
	}
	slices.SortFunc(gone, func(a, b *podRecord) int { return a.last.Compare(b.last) })
	for _, r := range gone[:len(gone)-maxGoneRecords] {
		delete(s.podsByUID, r.uid)
	}
}

// Report returns every pod record (running or not) ordered by namespace, name and first
// sample, and every Ready node ordered by name.
func (s *Server) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := Report{Resolution: s.opts.Resolution.String(), SampledAt: s.sampledAt}
	for _, r := range s.podsByUID {
		rep.Pods = append(rep.Pods, r.view())
	}
	slices.SortFunc(rep.Pods, func(a, b PodUsage) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), a.FirstSampled.Compare(b.FirstSampled))
	})
	for _, r := range s.nodesBy {
		rep.Nodes = append(rep.Nodes, r.view())
	}
	slices.SortFunc(rep.Nodes, func(a, b NodeUsage) int { return cmp.Compare(a.Name, b.Name) })
	return rep
}

// Pod returns the record of the pod namespace/name: the running one, else the one sampled
// last. ok is false when no pod of that name was ever sampled.
func (s *Server) Pod(namespace, name string) (PodUsage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *podRecord
	for _, r := range s.podsByUID {
		if r.ns != namespace || r.name != name {
			continue
		}
		if best == nil || (r.running && !best.running) || (r.running == best.running && r.last.After(best.last)) {
			best = r
		}
	}
	if best == nil {
		return PodUsage{}, false
	}
	return best.view(), true
}

func nodeReady(n *corev1.Node) bool { return nodeCondition(n, corev1.NodeReady) }

func nodeCondition(n *corev1.Node, t corev1.NodeConditionType) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
