package service

import (
	"github.com/karplab/karplab/fakeec2/ec2"
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
	if e := s.checkInstanceIDs(ids); e != nil {
		return nil, e
	}
	for _, id := range ids {
		if e := wire.Refuse(ec2.InstanceRefusals, "RebootInstances", s.model.Instances[id]); e != nil {
			return nil, e
		}
	}
	if c.dryRun {
		return nil, wire.DryRun()
	}
	return &wire.PlainResponse{Return: true}, nil
}
