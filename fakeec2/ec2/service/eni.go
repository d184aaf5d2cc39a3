package service

import (
	"net/netip"
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// ENI lifecycle: CreateNetworkInterface, AttachNetworkInterface, DetachNetworkInterface,
// DeleteNetworkInterface. An interface holds its subnet address from creation to
// deletion, attached or not; the leak-enis fault makes a terminated instance leave its
// secondary interfaces behind, as VPC CNI leaks do.

var eniTagTypes = map[string]bool{"network-interface": true}

func errENINotFound(id string) *wire.Error {
	if !validID(id, "eni") {
		return wire.BadRequest("InvalidNetworkInterfaceID.Malformed", "Invalid id: \"%s\" (expecting \"eni-...\")", id)
	}
	return wire.BadRequest(wire.CodeInvalidNetworkInterfaceNotFound, "The networkInterface ID '%s' does not exist", id)
}

func (s *Service) createNetworkInterface(c *call) (wire.Response, *wire.Error) {
	snID := c.q.Str("SubnetId")
	if snID == "" {
		return nil, wire.Missing("SubnetId")
	}
	tags, err := specTags(c.q, eniTagTypes)
	if err != nil {
		return nil, err
	}
	typ := c.q.Str("InterfaceType")
	if typ == "" {
		typ = "interface"
	}
	if typ != "interface" && typ != "efa" && typ != "efa-only" && typ != "trunk" {
		return nil, wire.InvalidValue("Value (%s) for parameter InterfaceType is invalid. Valid values: efa, efa-only, trunk", typ)
	}
	want, groups := c.q.Str("PrivateIpAddress"), c.q.Strs("SecurityGroupId")
	resp := &wire.CreateNetworkInterfaceResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		sn := s.model.Subnets[snID]
		if sn == nil {
			return wire.BadRequest(wire.CodeInvalidSubnetIDNotFound, "The subnet ID '%s' does not exist", snID)
		}
		for _, g := range groups {
			sg := s.model.Groups[g]
			if sg == nil {
				return wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist", g)
			}
			if sg.VpcID != sn.VpcID {
				return wire.BadRequest(wire.CodeInvalidParameter, "Security group %s and subnet %s belong to different networks.", g, sn.ID)
			}
		}
		if len(groups) == 0 {
			if def := s.model.DefaultGroup(sn.VpcID); def != nil {
				groups = []string{def.ID}
			}
		}
		if want != "" {
			off, ok := s.model.IPOffset(sn.ID, want)
			_, size := ec2.SubnetRange(sn.CIDR)
			if _, perr := netip.ParseAddr(want); perr != nil || !ok || off < 4 || off > size-2 {
				return wire.InvalidValue("Address %s does not fall within the subnet's address range", want)
			}
			if s.model.IPUsed[sn.ID][off] {
				return wire.BadRequest("InvalidIPAddress.InUse", "Address %s is in use.", want)
			}
		} else if s.model.FreeIPCount(sn) < 1 {
			return wire.BadRequest("InsufficientFreeAddressesInSubnet", "There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", sn.ID)
		}
		if c.dryRun {
			return wire.DryRun()
		}
		ip := want
		if ip == "" {
			ip, _ = s.model.AllocIP(sn)
		} else {
			s.model.MarkIP(sn.ID, ip)
		}
		n := &ec2.NetworkInterface{Seq: s.nextSeq(), ID: s.newID("eni"), SubnetID: sn.ID, VpcID: sn.VpcID, Zone: sn.Zone,
			ZoneID: sn.ZoneID, PrivateIP: ip, PrivateDNS: s.privateDNS(ip), Description: c.q.Str("Description"),
			Groups: groups, Status: "available", InterfaceType: typ, Tags: ec2.SetTags(nil, tags["network-interface"])}
		n.MAC = macFor(n.ID)
		s.model.ENIs[n.ID] = n
		s.save(bucketENIs, n.ID, n)
		c.event.Created = append(c.event.Created, n.ID)
		resp.Interface = s.env().NetworkInterface(n)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

func (s *Service) attachNetworkInterface(c *call) (wire.Response, *wire.Error) {
	id, iid := c.q.Str("NetworkInterfaceId"), c.q.Str("InstanceId")
	switch {
	case id == "":
		return nil, wire.Missing("NetworkInterfaceId")
	case iid == "":
		return nil, wire.Missing("InstanceId")
	case !c.q.Has("DeviceIndex"):
		return nil, wire.Missing("DeviceIndex")
	}
	idx, _, err := c.q.Int("DeviceIndex")
	if err != nil {
		return nil, err
	}
	if idx < 0 {
		return nil, wire.InvalidValue("Value (%d) for parameter deviceIndex is invalid.", idx)
	}
	resp := &wire.AttachNetworkInterfaceResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		n := s.model.ENIs[id]
		if n == nil {
			return errENINotFound(id)
		}
		if e := s.checkInstanceIDs([]string{iid}); e != nil {
			return e
		}
		in := s.model.Instances[iid]
		a := ec2.InterfaceAttachment{Interface: n, Instance: in, Index: int(idx), Max: s.maxENIs(in.InstanceType)}
		for _, other := range append([]string{in.ENIID}, in.SecondaryENIs...) {
			if o := s.model.ENIs[other]; o != nil {
				a.Taken = append(a.Taken, o.DeviceIndex)
			}
		}
		if e := wire.Refuse(ec2.InterfaceAttachRefusals, "AttachNetworkInterface", a); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		n.Status, n.InstanceID, n.DeviceIndex, n.AttachTime, n.DeleteOnTermination = "in-use", iid, int(idx), c.now, false
		n.AttachmentID = "eni-attach-" + strings.TrimPrefix(s.newID("eni"), "eni-")
		in.SecondaryENIs = append(in.SecondaryENIs, n.ID)
		s.save(bucketENIs, n.ID, n)
		s.save(bucketInstances, in.ID, in)
		resp.AttachmentID = n.AttachmentID
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// maxENIs is the instance type's interface limit (the catalog's, 3 when unknown).
func (s *Service) maxENIs(typ string) int {
	if it := s.types[typ]; it != nil && it.MaxENIs > 0 {
		return int(it.MaxENIs)
	}
	return 3
}

func (s *Service) detachNetworkInterface(c *call) (wire.Response, *wire.Error) {
	att := c.q.Str("AttachmentId")
	if att == "" {
		return nil, wire.Missing("AttachmentId")
	}
	if _, _, err := c.q.Bool("Force"); err != nil {
		return nil, err
	}
	aerr := s.mutate(c, func() *wire.Error {
		var n *ec2.NetworkInterface
		for _, x := range s.model.ENIs {
			if x.AttachmentID == att && x.InstanceID != "" {
				n = x
			}
		}
		if n == nil {
			return wire.BadRequest("InvalidAttachmentID.NotFound", "Interface with attachment ID '%s' does not exist", att)
		}
		if e := wire.Refuse(ec2.InterfaceRefusals, "DetachNetworkInterface", n); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		s.detachENI(n)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}

// detachENI makes a secondary interface available again; it keeps its address.
// Callers hold s.mu.
func (s *Service) detachENI(n *ec2.NetworkInterface) {
	if in := s.model.Instances[n.InstanceID]; in != nil {
		out := in.SecondaryENIs[:0:0]
		for _, id := range in.SecondaryENIs {
			if id != n.ID {
				out = append(out, id)
			}
		}
		in.SecondaryENIs = out
		s.save(bucketInstances, in.ID, in)
	}
	n.Status, n.InstanceID, n.AttachmentID, n.DeviceIndex, n.DeleteOnTermination = "available", "", "", 0, false
	s.save(bucketENIs, n.ID, n)
}

func (s *Service) deleteNetworkInterface(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("NetworkInterfaceId")
	if id == "" {
		return nil, wire.Missing("NetworkInterfaceId")
	}
	aerr := s.mutate(c, func() *wire.Error {
		n := s.model.ENIs[id]
		if n == nil {
			return errENINotFound(id)
		}
		if e := wire.Refuse(ec2.InterfaceRefusals, "DeleteNetworkInterface", n); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		delete(s.model.ENIs, id)
		s.remove(bucketENIs, id)
		s.model.FreeIP(n.SubnetID, n.PrivateIP)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}

// releaseSecondaryENIs ends a terminated instance's secondary interfaces: deleted when
// marked DeleteOnTermination, detached otherwise, and always detached under a leak-enis
// fault. Callers hold s.mu.
func (s *Service) releaseSecondaryENIs(in *ec2.Instance) {
	leak := s.eniLeakFault(in.ID)
	if leak != nil && len(in.SecondaryENIs) > 0 {
		s.consumeFault(leak)
		s.saveMeta()
	}
	for _, id := range append([]string(nil), in.SecondaryENIs...) {
		n := s.model.ENIs[id]
		if n == nil {
			continue
		}
		if n.DeleteOnTermination && leak == nil {
			delete(s.model.ENIs, id)
			s.remove(bucketENIs, id)
			s.model.FreeIP(n.SubnetID, n.PrivateIP)
			continue
		}
		s.detachENI(n)
	}
	in.SecondaryENIs = nil
}

// modifyNetworkInterfaceAttribute changes what the VPC CNI changes: the attachment's
// DeleteOnTermination, the description, the security groups.
func (s *Service) modifyNetworkInterfaceAttribute(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("NetworkInterfaceId")
	if id == "" {
		return nil, wire.Missing("NetworkInterfaceId")
	}
	dot, hasDOT, err := c.q.Bool("Attachment.DeleteOnTermination")
	if err != nil {
		return nil, err
	}
	groups := c.q.Strs("SecurityGroupId")
	aerr := s.mutate(c, func() *wire.Error {
		n := s.model.ENIs[id]
		if n == nil {
			return errENINotFound(id)
		}
		if hasDOT && (n.InstanceID == "" || c.q.Str("Attachment.AttachmentId") != n.AttachmentID) {
			return wire.BadRequest("InvalidAttachmentID.NotFound", "Interface with attachment ID '%s' does not exist", c.q.Str("Attachment.AttachmentId"))
		}
		for _, g := range groups {
			if sg := s.model.Groups[g]; sg == nil || sg.VpcID != n.VpcID {
				return wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist in VPC '%s'", g, n.VpcID)
			}
		}
		if c.dryRun {
			return wire.DryRun()
		}
		if hasDOT {
			n.DeleteOnTermination = dot
		}
		if c.q.Has("Description.Value") {
			n.Description = c.q.Str("Description.Value")
		}
		if len(groups) > 0 {
			n.Groups = groups
		}
		s.save(bucketENIs, n.ID, n)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}

// --- DescribeNetworkInterfaces ---

var eniAttrs = wire.AttrTable[*ec2.NetworkInterface]{
	"network-interface-id": func(n *ec2.NetworkInterface) []string { return wire.One(n.ID) },
	"subnet-id":            func(n *ec2.NetworkInterface) []string { return wire.One(n.SubnetID) },
	"vpc-id":               func(n *ec2.NetworkInterface) []string { return wire.One(n.VpcID) },
	"availability-zone":    func(n *ec2.NetworkInterface) []string { return wire.One(n.Zone) },
	"status":               func(n *ec2.NetworkInterface) []string { return wire.One(n.Status) },
	"private-ip-address":   func(n *ec2.NetworkInterface) []string { return wire.One(n.PrivateIP) },
	"addresses.private-ip-address": func(n *ec2.NetworkInterface) []string {
		return wire.One(n.PrivateIP)
	},
	"private-dns-name":         func(n *ec2.NetworkInterface) []string { return wire.One(n.PrivateDNS) },
	"mac-address":              func(n *ec2.NetworkInterface) []string { return wire.One(n.MAC) },
	"description":              func(n *ec2.NetworkInterface) []string { return wire.One(n.Description) },
	"interface-type":           func(n *ec2.NetworkInterface) []string { return wire.One(n.InterfaceType) },
	"group-id":                 func(n *ec2.NetworkInterface) []string { return n.Groups },
	"attachment.instance-id":   func(n *ec2.NetworkInterface) []string { return wire.One(n.InstanceID) },
	"attachment.attachment-id": func(n *ec2.NetworkInterface) []string { return wire.One(n.AttachmentID) },
	"attachment.device-index":  func(n *ec2.NetworkInterface) []string { return []string{itoa(n.DeviceIndex)} },
	"attachment.status": func(n *ec2.NetworkInterface) []string {
		return wire.One(map[bool]string{true: "attached"}[n.InstanceID != ""])
	},
	"attachment.delete-on-termination": func(n *ec2.NetworkInterface) []string { return wire.One(wire.FormatBool(n.DeleteOnTermination)) },
	"owner-id":                         func(n *ec2.NetworkInterface) []string { return nil },
	"requester-managed":                func(n *ec2.NetworkInterface) []string { return wire.One("false") },
}

func (s *Service) describeNetworkInterfaces(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.NetworkInterface]{Attrs: eniAttrs, Tags: func(n *ec2.NetworkInterface) []ec2.Tag { return n.Tags },
		Min: 5, Max: 1000, IDParam: "NetworkInterfaceId", WithMax: wire.SetWithMax("networkInterfaceIdSet"),
		Seq: func(n *ec2.NetworkInterface) uint64 { return n.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.ENIs, func(id string) *wire.Error {
		return wire.BadRequest(wire.CodeInvalidNetworkInterfaceNotFound, "The networkInterface ID '%s' does not exist", id)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeNetworkInterfacesResponse{Interfaces: wire.Items(page, s.env().NetworkInterface), NextToken: next}, nil
}
