package service

import (
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// The policy's rules live in fakeec2/authz and the policy in force is the account's;
// here EC2 asks it and records denials in the call's audit event.

// authorizeAction applies DenyActions and AllowActions to an EC2 call.
func (s *Service) authorizeAction(c *call) *wire.Error {
	if reason := s.acct.Authorize(c.caller, "ec2:"+c.action, "*"); reason != "" {
		return s.deny(c, reason)
	}
	return nil
}

// checkLaunch returns why the policy forbids the request as a whole, or "".
// Callers hold s.mu.
func (s *Service) checkLaunch(caller string, lc authz.Launch) string {
	return s.acct.CheckLaunch(caller, lc, func() int {
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
func (s *Service) checkPlacement(caller, instanceType, zone, capacityType string) string {
	return s.acct.CheckPlacement(caller, instanceType, zone, capacityType)
}

// deny records the decoded reason in the call's audit event and returns the
// UnauthorizedOperation error with the encoded message, as AWS words it.
func (s *Service) deny(c *call, reason string) *wire.Error {
	encoded := authz.EncodeMessage(c.requestID, reason)
	c.event.DenialReason = reason
	c.event.EncodedMessage = encoded
	return wire.Unauthorized(encoded)
}
