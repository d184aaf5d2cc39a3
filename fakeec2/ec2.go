package fakeec2

import (
	"time"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2/service"
	"github.com/karplab/karplab/fakeec2/trail"
)

// EC2 is fakeec2/ec2/service. What the lab asks of it through the account (the admin API,
// the daemon, the labs) is named here, so that callers know one package: the account.

// The names of EC2's the admin API and its callers speak.
type (
	Fault            = service.Fault
	EventKind        = service.EventKind
	PublishedImage   = service.PublishedImage
	Import           = service.Import
	ImportedInstance = service.ImportedInstance
	ImportError      = service.ImportError
)

const (
	FaultInsufficientCapacity = service.FaultInsufficientCapacity
	FaultLeak                 = service.FaultLeak
	FaultLeakENIs             = service.FaultLeakENIs
	FaultLatency              = service.FaultLatency
	FaultThrottle             = service.FaultThrottle

	EventRebalance       = service.EventRebalance
	EventScheduledChange = service.EventScheduledChange
	EventSpotWarning     = service.EventSpotWarning
	DefaultSpotWarning   = service.DefaultSpotWarning

	AWSServiceCaller           = service.AWSServiceCaller
	ActionBidEvicted           = service.ActionBidEvicted
	ActionSpotWarning          = service.ActionSpotWarning
	StateReasonSpotTermination = service.StateReasonSpotTermination

	TagLaunchTemplateID      = service.TagLaunchTemplateID
	TagLaunchTemplateVersion = service.TagLaunchTemplateVersion
	TagFleetID               = service.TagFleetID

	DefaultKubernetesVersion = service.DefaultKubernetesVersion
)

// Actions lists the EC2 actions the emulator answers, sorted.
func Actions() []string { return service.Actions() }

// InterruptSpot warns and then reclaims spot instances, as EC2 does (service.InterruptSpot).
func (s *Server) InterruptSpot(ids []string, warning time.Duration) ([]trail.AuditEvent, error) {
	return s.ec2.InterruptSpot(ids, warning)
}

// RaiseEvent makes EC2 (or AWS Health) send kind's event for the instances.
func (s *Server) RaiseEvent(kind EventKind, ids []string) ([]trail.AuditEvent, error) {
	return s.ec2.RaiseEvent(kind, ids)
}

// AppendConsoleOutput adds lines an instance's OS printed, for GetConsoleOutput.
func (s *Server) AppendConsoleOutput(instanceID, text string) error {
	return s.ec2.AppendConsoleOutput(instanceID, text)
}

// PublishRelease publishes a new release of the EKS-optimized AMIs and their SSM
// parameters (service.PublishRelease).
func (s *Server) PublishRelease(release string) ([]PublishedImage, error) {
	return s.ec2.PublishRelease(release)
}

// Import brings a captured account's network, images and running instances in, with their
// real IDs, all or nothing (service.Import).
func (s *Server) Import(imp Import) error { return s.ec2.Import(imp) }

// CheckImport lists what Import would refuse of imp, changing nothing.
func (s *Server) CheckImport(imp Import) []string { return s.ec2.CheckImport(imp) }

// Has reports whether the account's EC2 holds a resource with this ID.
func (s *Server) Has(id string) bool { return s.ec2.Has(id) }

// Billing returns every ledger entry with its cost accrued until now, oldest first.
func (s *Server) Billing() billing.Billing { return s.ec2.Billing() }

// CostByTag groups the ledger by the value of tag key.
func (s *Server) CostByTag(key string) billing.CostReport { return s.ec2.CostByTag(key) }

// Faults returns the faults in force; SetFault adds or replaces one; ClearFaults removes
// one, or all when id is "".
func (s *Server) Faults() []Fault                 { return s.ec2.Faults() }
func (s *Server) SetFault(f Fault) (Fault, error) { return s.ec2.SetFault(f) }
func (s *Server) ClearFaults(id string) error     { return s.ec2.ClearFaults(id) }
