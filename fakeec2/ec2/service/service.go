package service

import (
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
