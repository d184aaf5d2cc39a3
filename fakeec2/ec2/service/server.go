package service

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ssm"
	"github.com/karplab/karplab/fakeec2/statefile"
	"github.com/karplab/karplab/fakeec2/trail"
)

// Config sets up EC2's service. Its delays are resolved: zero means none.
type Config struct {
	Region, AccountID string
	// Zones are the account's zones, a subset of the region's (nil: every zone of it).
	Zones []ec2.Zone
	// ClusterName is the EKS cluster the account is set up for: its subnets and node
	// security group carry karpenter.sh/discovery=DiscoveryTag. Empty: DefaultDiscoveryTag.
	DiscoveryTag string
	// KubernetesVersion is the cluster's minor ("1.37"): the seeded EKS-optimized images
	// are built for it and the minor before. Empty: DefaultKubernetesVersion.
	KubernetesVersion string
	// BootDelay is how long an instance stays pending; ShutdownDelay how long a
	// terminating one stays shutting-down; TerminatedRetention how long terminated
	// instances stay describable; VolumeDelay how long EBS transitions take.
	BootDelay, ShutdownDelay, TerminatedRetention, VolumeDelay time.Duration

	IDs account.IDGenerator
	Log *slog.Logger // nil: discard
	// State is the account's state file; nil keeps EC2's records in memory.
	State *statefile.File
}

// Account is what EC2 meets of the rest of the lab's account: the shared clock, policy
// and audit trail, and the services AWS's EC2 reaches into.
type Account interface {
	Now() time.Time
	// Authorize, CheckLaunch and CheckPlacement apply the policy in force and return why
	// it forbids the call, or "". EC2 calls CheckLaunch and CheckPlacement under its lock.
	Authorize(caller, action, resource string) string
	CheckLaunch(caller string, lc authz.Launch, live func() int) string
	CheckPlacement(caller, instanceType, zone, capacityType string) string
	// Record appends an event to the audit trail; the channel yields once it is on disk.
	Record(e *trail.AuditEvent) <-chan error
	// SendEvent delivers an EventBridge document to the interruption queue (if any).
	SendEvent(doc string) error
	// PublishImages makes SSM's public EKS AMI parameters name images.
	PublishImages(images []ssm.EKSImage) error
	// LedgerChanged asks AWS Budgets to evaluate soon. EC2 calls it under its lock, so it
	// must not block.
	LedgerChanged()
}

// Service is EC2 in the lab's account: its records (fakeec2/ec2's model) under one lock,
// the handlers that parse a request with wire, act on the model and render the answer,
// the instances' and volumes' timers, the billing ledger, the faults and ClientToken
// idempotency. It is safe for concurrent use.
type Service struct {
	region, account string
	k8sVersion      string
	zones           []zoneInfo
	discovery       string
	shutdownDelay   time.Duration
	retention       time.Duration
	volumeDelay     time.Duration
	acct            Account
	ids             account.IDGenerator
	log             *slog.Logger
	catalog         []ec2.InstanceTypeInfo           // the model's catalog, in its order
	types           map[string]*ec2.InstanceTypeInfo // into catalog
	typeNames       []string

	mu        sync.RWMutex    // guards everything below, and pending
	persist   *statefile.File // also read under idemMu: Detach clears it under both
	bootDelay time.Duration
	pending   []statefile.Op
	seq       uint64
	model     ec2.State
	ledger    map[string]*billing.LedgerEntry
	faults    []Fault
	deadlines deadlineHeap
	throttleN map[string]uint64 // requests seen per throttle fault
	bus       *eventBus

	idemMu    sync.Mutex
	idem      map[string]*idempotentRecord
	idemOrder []string
	idemSeq   uint64
}

type zoneInfo struct {
	Name, ID string
}

// New opens EC2's records from cfg.State (or starts empty) and returns the service. An
// account seen for the first time gets the default VPC, subnets, security groups and
// images. Events reach acct once Start is called.
func New(cfg Config, acct Account) (*Service, error) {
	s := &Service{
		region:        cfg.Region,
		account:       cfg.AccountID,
		k8sVersion:    cfg.KubernetesVersion,
		bootDelay:     cfg.BootDelay,
		shutdownDelay: cfg.ShutdownDelay,
		retention:     cfg.TerminatedRetention,
		volumeDelay:   cfg.VolumeDelay,
		acct:          acct,
		ids:           cfg.IDs,
		log:           cfg.Log,
		persist:       cfg.State,
	}
	if s.k8sVersion == "" {
		s.k8sVersion = DefaultKubernetesVersion
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	region, err := ec2.LookupRegion(s.region)
	if err != nil {
		return nil, err
	}
	zones := cfg.Zones
	if len(zones) == 0 {
		zones = region.Zones
	}
	for _, z := range zones {
		s.zones = append(s.zones, zoneInfo{Name: z.Name, ID: z.ID})
	}
	s.discovery = cfg.DiscoveryTag
	if s.discovery == "" {
		s.discovery = DefaultDiscoveryTag
	}
	s.catalog = ec2.Catalog(s.region)
	s.types = map[string]*ec2.InstanceTypeInfo{}
	for i := range s.catalog {
		it := &s.catalog[i]
		s.types[it.Name] = it
		s.typeNames = append(s.typeNames, it.Name)
	}
	s.resetMaps(true)
	s.idem = map[string]*idempotentRecord{}
	if s.persist != nil {
		seeded, err := s.load()
		if err != nil {
			return nil, err
		}
		if seeded {
			return s, nil
		}
	}
	s.mu.Lock()
	s.seedDefaults()
	s.saveMeta()
	wait := s.flushLocked()
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return nil, fmt.Errorf("saving the default network: %w", err)
	}
	return s, nil
}

func (s *Service) resetMaps(all bool) {
	s.model.Clear(all)
	s.ledger = map[string]*billing.LedgerEntry{}
	s.deadlines = nil
	s.throttleN = map[string]uint64{}
	s.faults = nil
}

// metaRecord is EC2's own counters under the meta bucket's "meta" key. Records written
// before the account kept its own ("account") also hold the policy and the clock's lead,
// which the account reads from here once.
type metaRecord struct {
	Seq    uint64  `json:"seq"`
	Faults []Fault `json:"faults"`
}

// load reads EC2's records; seeded is false for a new, empty state file.
func (s *Service) load() (seeded bool, err error) {
	p := s.persist
	var meta *metaRecord
	if err := p.Load(BucketMeta, func(k, v []byte) error {
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
	s.seq, s.faults = meta.Seq, meta.Faults
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
		s.loadIdempotency(),
	}
	if err := errors.Join(errs...); err != nil {
		return false, err
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

// SetBootDelay sets how long instances launched from now on stay pending (0: none). The
// provisioning benchmark uses it to measure the lab's overhead without the emulated boot.
func (s *Service) SetBootDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bootDelay = max(d, 0)
}

// Detach stops EC2's writes to the state file, which the account then closes: a handler
// still running after that changes memory only.
func (s *Service) Detach() {
	s.mu.Lock()
	s.idemMu.Lock()
	s.bus = nil
	s.persist = nil
	s.idemMu.Unlock()
	s.mu.Unlock()
}

// Reset wipes instances, volumes, ENIs, launch templates, fleets, the ledger, the faults,
// the ClientTokens and the published releases, and waits for that to be on disk. The
// default VPC, subnets, security groups and images stay, with their IDs.
func (s *Service) Reset() error {
	s.mu.Lock()
	for _, b := range []struct {
		name string
		keys []string
	}{
		{bucketInstances, sortedKeys(s.model.Instances)}, {bucketVolumes, sortedKeys(s.model.Volumes)},
		{bucketENIs, sortedKeys(s.model.ENIs)}, {bucketTemplates, sortedKeys(s.model.Templates)},
		{bucketFleets, sortedKeys(s.model.Fleets)}, {bucketLedger, sortedKeys(s.ledger)},
	} {
		for _, k := range b.keys {
			s.remove(b.name, k)
		}
	}
	s.resetIdempotency()
	s.resetMaps(false)
	s.removePublished()
	s.saveMeta()
	wait := s.flushLocked()
	s.mu.Unlock()
	return <-wait
}

// Zones returns the emulated availability zones.
func (s *Service) Zones() []string {
	out := make([]string, len(s.zones))
	for i, z := range s.zones {
		out[i] = z.Name
	}
	return out
}

// InstanceCount counts the instances EC2 knows, terminated ones included.
func (s *Service) InstanceCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.model.Instances)
}

// --- store helpers (callers hold s.mu) ---

func (s *Service) nextSeq() uint64 { s.seq++; return s.seq }

// newID mints an ID not yet used by any record (an injected generator may restart).
func (s *Service) newID(prefix string) string {
	for {
		id := s.ids.NewID(prefix)
		if !s.idInUse(id) {
			return id
		}
	}
}

func (s *Service) idInUse(id string) bool {
	if s.model.Instances[id] != nil || s.model.Volumes[id] != nil || s.model.ENIs[id] != nil || s.model.Templates[id] != nil ||
		s.model.VPCs[id] != nil || s.model.Subnets[id] != nil || s.model.Groups[id] != nil || s.model.Images[id] != nil ||
		s.model.Fleets[id] != nil || s.model.Snapshots[id] != nil || s.ledger[id] != nil {
		return true
	}
	return false
}

// save records a changed record for the next flush.
func (s *Service) save(bucket, key string, v any) {
	if s.persist == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeec2: encoding %s/%s: %v", bucket, key, err)) // our own types: a bug
	}
	s.pending = append(s.pending, statefile.Op{Bucket: bucket, Key: key, Val: b})
}

func (s *Service) remove(bucket, key string) {
	if s.persist == nil {
		return
	}
	s.pending = append(s.pending, statefile.Op{Bucket: bucket, Key: key})
}

func (s *Service) saveMeta() {
	s.save(BucketMeta, "meta", metaRecord{Seq: s.seq, Faults: s.faults})
}

// flushLocked queues the pending writes; the channel reports when they are on disk.
func (s *Service) flushLocked() <-chan error {
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
func (s *Service) scheduleDeadline(in *ec2.Instance) {
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
func (s *Service) advanceIfDue(now time.Time) {
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

// AdvanceTo fires the instance and volume timers due by now (a skip of lab time).
func (s *Service) AdvanceTo(now time.Time) { s.advanceIfDue(now) }

func (s *Service) advanceLocked(now time.Time) {
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
func (s *Service) finishTermination(in *ec2.Instance) {
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
