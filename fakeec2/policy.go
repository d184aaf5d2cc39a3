package fakeec2

import (
	"time"

	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/ssm"
	"github.com/karplab/karplab/fakeec2/trail"
)

// The policy's rules live in fakeec2/authz; the account keeps the one in force under
// policyMu and every service asks it (EC2 through ec2Account, the others through host).

// DecodeAuthorizationMessage returns the reason behind an encoded failure message.
func (s *Server) DecodeAuthorizationMessage(encoded string) (string, bool) {
	s.auditMu.RLock()
	defer s.auditMu.RUnlock()
	return trail.DenialReason(s.audit, encoded)
}

// Policy returns the policy in force.
func (s *Server) Policy() authz.Policy {
	s.policyMu.RLock()
	defer s.policyMu.RUnlock()
	return s.policy
}

// SetPolicy replaces the policy.
func (s *Server) SetPolicy(p authz.Policy) error {
	s.policyMu.Lock()
	s.policy = p
	wait := s.saveMeta()
	s.policyMu.Unlock()
	return <-wait
}

// ec2Account is the account as EC2 meets it (service.Account).
type ec2Account struct{ s *Server }

func (a ec2Account) Now() time.Time { return a.s.clock.Now() }

func (a ec2Account) Authorize(caller, action, resource string) string {
	return a.s.host.Authorize(caller, action, resource)
}

func (a ec2Account) CheckLaunch(caller string, lc authz.Launch, live func() int) string {
	a.s.policyMu.RLock()
	defer a.s.policyMu.RUnlock()
	return a.s.policy.CheckLaunch(caller, lc, live)
}

func (a ec2Account) CheckPlacement(caller, instanceType, zone, capacityType string) string {
	a.s.policyMu.RLock()
	defer a.s.policyMu.RUnlock()
	return a.s.policy.CheckPlacement(caller, instanceType, zone, capacityType)
}

func (a ec2Account) Record(e *trail.AuditEvent) <-chan error { return a.s.recordAudit(e) }

// SendEvent puts an EventBridge document into the interruption queue; without one,
// EC2's events go nowhere, as on an account with no rule for them.
func (a ec2Account) SendEvent(doc string) error {
	if a.s.interruptionQueue == "" {
		return nil
	}
	return a.s.svc.sqs.Send(a.s.interruptionQueue, doc)
}

func (a ec2Account) PublishImages(images []ssm.EKSImage) error {
	return a.s.svc.ssm.SetEKSImages(images)
}

func (a ec2Account) LedgerChanged() { a.s.noteLedgerChange() }
