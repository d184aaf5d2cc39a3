package fakeec2

import (
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
	"github.com/karplab/karplab/fakeec2/trail"
)

// The policy's rules live in fakeec2/authz; here the Server applies the one in force,
// under s.mu, and records denials in the audit trail.

// authorizeAction applies DenyActions and AllowActions to an EC2 call.
func (s *Server) authorizeAction(c *call) *wire.Error {
	s.mu.RLock()
	reason := s.policy.Authorize(c.caller, "ec2:"+c.action, "*")
	s.mu.RUnlock()
	if reason != "" {
		return s.deny(c, reason)
	}
	return nil
}

// checkLaunch returns why the policy forbids the request as a whole, or "".
// Callers hold s.mu.
func (s *Server) checkLaunch(caller string, lc authz.Launch) string {
	return s.policy.CheckLaunch(caller, lc, func() int {
		live := 0
		for _, in := range s.model.Instances {
			if in.State == ec2.StatePending || in.State == ec2.StateRunning {
				live++
			}
		}
		return live
	})
}

// checkPlacement returns why the policy forbids launching instanceType in zone as
// capacityType, or "". Callers hold s.mu.
func (s *Server) checkPlacement(caller, instanceType, zone, capacityType string) string {
	return s.policy.CheckPlacement(caller, instanceType, zone, capacityType)
}

// deny records the decoded reason in the call's audit event and returns the
// UnauthorizedOperation error with the encoded message, as AWS words it.
func (s *Server) deny(c *call, reason string) *wire.Error {
	encoded := authz.EncodeMessage(c.requestID, reason)
	c.event.DenialReason = reason
	c.event.EncodedMessage = encoded
	return wire.Unauthorized(encoded)
}

// DecodeAuthorizationMessage returns the reason behind an encoded failure message.
func (s *Server) DecodeAuthorizationMessage(encoded string) (string, bool) {
	s.auditMu.RLock()
	defer s.auditMu.RUnlock()
	return trail.DenialReason(s.audit, encoded)
}

// Policy returns the policy in force.
func (s *Server) Policy() authz.Policy {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.policy
}

// SetPolicy replaces the policy.
func (s *Server) SetPolicy(p authz.Policy) error {
	s.mu.Lock()
	s.policy = p
	s.saveMeta()
	wait := s.flushLocked()
	s.mu.Unlock()
	return <-wait
}
