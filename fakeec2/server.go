package fakeec2

import (
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/statefile"
	"github.com/karplab/karplab/fakeec2/trail"
)

// Defaults of Options.
const (
	DefaultRegion              = "eu-west-2"
	DefaultAccountID           = "123456789012"
	DefaultBootDelay           = 2 * time.Second
	DefaultShutdownDelay       = 1 * time.Second
	DefaultTerminatedRetention = time.Hour
	DefaultVolumeDelay         = 2 * time.Second
)

// Options configure a Server. The zero value is usable: an in-memory emulator of
// eu-west-2 with the real clock and random IDs.
type Options struct {
	Region    string // default eu-west-2; its zones are REGIONa, REGIONb, REGIONc
	AccountID string // default 123456789012
	// StateDir holds the bbolt state file; empty keeps everything in memory.
	StateDir string
	// BootDelay is how long an instance stays pending. Zero means DefaultBootDelay;
	// negative means instances are running as soon as they launch.
	BootDelay time.Duration
	// ShutdownDelay is how long a terminating instance stays shutting-down (zero: the
	// default 1s, negative: none).
	ShutdownDelay time.Duration
	// TerminatedRetention is how long terminated instances stay describable (zero: the
	// default 1h, negative: not at all).
	TerminatedRetention time.Duration
	// VolumeDelay is how long EBS transitions take: a new volume creating, attaching,
	// detaching, deleting, a snapshot pending (zero: the default 2s, negative: none).
	VolumeDelay time.Duration
	// DefaultPolicy is the policy of a new account and after Reset (nil: allow all), e.g.
	// KarpenterControllerPolicy for the controller's key.
	DefaultPolicy *authz.Policy
	// InterruptionQueue is the SQS queue created at start that EC2's EventBridge events
	// (state changes, spot interruption warnings, rebalance, scheduled changes) go to:
	// Karpenter's INTERRUPTION_QUEUE. Empty: no queue, events go nowhere.
	InterruptionQueue string
	// KubernetesVersion is the cluster's minor ("1.37", the default): the seeded
	// EKS-optimized images are built for it and the minor before.
	KubernetesVersion string
	Clock             Clock        // default: the real clock
	IDs               IDGenerator  // default: random IDs shaped like AWS's
	Logger            *slog.Logger // default: discard. Debug: one line per request; Debug-4: bodies
}

// FlagDelay maps a delay given on a command line, where 0 means none, to Options' form,
// where 0 means the default and a negative delay none (karplab ec2 serve, cmd/fakeec2).
func FlagDelay(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func durationOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Server is the EC2 emulator: an http.Handler serving the EC2 Query API at "/" and the
// admin API under /_karplab/. It is safe for concurrent use.
type Server struct {
	region, account string
	k8sVersion      string
	zones           []zoneInfo
	shutdownDelay   time.Duration
	retention       time.Duration
	volumeDelay     time.Duration
	clock           *labClock
	ids             IDGenerator
	log             *slog.Logger
	catalog         []ec2.InstanceTypeInfo           // the model's catalog, in its order
	types           map[string]*ec2.InstanceTypeInfo // into catalog
	typeNames       []string

	persist *statefile.File

	mu        sync.RWMutex // guards everything below, and pending
	bootDelay time.Duration
	pending   []statefile.Op
	seq       uint64
	model     ec2.State
	ledger    map[string]*billing.LedgerEntry
	policy    authz.Policy
	faults    []Fault
	deadlines deadlineHeap
	throttleN map[string]uint64 // requests seen per throttle fault

	idemMu    sync.Mutex
	idem      map[string]*idempotentRecord
	idemOrder []string
	idemSeq   uint64

	auditMu    sync.RWMutex
	audit      []*trail.AuditEvent
	auditSeq   uint64
	auditReads int // disposable events in audit

	httpMu  sync.Mutex
	httpSrv *http.Server

	// The account's other services (IAM, SSM, SQS, EKS, Pricing, STS), keyed by signing
	// name, over host. persistMu guards persist for their writes, which hold none of the
	// locks above.
	host     accountHost
	services map[string]account.Service
	svc      accountServices
	bus      *eventBus
	// interruptionQueue receives EC2's events (Options.InterruptionQueue).
	interruptionQueue string
	defaultPolicy     authz.Policy
	persistMu         sync.RWMutex
	// skipMu serializes SkipTime: one walk through skipped time at a time.
	skipMu sync.Mutex
}

type zoneInfo struct {
	Name, ID string
}

// New opens (or creates) the emulator's state and returns the server. With a StateDir the
// state of an earlier run is loaded as it was; otherwise the default VPC, subnets,
// security groups and images are created.
func New(opts Options) (*Server, error) {
	s := &Server{
		region:        opts.Region,
		account:       opts.AccountID,
		bootDelay:     durationOr(opts.BootDelay, DefaultBootDelay),
		shutdownDelay: durationOr(opts.ShutdownDelay, DefaultShutdownDelay),
		retention:     durationOr(opts.TerminatedRetention, DefaultTerminatedRetention),
		volumeDelay:   durationOr(opts.VolumeDelay, DefaultVolumeDelay),
		clock:         &labClock{base: opts.Clock},
		ids:           opts.IDs,
		log:           opts.Logger,
	}
	s.host = accountHost{s}
	s.interruptionQueue = opts.InterruptionQueue
	if opts.DefaultPolicy != nil {
		s.defaultPolicy = opts.DefaultPolicy.Clone()
	}
	s.k8sVersion = opts.KubernetesVersion
	if s.k8sVersion == "" {
		s.k8sVersion = DefaultKubernetesVersion
	}
	if s.region == "" {
		s.region = DefaultRegion
	}
	if s.account == "" {
		s.account = DefaultAccountID
	}
	if s.clock.base == nil {
		s.clock.base = realClock{}
	}
	if s.ids == nil {
		s.ids = randomIDs{}
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	zoneIDs := []string{"az2", "az3", "az1"}
	short := regionShort(s.region)
	for i, l := range []string{"a", "b", "c"} {
		s.zones = append(s.zones, zoneInfo{Name: s.region + l, ID: short + "-" + zoneIDs[i]})
	}
	s.catalog = ec2.InstanceTypes()
	s.types = map[string]*ec2.InstanceTypeInfo{}
	for i := range s.catalog {
		it := &s.catalog[i]
		s.types[it.Name] = it
		s.typeNames = append(s.typeNames, it.Name)
	}
	s.resetMaps(true)
	s.idem = map[string]*idempotentRecord{}

	if opts.StateDir != "" {
		p, err := statefile.Open(opts.StateDir, allBuckets)
		if err != nil {
			return nil, err
		}
		s.persist = p
		seeded, err := s.load()
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("loading state from %s: %w", opts.StateDir, err)
		}
		if seeded {
			return s.openAccount()
		}
	}
	s.mu.Lock()
	s.seedDefaults()
	s.saveMeta()
	wait := s.flushLocked()
	s.mu.Unlock()
	if err := <-wait; err != nil {
		s.persist.Close()
		return nil, fmt.Errorf("saving the default network: %w", err)
	}
	return s.openAccount()
}

// openAccount opens the services beside EC2 once EC2's own state is loaded.
func (s *Server) openAccount() (*Server, error) {
	if err := s.openServices(); err != nil {
		s.persist.Close()
		return nil, err
	}
	s.startEvents()
	return s, nil
}

// regionShort turns eu-west-2 into euw2, as zone IDs are spelled.
func regionShort(region string) string {
	parts := strings.Split(region, "-")
	if len(parts) != 3 {
		return region
	}
	return parts[0] + parts[1][:1] + parts[2]
}

func (s *Server) resetMaps(all bool) {
	s.model.Clear(all)
	s.ledger = map[string]*billing.LedgerEntry{}
	s.deadlines = nil
	s.throttleN = map[string]uint64{}
	s.faults = nil
	s.policy = s.defaultPolicy.Clone()
}

type metaRecord struct {
	Seq      uint64       `json:"seq"`
	AuditSeq uint64       `json:"auditSeq"`
	Policy   authz.Policy `json:"policy"`
	Faults   []Fault      `json:"faults"`
	// Offset is the lab clock's lead over the base clock (SkipTime), so that a restarted
	// daemon keeps lab time.
	Offset time.Duration `json:"offset,omitempty"`
}

// load reads the state file; seeded is false for a new, empty one.
func (s *Server) load() (seeded bool, err error) {
	p := s.persist
	var meta *metaRecord
	if err := p.Load(bucketMeta, func(k, v []byte) error {
		if string(k) != "meta" {
			return nil
		}
		meta = &metaRecord{}
		return json.Unmarshal(v, meta)
	}); err != nil {
		return false, fmt.Errorf("reading meta: %w", err)
	}
	if meta == nil {
		return false, nil
	}
	s.seq, s.policy, s.faults = meta.Seq, meta.Policy, meta.Faults
	s.clock.setOffset(meta.Offset)
	errs := []error{
		statefile.LoadJSON(p, bucketVPCs, func(r *ec2.VPC) { s.model.VPCs[r.ID] = r }),
		statefile.LoadJSON(p, bucketSubnets, func(r *ec2.Subnet) { s.model.Subnets[r.ID] = r }),
		statefile.LoadJSON(p, bucketGroups, func(r *ec2.SecurityGroup) { s.model.Groups[r.ID] = r }),
		statefile.LoadJSON(p, bucketImages, func(r *ec2.Image) { s.model.Images[r.ID] = r }),
		statefile.LoadJSON(p, bucketInstances, func(r *ec2.Instance) { s.model.Instances[r.ID] = r }),
		statefile.LoadJSON(p, bucketVolumes, func(r *ec2.Volume) { s.model.Volumes[r.ID] = r }),
		statefile.LoadJSON(p, bucketENIs, func(r *ec2.NetworkInterface) { s.model.ENIs[r.ID] = r }),
		statefile.LoadJSON(p, bucketTemplates, func(r *ec2.LaunchTemplate) { s.model.Templates[r.ID] = r; s.model.LTByName[r.Name] = r.ID }),
		statefile.LoadJSON(p, bucketFleets, func(r *ec2.Fleet) { s.model.Fleets[r.ID] = r }),
		statefile.LoadJSON(p, bucketSnapshots, func(r *ec2.Snapshot) { s.model.Snapshots[r.ID] = r }),
		statefile.LoadJSON(p, bucketLedger, func(r *billing.LedgerEntry) { s.ledger[r.ResourceID] = r }),
		statefile.LoadJSON(p, bucketAudit, func(r *trail.AuditEvent) { s.audit = append(s.audit, r) }),
		s.loadIdempotency(),
	}
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	ec2.BySeq(s.audit, func(e *trail.AuditEvent) uint64 { return e.Seq })
	for _, e := range s.audit {
		if e.Seq > s.auditSeq {
			s.auditSeq = e.Seq
		}
		if e.Disposable() {
			s.auditReads++
		}
	}
	for _, n := range s.model.ENIs {
		s.model.MarkIP(n.SubnetID, n.PrivateIP)
	}
	for _, in := range s.model.Instances {
		s.scheduleDeadline(in)
		s.model.InstTags.Add(in.ID, in.Tags)
	}
	s.scheduleEBSDeadlines()
	return true, nil
}

// Close stops serving (if Serve was called: requests in flight get 5 s, then connections
// are cut), waits for the state to be written and
// closes the state file.
// SetBootDelay sets how long instances launched from now on stay pending (0: none). The
// provisioning benchmark uses it to measure the lab's overhead without the emulated boot.
func (s *Server) SetBootDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bootDelay = max(d, 0)
}

func (s *Server) Close() error {
	s.httpMu.Lock()
	srv := s.httpSrv
	s.httpMu.Unlock()
	var errs []error
	if srv != nil {
		// In-flight requests get 5 s to finish; a client that keeps a connection busy
		// beyond that is cut off rather than holding Close (and the lab's stop) hostage.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			err = srv.Close()
			if err != nil {
				errs = append(errs, fmt.Errorf("closing the listener: %w", err))
			}
		} else if err != nil {
			errs = append(errs, fmt.Errorf("shutting down the listener: %w", err))
		}
	}
	s.stopEvents() // delivers what EC2 raised before Close
	s.stopBudgetEvaluation()
	// Later requests (a handler still running without Serve's shutdown) see no persister
	// rather than a closed queue: every enqueue happens under one of these locks.
	s.mu.Lock()
	s.auditMu.Lock()
	s.idemMu.Lock()
	s.persistMu.Lock()
	s.bus = nil
	p := s.persist
	s.persist = nil
	s.persistMu.Unlock()
	s.idemMu.Unlock()
	s.auditMu.Unlock()
	s.mu.Unlock()
	if err := p.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing state: %w", err))
	}
	return errors.Join(errs...)
}

// Serve answers HTTP requests on l until Close. It returns nil after Close.
func (s *Server) Serve(l net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.httpMu.Lock()
	s.httpSrv = srv
	s.httpMu.Unlock()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving EC2 API: %w", err)
	}
	return nil
}

// Region returns the emulated region.
func (s *Server) Region() string { return s.region }

// Zones returns the emulated availability zones.
func (s *Server) Zones() []string {
	out := make([]string, len(s.zones))
	for i, z := range s.zones {
		out[i] = z.Name
	}
	return out
}

// --- store helpers (callers hold s.mu) ---

func (s *Server) nextSeq() uint64 { s.seq++; return s.seq }

// newID mints an ID not yet used by any record (an injected generator may restart).
func (s *Server) newID(prefix string) string {
	for {
		id := s.ids.NewID(prefix)
		if !s.idInUse(id) {
			return id
		}
	}
}

func (s *Server) idInUse(id string) bool {
	if s.model.Instances[id] != nil || s.model.Volumes[id] != nil || s.model.ENIs[id] != nil || s.model.Templates[id] != nil ||
		s.model.VPCs[id] != nil || s.model.Subnets[id] != nil || s.model.Groups[id] != nil || s.model.Images[id] != nil ||
		s.model.Fleets[id] != nil || s.model.Snapshots[id] != nil || s.ledger[id] != nil {
		return true
	}
	return false
}

// save records a changed record for the next flush.
func (s *Server) save(bucket, key string, v any) {
	if s.persist == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeec2: encoding %s/%s: %v", bucket, key, err)) // our own types: a bug
	}
	s.pending = append(s.pending, statefile.Op{Bucket: bucket, Key: key, Val: b})
}

func (s *Server) remove(bucket, key string) {
	if s.persist == nil {
		return
	}
	s.pending = append(s.pending, statefile.Op{Bucket: bucket, Key: key})
}

func (s *Server) saveMeta() {
	s.save(bucketMeta, "meta", metaRecord{Seq: s.seq, Policy: s.policy, Faults: s.faults, Offset: s.clock.Offset()})
}

// flushLocked queues the pending writes; the channel reports when they are on disk.
func (s *Server) flushLocked() <-chan error {
	ops := s.pending
	s.pending = nil
	return s.persist.Enqueue(ops)
}

// --- lifecycle deadlines ---

type deadline struct {
	at time.Time
	id string
}

type deadlineHeap []deadline

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(deadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// scheduleDeadline records when the instance next changes state by itself.
func (s *Server) scheduleDeadline(in *ec2.Instance) {
	var at time.Time
	switch {
	case !in.ReclaimAt.IsZero() && (in.State == ec2.StatePending || in.State == ec2.StateRunning):
		at = in.ReclaimAt
		if in.State == ec2.StatePending && in.RunningAt.Before(at) {
			at = in.RunningAt // boot first; the reclaim is scheduled again from running
		}
	case in.State == ec2.StatePending:
		at = in.RunningAt
	case in.State == ec2.StateShuttingDown:
		at = in.TerminatedAt
	case in.State == ec2.StateStopping:
		at = in.StoppedAt
	case in.State == ec2.StateTerminated:
		at = in.TerminatedAt.Add(s.retention)
	default:
		return
	}
	heap.Push(&s.deadlines, deadline{at: at, id: in.ID})
}

// advanceIfDue applies the state changes whose time has come (pending -> running,
// shutting-down -> terminated with its volumes and ENI, expiry of terminated instances).
// Changes are dated at their deadline, not at the request that noticed them.
func (s *Server) advanceIfDue(now time.Time) {
	s.mu.RLock()
	due := len(s.deadlines) > 0 && !s.deadlines[0].at.After(now)
	s.mu.RUnlock()
	if !due {
		return
	}
	s.mu.Lock()
	s.advanceLocked(now)
	s.flushLocked() // not waited for: the same changes are re-derived after a crash
	s.mu.Unlock()
}

func (s *Server) advanceLocked(now time.Time) {
	for len(s.deadlines) > 0 && !s.deadlines[0].at.After(now) {
		d := heap.Pop(&s.deadlines).(deadline)
		if s.advanceEBS(d, now) {
			continue
		}
		in := s.model.Instances[d.id]
		if in == nil {
			continue
		}
		switch in.State {
		case ec2.StatePending:
			if in.RunningAt.After(now) {
				continue // stale entry
			}
			in.State = ec2.StateRunning
			s.noteStateChange(in, ec2.StateRunning, in.RunningAt)
		case ec2.StateRunning:
			if in.ReclaimAt.IsZero() || in.ReclaimAt.After(now) {
				continue // stale entry
			}
			_, _ = s.reclaimSpotLocked(in, in.ReclaimAt) // its audit record is not waited for, as here nothing is
			continue
		case ec2.StateStopping:
			if in.StoppedAt.After(now) {
				continue
			}
			in.State = ec2.StateStopped
			s.noteStateChange(in, ec2.StateStopped, in.StoppedAt)
		case ec2.StateShuttingDown:
			if in.TerminatedAt.After(now) {
				continue
			}
			s.finishTermination(in)
		case ec2.StateTerminated:
			if in.TerminatedAt.Add(s.retention).After(now) {
				continue
			}
			delete(s.model.Instances, in.ID)
			s.model.InstTags.Remove(in.ID, in.Tags)
			s.remove(bucketInstances, in.ID)
			continue
		default:
			continue
		}
		s.save(bucketInstances, in.ID, in)
		s.scheduleDeadline(in)
	}
}

// finishTermination moves a shutting-down instance to terminated: volumes marked
// DeleteOnTermination are deleted (their billing stops), others are detached; the primary
// ENI is deleted and its address freed.
func (s *Server) finishTermination(in *ec2.Instance) {
	at := in.TerminatedAt
	in.State = ec2.StateTerminated
	s.noteStateChange(in, ec2.StateTerminated, at)
	if in.StateReasonCode == "" {
		in.StateReason = "Client.UserInitiatedShutdown: User initiated shutdown"
	}
	for _, av := range in.Volumes {
		v := s.model.Volumes[av.VolumeID]
		if v == nil {
			continue
		}
		if av.DeleteOnTermination {
			delete(s.model.Volumes, v.ID)
			s.remove(bucketVolumes, v.ID)
			s.stopLedger(v.ID, at)
			continue
		}
		v.State, v.InstanceID, v.Device, v.AttachTime = "available", "", "", time.Time{}
		v.AttachState, v.Until = "", time.Time{}
		s.save(bucketVolumes, v.ID, v)
	}
	s.releaseSecondaryENIs(in)
	if n := s.model.ENIs[in.ENIID]; n != nil {
		if n.DeleteOnTermination {
			delete(s.model.ENIs, n.ID)
			s.remove(bucketENIs, n.ID)
			s.model.FreeIP(n.SubnetID, n.PrivateIP)
		} else {
			n.Status, n.InstanceID, n.AttachmentID = "available", "", ""
			s.save(bucketENIs, n.ID, n)
		}
	}
}

func beUint64(n uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return string(b[:])
}
