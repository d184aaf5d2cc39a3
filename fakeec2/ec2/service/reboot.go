package service

import (
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// --- RebootInstances ---

// rebootInstances answers as EC2 does: every ID must exist and be running; a reboot
// keeps the instance running (the lab models no boot, so nothing changes).
func (s *Service) rebootInstances(c *call) (wire.Response, *wire.Error) {
	ids := c.q.Strs("InstanceId")
	if len(ids) == 0 {
		return nil, wire.Missing("InstanceId")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.checkInstanceAction(ids, "RebootInstances"); e != nil {
		return nil, e
	}
	if c.dryRun {
		return nil, wire.DryRun()
	}
	return &wire.PlainResponse{Return: true}, nil
}
