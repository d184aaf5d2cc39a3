package ec2

import (
	"encoding/binary"
	"net/netip"
)

// State is the EC2 model's state: the account's resources by ID, the instance tag
// index and the subnets' address allocation. Its operations need no lock, clock,
// persistence or HTTP: fakeec2's Server holds it under its lock and persists what
// changes.
type State struct {
	Instances map[string]*Instance
	Volumes   map[string]*Volume
	ENIs      map[string]*NetworkInterface
	Templates map[string]*LaunchTemplate
	LTByName  map[string]string
	VPCs      map[string]*VPC
	Subnets   map[string]*Subnet
	Groups    map[string]*SecurityGroup
	Images    map[string]*Image
	Fleets    map[string]*Fleet
	Snapshots map[string]*Snapshot
	InstTags  TagIndex
	IPUsed    map[string]map[uint32]bool // subnet -> host offsets in use
	IPNext    map[string]uint32
}

// Clear empties the state; the network (VPCs, subnets, groups) and the images go too
// when all.
func (s *State) Clear(all bool) {
	s.Instances = map[string]*Instance{}
	s.InstTags = TagIndex{}
	s.Volumes = map[string]*Volume{}
	s.ENIs = map[string]*NetworkInterface{}
	s.Templates = map[string]*LaunchTemplate{}
	s.LTByName = map[string]string{}
	s.Fleets = map[string]*Fleet{}
	s.Snapshots = map[string]*Snapshot{}
	s.IPUsed = map[string]map[uint32]bool{}
	s.IPNext = map[string]uint32{}
	if all {
		s.VPCs = map[string]*VPC{}
		s.Subnets = map[string]*Subnet{}
		s.Groups = map[string]*SecurityGroup{}
		s.Images = map[string]*Image{}
	}
}

// TagIndex maps tag key -> value -> instance IDs, so that DescribeInstances with an exact
// tag:KEY filter looks at the matching instances only instead of scanning them all.
type TagIndex map[string]map[string]map[string]struct{}

// Add indexes the instance id under its tags.
func (ix TagIndex) Add(id string, tags []Tag) {
	for _, t := range tags {
		vals := ix[t.Key]
		if vals == nil {
			vals = map[string]map[string]struct{}{}
			ix[t.Key] = vals
		}
		ids := vals[t.Value]
		if ids == nil {
			ids = map[string]struct{}{}
			vals[t.Value] = ids
		}
		ids[id] = struct{}{}
	}
}

// Remove drops the instance id from under its tags.
func (ix TagIndex) Remove(id string, tags []Tag) {
	for _, t := range tags {
		if ids := ix[t.Key][t.Value]; ids != nil {
			delete(ids, id)
			if len(ids) == 0 {
				delete(ix[t.Key], t.Value)
			}
		}
	}
}

// SetInstanceTags replaces an instance's tags, keeping the index in step.
func (s *State) SetInstanceTags(in *Instance, tags []Tag) {
	s.InstTags.Remove(in.ID, in.Tags)
	in.Tags = tags
	s.InstTags.Add(in.ID, tags)
}

// DefaultSubnet returns the default subnet of zone ("" = the first zone).
func (s *State) DefaultSubnet(zone string) *Subnet {
	var best *Subnet
	for _, sn := range s.Subnets {
		if !sn.IsDefault || (zone != "" && sn.Zone != zone) {
			continue
		}
		if best == nil || sn.Zone < best.Zone || (sn.Zone == best.Zone && sn.Seq < best.Seq) {
			best = sn
		}
	}
	return best
}

// DefaultGroup is the VPC's default security group (nil when it has none).
func (s *State) DefaultGroup(vpcID string) *SecurityGroup {
	for _, g := range s.Groups {
		if g.VpcID == vpcID && g.Name == "default" {
			return g
		}
	}
	return nil
}

// --- private addresses ---

// SubnetRange is the first address of an IPv4 CIDR and its number of addresses (0, 0 when
// it is not one).
func SubnetRange(cidr string) (base uint32, size uint32) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return 0, 0
	}
	a := p.Masked().Addr().As4()
	return binary.BigEndian.Uint32(a[:]), 1 << (32 - p.Bits())
}

func ipString(n uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], n)
	return netip.AddrFrom4(b).String()
}

// AllocIP hands out the next free address of the subnet; AWS reserves the first four
// and the last.
func (s *State) AllocIP(sn *Subnet) (string, bool) {
	base, size := SubnetRange(sn.CIDR)
	if size < 8 {
		return "", false
	}
	used := s.IPUsed[sn.ID]
	if used == nil {
		used = map[uint32]bool{}
		s.IPUsed[sn.ID] = used
	}
	first, last := uint32(4), size-2
	off := s.IPNext[sn.ID]
	if off < first || off > last {
		off = first
	}
	for i := uint32(0); i <= last-first; i++ {
		if !used[off] {
			used[off] = true
			s.IPNext[sn.ID] = off + 1
			return ipString(base + off), true
		}
		off++
		if off > last {
			off = first
		}
	}
	return "", false
}

// IPOffset is the address's offset in the subnet, when it lies in it.
func (s *State) IPOffset(subnetID, ip string) (uint32, bool) {
	sn := s.Subnets[subnetID]
	if sn == nil {
		return 0, false
	}
	base, size := SubnetRange(sn.CIDR)
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		return 0, false
	}
	b := a.As4()
	n := binary.BigEndian.Uint32(b[:])
	if n < base || n >= base+size {
		return 0, false
	}
	return n - base, true
}

// MarkIP takes an address of the subnet (one a request named).
func (s *State) MarkIP(subnetID, ip string) {
	if off, ok := s.IPOffset(subnetID, ip); ok {
		if s.IPUsed[subnetID] == nil {
			s.IPUsed[subnetID] = map[uint32]bool{}
		}
		s.IPUsed[subnetID][off] = true
	}
}

// FreeIP gives an address of the subnet back.
func (s *State) FreeIP(subnetID, ip string) {
	if off, ok := s.IPOffset(subnetID, ip); ok {
		delete(s.IPUsed[subnetID], off)
	}
}

// FreeIPCount is how many addresses the subnet has left.
func (s *State) FreeIPCount(sn *Subnet) int {
	_, size := SubnetRange(sn.CIDR)
	return int(size) - 5 - len(s.IPUsed[sn.ID])
}
