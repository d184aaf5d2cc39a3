package fakeec2

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/service"
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
	Region string // default eu-west-2; one of ec2.Regions()
	// Zones are the account's zones, names (us-east-1a) or letters (a); none: every zone of
	// the region.
	Zones     []string
	AccountID string // default 123456789012
	// DiscoveryTag is the value of karpenter.sh/discovery on the account's subnets and node
	// security group, and NAME in its seeded roles KarpenterNodeRole-NAME and
	// KarpenterControllerRole-NAME: the cluster's name, as Karpenter's getting-started guide
	// sets an account up. Default: the course's ziba-production.
	DiscoveryTag string
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
	Clock             Clock               // default: the real clock
	IDs               account.IDGenerator // default: random IDs shaped like AWS's
	Logger            *slog.Logger        // default: discard. Debug: one line per request; Debug-4: bodies
}

// FlagDelay maps a delay given on a command line, where 0 means none, to Options' form,
// where 0 means the default and a negative delay none (karplab ec2 serve, fakeec2/container/emulator).
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

// Server is the lab's AWS account: one http.Handler serving every service's API at "/"
// (EC2 by default, the others by SigV4 service) and the admin API under /_karplab/. It
// holds what the services share (the clock, IDs, state file, policy and audit trail),
// opens EC2 (fakeec2/ec2/service) and the other services over it, and routes to them. It
// is safe for concurrent use.
type Server struct {
	region, account string
	discovery       string
	clock           *labClock
	ids             account.IDGenerator
	log             *slog.Logger
	ec2             *service.Service

	// persistMu guards persist for the account's own writes (the audit trail, its meta
	// record, the services'); EC2 holds the file under its own lock.
	persistMu sync.RWMutex
	persist   *statefile.File

	policyMu      sync.RWMutex // guards policy and the account's meta record
	policy        authz.Policy
	defaultPolicy authz.Policy

	auditMu    sync.RWMutex
	audit      []*trail.AuditEvent
	auditSeq   uint64
	auditReads int // disposable events in audit

	httpMu  sync.Mutex
	httpSrv *http.Server

	// The account's services beside EC2 (IAM, SSM, SQS, EKS, Pricing, STS, Budgets),
	// keyed by signing name, over host.
	host     accountHost
	services map[string]account.Service
	svc      accountServices
	// interruptionQueue receives EC2's events (Options.InterruptionQueue).
	interruptionQueue string
	// skipMu serializes SkipTime and Reset: one walk through skipped time at a time.
	skipMu sync.Mutex
}

// New opens (or creates) the account's state and returns the server. With a StateDir the
// state of an earlier run is loaded as it was; otherwise EC2 starts with the default VPC,
// subnets, security groups and images.
func New(opts Options) (*Server, error) {
	s := &Server{
		region:            opts.Region,
		account:           opts.AccountID,
		clock:             &labClock{base: opts.Clock},
		ids:               opts.IDs,
		log:               opts.Logger,
		interruptionQueue: opts.InterruptionQueue,
	}
	s.host = accountHost{s}
	if opts.DefaultPolicy != nil {
		s.defaultPolicy = opts.DefaultPolicy.Clone()
	}
	s.policy = s.defaultPolicy.Clone()
	if s.region == "" {
		s.region = DefaultRegion
	}
	if s.account == "" {
		s.account = DefaultAccountID
	}
	s.discovery = opts.DiscoveryTag
	if s.discovery == "" {
		s.discovery = service.DefaultDiscoveryTag
	}
	region, err := ec2.LookupRegion(s.region)
	if err == nil {
		region, err = region.SelectZones(opts.Zones)
	}
	if err != nil {
		return nil, err
	}
	if s.clock.base == nil {
		s.clock.base = realClock{}
	}
	if s.ids == nil {
		s.ids = account.RandomIDs{}
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.StateDir != "" {
		p, err := statefile.Open(opts.StateDir, append([]string{bucketAudit}, service.Buckets...))
		if err != nil {
			return nil, err
		}
		s.persist = p
		if err := s.load(); err != nil {
			p.Close()
			return nil, fmt.Errorf("loading state from %s: %w", opts.StateDir, err)
		}
	}
	s.ec2, err = service.New(service.Config{
		Region: s.region, Zones: region.Zones, DiscoveryTag: s.discovery,
		AccountID: s.account, KubernetesVersion: opts.KubernetesVersion,
		BootDelay:           durationOr(opts.BootDelay, DefaultBootDelay),
		ShutdownDelay:       durationOr(opts.ShutdownDelay, DefaultShutdownDelay),
		TerminatedRetention: durationOr(opts.TerminatedRetention, DefaultTerminatedRetention),
		VolumeDelay:         durationOr(opts.VolumeDelay, DefaultVolumeDelay),
		IDs:                 s.ids, Log: s.log, State: s.persist,
	}, ec2Account{s})
	if err != nil {
		s.persist.Close()
		if opts.StateDir != "" {
			return nil, fmt.Errorf("loading state from %s: %w", opts.StateDir, err)
		}
		return nil, err
	}
	if err := s.openServices(); err != nil {
		s.persist.Close()
		return nil, err
	}
	s.ec2.StartEvents()
	return s, nil
}

// metaRecord is the account's own record in the meta bucket.
type metaRecord struct {
	Policy authz.Policy `json:"policy"`
	// Offset is the lab clock's lead over the base clock (SkipTime), so that a restarted
	// daemon keeps lab time.
	Offset time.Duration `json:"offset,omitempty"`
}

// metaKey is the account's record; EC2's is "meta", which before the account had its own
// also held the policy and the offset, so load falls back to it.
const metaKey = "account"

// load reads the account's record and audit trail.
func (s *Server) load() error {
	p := s.persist
	var meta, legacy *metaRecord
	if err := p.Load(service.BucketMeta, func(k, v []byte) error {
		switch string(k) {
		case metaKey:
			meta = &metaRecord{}
			return json.Unmarshal(v, meta)
		case "meta":
			legacy = &metaRecord{}
			return json.Unmarshal(v, legacy)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("reading meta: %w", err)
	}
	if meta == nil && legacy != nil {
		// EC2 drops these fields from its record when it next writes it: keep them first.
		s.policy = legacy.Policy
		s.clock.setOffset(legacy.Offset)
		if err := <-s.saveMeta(); err != nil {
			return fmt.Errorf("saving the account's record: %w", err)
		}
	}
	if meta != nil {
		s.policy = meta.Policy
		s.clock.setOffset(meta.Offset)
	}
	if err := statefile.LoadJSON(p, bucketAudit, func(r *trail.AuditEvent) { s.audit = append(s.audit, r) }); err != nil {
		return err
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
	return nil
}

// saveMeta writes the account's record; callers hold policyMu. The channel yields once it
// is on disk.
func (s *Server) saveMeta() <-chan error {
	b, _ := json.Marshal(metaRecord{Policy: s.policy, Offset: s.clock.Offset()}) // plain data: cannot fail
	s.persistMu.RLock()
	defer s.persistMu.RUnlock()
	return s.persist.Enqueue([]statefile.Op{{Bucket: service.BucketMeta, Key: metaKey, Val: b}})
}

// SetBootDelay sets how long instances launched from now on stay pending (0: none). The
// provisioning benchmark uses it to measure the lab's overhead without the emulated boot.
func (s *Server) SetBootDelay(d time.Duration) { s.ec2.SetBootDelay(d) }

// Close stops serving (if Serve was called: requests in flight get 5 s, then connections
// are cut), waits for the state to be written and closes the state file.
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
	s.ec2.StopEvents() // delivers what EC2 raised before Close
	s.stopBudgetEvaluation()
	// Later requests (a handler still running without Serve's shutdown) see no state file
	// rather than a closed queue: every enqueue happens under one of these locks.
	s.ec2.Detach()
	s.auditMu.Lock()
	s.persistMu.Lock()
	p := s.persist
	s.persist = nil
	s.persistMu.Unlock()
	s.auditMu.Unlock()
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
func (s *Server) Zones() []string { return s.ec2.Zones() }

func beUint64(n uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return string(b[:])
}
