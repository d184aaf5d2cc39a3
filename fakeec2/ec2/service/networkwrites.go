package service

import (
	"slices"
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// The VPC's writes: CreateSecurityGroup, DeleteSecurityGroup and DeleteSubnet. A group or
// subnet that a network interface still uses is refused (groupRefusals, subnetRefusals),
// as AWS refuses it: an instance's primary interface counts, a terminated instance's not.

var groupTagTypes = map[string]bool{"security-group": true}

func (s *Service) createSecurityGroup(c *call) (wire.Response, *wire.Error) {
	name, desc, vpcID := c.q.Str("GroupName"), c.q.Str("GroupDescription"), c.q.Str("VpcId")
	switch {
	case name == "":
		return nil, wire.Missing("GroupName")
	case desc == "":
		return nil, wire.Missing("GroupDescription")
	case len(name) > 255 || len(desc) > 255:
		return nil, wire.InvalidValue("Value for parameter GroupName and GroupDescription must be at most 255 characters")
	case strings.HasPrefix(strings.ToLower(name), "sg-"):
		return nil, wire.InvalidValue("Group names may not be in the format sg-*.")
	}
	tags, err := specTags(c.q, groupTagTypes)
	if err != nil {
		return nil, err
	}
	var resp *wire.CreateSecurityGroupResponse
	aerr := s.mutate(c, func() *wire.Error {
		v, e := s.vpcOrDefault(vpcID)
		if e != nil {
			return e
		}
		for _, g := range s.model.Groups {
			if g.VpcID == v.ID && g.Name == name {
				return wire.BadRequest("InvalidGroup.Duplicate", "The security group '%s' already exists for VPC '%s'", name, v.ID)
			}
		}
		if c.dryRun {
			return wire.DryRun()
		}
		g := &ec2.SecurityGroup{Seq: s.nextSeq(), ID: s.newID("sg"), Name: name, Description: desc, VpcID: v.ID,
			Tags: ec2.SetTags(nil, tags["security-group"])}
		s.model.Groups[g.ID] = g
		s.save(bucketGroups, g.ID, g)
		c.event.Created = append(c.event.Created, g.ID)
		resp = s.env().CreatedSecurityGroup(g)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// vpcOrDefault is the VPC named, or the default VPC when none is. Callers hold s.mu.
func (s *Service) vpcOrDefault(id string) (*ec2.VPC, *wire.Error) {
	if id != "" {
		if v := s.model.VPCs[id]; v != nil {
			return v, nil
		}
		return nil, wire.BadRequest("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", id)
	}
	if v := s.defaultVPC(); v != nil {
		return v, nil
	}
	return nil, wire.BadRequest("VPCIdNotSpecified", "No default VPC for this user")
}

// defaultVPC is the account's default VPC (nil when it has none). Callers hold s.mu.
func (s *Service) defaultVPC() *ec2.VPC {
	for _, v := range s.model.VPCs {
		if v.IsDefault {
			return v
		}
	}
	return nil
}

func (s *Service) deleteSecurityGroup(c *call) (wire.Response, *wire.Error) {
	id, name := c.q.Str("GroupId"), c.q.Str("GroupName")
	if id == "" && name == "" {
		return nil, wire.Missing("GroupId")
	}
	resp := &wire.DeleteSecurityGroupResponse{Return: true}
	aerr := s.mutate(c, func() *wire.Error {
		g, e := s.groupToDelete(id, name)
		if e != nil {
			return e
		}
		use := ec2.GroupUse{Group: g, Interfaces: s.interfacesWhere(func(n *ec2.NetworkInterface) bool { return slices.Contains(n.Groups, g.ID) })}
		if e := wire.Refuse(ec2.GroupRefusals, "DeleteSecurityGroup", use); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		delete(s.model.Groups, g.ID)
		s.remove(bucketGroups, g.ID)
		c.event.Terminated = append(c.event.Terminated, g.ID)
		resp.GroupID = g.ID
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// groupToDelete finds DeleteSecurityGroup's group: by ID, or by name in the default VPC.
// Callers hold s.mu.
func (s *Service) groupToDelete(id, name string) (*ec2.SecurityGroup, *wire.Error) {
	if id != "" {
		if !validID(id, "sg") {
			return nil, wire.BadRequest("InvalidGroupId.Malformed", "Invalid id: \"%s\" (expecting \"sg-...\")", id)
		}
		if g := s.model.Groups[id]; g != nil {
			return g, nil
		}
		return nil, wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist", id)
	}
	v, e := s.vpcOrDefault("")
	if e != nil {
		return nil, e
	}
	for _, g := range s.model.Groups {
		if g.VpcID == v.ID && g.Name == name {
			return g, nil
		}
	}
	return nil, wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist in default VPC '%s'", name, v.ID)
}

func (s *Service) deleteSubnet(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("SubnetId")
	if id == "" {
		return nil, wire.Missing("SubnetId")
	}
	aerr := s.mutate(c, func() *wire.Error {
		sn := s.model.Subnets[id]
		if sn == nil {
			return wire.BadRequest(wire.CodeInvalidSubnetIDNotFound, "The subnet ID '%s' does not exist", id)
		}
		use := ec2.SubnetUse{Subnet: sn, Interfaces: s.interfacesWhere(func(n *ec2.NetworkInterface) bool { return n.SubnetID == id })}
		if e := wire.Refuse(ec2.SubnetRefusals, "DeleteSubnet", use); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		delete(s.model.Subnets, id)
		delete(s.model.IPUsed, id)
		delete(s.model.IPNext, id)
		s.remove(bucketSubnets, id)
		c.event.Terminated = append(c.event.Terminated, id)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}

// interfacesWhere are the IDs of the network interfaces for which keep holds, sorted.
// Callers hold s.mu.
func (s *Service) interfacesWhere(keep func(*ec2.NetworkInterface) bool) []string {
	var ids []string
	for id, n := range s.model.ENIs {
		if keep(n) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
