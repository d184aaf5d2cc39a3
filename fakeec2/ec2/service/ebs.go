package service

import (
	"container/heap"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// EBS volume lifecycle: CreateVolume, AttachVolume, DetachVolume, DeleteVolume,
// ModifyVolume, DescribeVolumesModifications. Transitions (creating, attaching,
// detaching, deleting) last the server's volumeDelay and end on the deadline heap.

// volSizes are CreateVolume's documented size ranges in GiB, per type.
var volSizes = map[string][2]int32{
	"gp2": {1, 16384}, "gp3": {1, 65536}, "io1": {4, 16384}, "io2": {4, 65536},
	"st1": {125, 16384}, "sc1": {125, 16384}, "standard": {1, 1024},
}

func checkVolumeSize(typ string, size int32) *wire.Error {
	r := volSizes[typ]
	if size < r[0] {
		return wire.InvalidValue("Volume of %dGiB is too small; minimum is %dGiB.", size, r[0])
	}
	if size > r[1] {
		return wire.InvalidValue("Volume of %dGiB is too large for volume type %s; maximum is %dGiB.", size, typ, r[1])
	}
	return nil
}

func errVolumeNotFound(id string) *wire.Error {
	if !validID(id, "vol") {
		return wire.BadRequest("InvalidVolumeID.Malformed", "Invalid id: \"%s\"", id)
	}
	return wire.BadRequest(wire.CodeInvalidVolumeNotFound, "The volume '%s' does not exist.", id)
}

// findVolume returns a volume that is not being deleted. Callers hold s.mu.
func (s *Service) findVolume(id string) (*ec2.Volume, *wire.Error) {
	if id == "" {
		return nil, wire.Missing("VolumeId")
	}
	v := s.model.Volumes[id]
	if v == nil {
		return nil, errVolumeNotFound(id)
	}
	return v, nil
}

// --- DescribeVolumes ---

var volumeAttrs = wire.AttrTable[*ec2.Volume]{
	"volume-id":                        func(v *ec2.Volume) []string { return wire.One(v.ID) },
	"volume-type":                      func(v *ec2.Volume) []string { return wire.One(v.Type) },
	"size":                             func(v *ec2.Volume) []string { return i32s(v.SizeGiB) },
	"status":                           func(v *ec2.Volume) []string { return wire.One(v.State) },
	"availability-zone":                func(v *ec2.Volume) []string { return wire.One(v.Zone) },
	"encrypted":                        func(v *ec2.Volume) []string { return wire.One(wire.FormatBool(v.Encrypted)) },
	"snapshot-id":                      func(v *ec2.Volume) []string { return wire.One(v.SnapshotID) },
	"create-time":                      func(v *ec2.Volume) []string { return wire.One(wire.FormatTime(v.CreateTime)) },
	"attachment.instance-id":           func(v *ec2.Volume) []string { return wire.One(v.InstanceID) },
	"attachment.device":                func(v *ec2.Volume) []string { return wire.One(v.Device) },
	"attachment.status":                func(v *ec2.Volume) []string { return attachStatus(v) },
	"attachment.delete-on-termination": func(v *ec2.Volume) []string { return attachDOT(v) },
	"multi-attach-enabled":             func(v *ec2.Volume) []string { return wire.One("false") },
}

func attachStatus(v *ec2.Volume) []string {
	if v.InstanceID == "" {
		return nil
	}
	return wire.One(v.AttachStatus())
}

func attachDOT(v *ec2.Volume) []string {
	if v.InstanceID == "" {
		return nil
	}
	return wire.One(wire.FormatBool(v.DeleteOnTermination))
}

func (s *Service) describeVolumes(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Volume]{Attrs: volumeAttrs, Tags: func(v *ec2.Volume) []ec2.Tag { return v.Tags },
		Min: 5, Max: 500, IDParam: "VolumeId", WithMax: wire.SetWithMax("volumeSet"), Seq: func(v *ec2.Volume) uint64 { return v.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.Volumes, func(id string) *wire.Error {
		if !validID(id, "vol") {
			return wire.BadRequest("InvalidVolumeID.Malformed", "Invalid id: \"%s\"", id)
		}
		return wire.BadRequest(wire.CodeInvalidVolumeNotFound, "The volume '%s' does not exist.", id)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeVolumesResponse{Volumes: wire.Items(page, s.env().Volume), NextToken: next}, nil
}

// --- CreateVolume ---

var volumeTagTypes = map[string]bool{"volume": true}

// volumeRequest is a CreateVolume request, parsed and checked against itself.
type volumeRequest struct {
	zone, zoneID, typ, snapID, kms string
	size, iops, throughput         int64
	hasSize, encrypted             bool
	tags                           map[string][]ec2.Tag
}

func parseCreateVolume(q *wire.Query) (volumeRequest, *wire.Error) {
	r := volumeRequest{zone: q.Str("AvailabilityZone"), zoneID: q.Str("AvailabilityZoneId"), typ: q.Str("VolumeType"),
		snapID: q.Str("SnapshotId"), kms: q.Str("KmsKeyId")}
	if r.zone == "" && r.zoneID == "" {
		return r, wire.Missing("AvailabilityZone")
	}
	if r.typ == "" {
		r.typ = "gp2" // CreateVolume's documented default
	}
	if !validVolumeTypes[r.typ] {
		return r, wire.InvalidValue("Value (%s) for parameter volumeType is invalid. Valid values: standard, io1, io2, gp2, sc1, st1, gp3", r.typ)
	}
	var err *wire.Error
	if r.size, r.hasSize, err = q.Int("Size"); err != nil {
		return r, err
	}
	if r.iops, _, err = q.Int("Iops"); err != nil {
		return r, err
	}
	if r.throughput, _, err = q.Int("Throughput"); err != nil {
		return r, err
	}
	if r.encrypted, _, err = q.Bool("Encrypted"); err != nil {
		return r, err
	}
	if r.tags, err = specTags(q, volumeTagTypes); err != nil {
		return r, err
	}
	switch {
	case r.snapID == "" && !r.hasSize:
		return r, wire.Missing("size")
	case (r.typ == "io1" || r.typ == "io2") && r.iops == 0:
		return r, wire.Missing("iops")
	case r.iops != 0 && r.typ != "gp3" && r.typ != "io1" && r.typ != "io2":
		return r, wire.InvalidValue("The parameter iops is not supported for %s volumes.", r.typ)
	case r.throughput != 0 && r.typ != "gp3":
		return r, wire.InvalidValue("The parameter throughput is not supported for %s volumes.", r.typ)
	}
	return r, nil
}

func (s *Service) createVolume(c *call) (wire.Response, *wire.Error) {
	r, err := parseCreateVolume(c.q)
	if err != nil {
		return nil, err
	}
	var out *ec2.Volume
	aerr := s.mutate(c, func() *wire.Error {
		if r.zone == "" {
			for _, z := range s.zones {
				if z.ID == r.zoneID {
					r.zone = z.Name
				}
			}
		}
		zoneID, ok := s.zoneID(r.zone)
		if !ok {
			return wire.InvalidValue("Invalid availability zone: [%s]", r.zone)
		}
		if r.snapID != "" {
			sz, encSnap, e := s.snapshotSize(r.snapID)
			if e != nil {
				return e
			}
			if !r.hasSize {
				r.size = int64(sz)
			} else if r.size < int64(sz) {
				return wire.InvalidValue("Volume of size %dGB is smaller than snapshot '%s', expect size >= %dGB", r.size, r.snapID, sz)
			}
			r.encrypted = r.encrypted || encSnap
		}
		if e := checkVolumeSize(r.typ, int32(r.size)); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		out = s.newVolume(c, r, zoneID)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	x := s.env().Volume(out)
	x.Status = ec2.VolCreating
	if s.volumeDelay == 0 {
		x.Status = ec2.VolAvailable
	}
	return &wire.CreateVolumeResponse{VolumeItem: x}, nil
}

// newVolume creates the volume r asks for, in zone zoneID, and starts billing it. Callers
// hold s.mu.
func (s *Service) newVolume(c *call, r volumeRequest, zoneID string) *ec2.Volume {
	v := &ec2.Volume{Seq: s.nextSeq(), ID: s.newID("vol"), Zone: r.zone, ZoneID: zoneID, Type: r.typ, SizeGiB: int32(r.size),
		Iops: int32(r.iops), Throughput: int32(r.throughput), Encrypted: r.encrypted || r.kms != "", KMSKeyID: r.kms,
		SnapshotID: r.snapID, State: ec2.VolCreating, CreateTime: c.now, Until: c.now.Add(s.volumeDelay),
		Tags: ec2.SetTags(nil, r.tags["volume"]), Caller: c.caller}
	switch r.typ {
	case "gp3":
		v.Iops, v.Throughput = max(v.Iops, 3000), max(v.Throughput, 125)
	case "gp2":
		v.Iops = max(100, min(16000, 3*v.SizeGiB))
	}
	if v.Encrypted && v.KMSKeyID == "" {
		v.KMSKeyID = "alias/aws/ebs"
	}
	s.model.Volumes[v.ID] = v
	s.save(bucketVolumes, v.ID, v)
	s.scheduleVolume(v)
	encrypted := v.Encrypted
	s.startLedger(&billing.LedgerEntry{ResourceID: v.ID, ResourceType: "volume", Type: v.Type, SizeGiB: v.SizeGiB,
		Encrypted: &encrypted, Zone: v.Zone, PricePerHour: billing.VolumeHourly(v.Type, v.SizeGiB), Started: c.now,
		Tags: ec2.TagsMap(v.Tags), Caller: c.caller})
	c.event.Created = append(c.event.Created, v.ID)
	s.advanceLocked(c.now) // a zero delay: available at once
	return v
}

// --- AttachVolume / DetachVolume ---

func (s *Service) attachVolume(c *call) (wire.Response, *wire.Error) {
	vid, iid, dev := c.q.Str("VolumeId"), c.q.Str("InstanceId"), c.q.Str("Device")
	switch {
	case vid == "":
		return nil, wire.Missing("VolumeId")
	case iid == "":
		return nil, wire.Missing("InstanceId")
	case dev == "":
		return nil, wire.Missing("Device")
	}
	resp := &wire.VolumeAttachmentResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		v, e := s.findVolume(vid)
		if e != nil {
			return e
		}
		if e := s.checkInstanceIDs([]string{iid}); e != nil {
			return e
		}
		in := s.model.Instances[iid]
		if e := wire.Refuse(ec2.AttachRefusals, "AttachVolume", ec2.Attachment{Volume: v, Instance: in, Device: dev}); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		v.State, v.InstanceID, v.Device, v.AttachTime, v.DeleteOnTermination = ec2.VolInUse, iid, dev, c.now, false
		v.AttachState, v.Until = ec2.AttAttaching, c.now.Add(s.volumeDelay)
		in.Volumes = append(in.Volumes, ec2.AttachedVolume{DeviceName: dev, VolumeID: vid, AttachTime: c.now})
		s.save(bucketVolumes, v.ID, v)
		s.save(bucketInstances, in.ID, in)
		s.scheduleVolume(v)
		resp.VolumeAttachmentItem = wire.VolumeAttachment(v)
		s.advanceLocked(c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

func (s *Service) detachVolume(c *call) (wire.Response, *wire.Error) {
	vid := c.q.Str("VolumeId")
	if vid == "" {
		return nil, wire.Missing("VolumeId")
	}
	if _, _, err := c.q.Bool("Force"); err != nil {
		return nil, err
	}
	resp := &wire.VolumeAttachmentResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		v, e := s.findVolume(vid)
		if e != nil {
			return e
		}
		d := ec2.Detachment{Volume: v, Instance: s.model.Instances[v.InstanceID], InstanceID: c.q.Str("InstanceId"), Device: c.q.Str("Device")}
		if e := wire.Refuse(ec2.DetachRefusals, "DetachVolume", d); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		v.AttachState, v.Until = ec2.AttDetaching, c.now.Add(s.volumeDelay)
		s.save(bucketVolumes, v.ID, v)
		s.scheduleVolume(v)
		resp.VolumeAttachmentItem = wire.VolumeAttachment(v)
		s.advanceLocked(c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// finishDetach frees the volume from its instance. Callers hold s.mu.
func (s *Service) finishDetach(v *ec2.Volume) {
	if in := s.model.Instances[v.InstanceID]; in != nil {
		out := in.Volumes[:0:0]
		for _, av := range in.Volumes {
			if av.VolumeID != v.ID {
				out = append(out, av)
			}
		}
		in.Volumes = out
		s.save(bucketInstances, in.ID, in)
	}
	v.State, v.InstanceID, v.Device, v.AttachTime, v.AttachState = ec2.VolAvailable, "", "", time.Time{}, ""
	v.DeleteOnTermination = false
}

// --- DeleteVolume ---

func (s *Service) deleteVolume(c *call) (wire.Response, *wire.Error) {
	vid := c.q.Str("VolumeId")
	aerr := s.mutate(c, func() *wire.Error {
		v, e := s.findVolume(vid)
		if e != nil {
			return e
		}
		if e := wire.Refuse(ec2.VolumeRefusals, "DeleteVolume", ec2.VolumeAt{Volume: v, Now: c.now}); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		v.State, v.Until = ec2.VolDeleting, c.now.Add(s.volumeDelay)
		s.stopLedger(v.ID, c.now)
		s.save(bucketVolumes, v.ID, v)
		s.scheduleVolume(v)
		s.advanceLocked(c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}

// --- ModifyVolume / DescribeVolumesModifications ---

func (s *Service) modifyVolume(c *call) (wire.Response, *wire.Error) {
	vid := c.q.Str("VolumeId")
	size, hasSize, err := c.q.Int("Size")
	if err != nil {
		return nil, err
	}
	iops, hasIops, err := c.q.Int("Iops")
	if err != nil {
		return nil, err
	}
	thr, hasThr, err := c.q.Int("Throughput")
	if err != nil {
		return nil, err
	}
	typ := c.q.Str("VolumeType")
	if typ != "" && !validVolumeTypes[typ] {
		return nil, wire.InvalidValue("Value (%s) for parameter volumeType is invalid. Valid values: standard, io1, io2, gp2, sc1, st1, gp3", typ)
	}
	resp := &wire.ModifyVolumeResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		v, e := s.findVolume(vid)
		if e != nil {
			return e
		}
		if e := wire.Refuse(ec2.VolumeRefusals, "ModifyVolume", ec2.VolumeAt{Volume: v, Now: c.now}); e != nil {
			return e
		}
		m := &ec2.VolumeModification{OrigSize: v.SizeGiB, TargetSize: v.SizeGiB, OrigType: v.Type, TargetType: v.Type,
			OrigIops: v.Iops, TargetIops: v.Iops, OrigThroughput: v.Throughput, TargetThroughput: v.Throughput,
			Start: c.now, End: c.now.Add(2 * s.volumeDelay)}
		if typ != "" {
			m.TargetType = typ
		}
		if hasSize {
			if int32(size) < v.SizeGiB {
				return wire.InvalidValue("New size cannot be smaller than existing size")
			}
			m.TargetSize = int32(size)
		}
		if e := checkVolumeSize(m.TargetType, m.TargetSize); e != nil {
			return e
		}
		if hasIops {
			m.TargetIops = int32(iops)
		}
		if hasThr {
			m.TargetThroughput = int32(thr)
		}
		if m.TargetSize == v.SizeGiB && m.TargetType == v.Type && m.TargetIops == v.Iops && m.TargetThroughput == v.Throughput {
			return wire.InvalidValue("Modification of volume %s is not needed: the requested configuration is the current one.", vid)
		}
		if c.dryRun {
			return wire.DryRun()
		}
		v.SizeGiB, v.Type, v.Iops, v.Throughput, v.Mod = m.TargetSize, m.TargetType, m.TargetIops, m.TargetThroughput, m
		if e := s.ledger[v.ID]; e != nil {
			e.SizeGiB, e.Type = v.SizeGiB, v.Type
			s.resumeLedger(v.ID, c.now, billing.VolumeHourly(v.Type, v.SizeGiB))
		}
		s.save(bucketVolumes, v.ID, v)
		resp.Modification = wire.VolumeModification(v.ID, m, c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

var volumeModAttrs = wire.AttrTable[*ec2.Volume]{
	"volume-id":          func(v *ec2.Volume) []string { return wire.One(v.ID) },
	"modification-state": nil, // set per call (depends on now)
	"target-size":        func(v *ec2.Volume) []string { return i32s(v.Mod.TargetSize) },
	"target-volume-type": func(v *ec2.Volume) []string { return wire.One(v.Mod.TargetType) },
	"original-size":      func(v *ec2.Volume) []string { return i32s(v.Mod.OrigSize) },
	"original-volume-type": func(v *ec2.Volume) []string {
		return wire.One(v.Mod.OrigType)
	},
	"start-time": func(v *ec2.Volume) []string { return wire.One(wire.FormatTime(v.Mod.Start)) },
}

func (s *Service) describeVolumesModifications(c *call) (wire.Response, *wire.Error) {
	now := c.now
	attrs := wire.AttrTable[*ec2.Volume]{}
	for k, f := range volumeModAttrs {
		attrs[k] = f
	}
	attrs["modification-state"] = func(v *ec2.Volume) []string {
		return wire.One(wire.VolumeModification(v.ID, v.Mod, now).ModificationState)
	}
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Volume]{Attrs: attrs, Tags: func(v *ec2.Volume) []ec2.Tag { return v.Tags },
		Min: 5, Max: 500, IDParam: "VolumeId", Seq: func(v *ec2.Volume) uint64 { return v.Seq },
		CheckIDs: func(ids []string) *wire.Error {
			for _, id := range ids {
				if v := s.model.Volumes[id]; v == nil {
					return errVolumeNotFound(id)
				} else if v.Mod == nil {
					return wire.BadRequest("InvalidVolumeModification.NotFound", "Modification for volume '%s' does not exist.", id)
				}
			}
			return nil
		}})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	withMod := map[string]*ec2.Volume{}
	for id, v := range s.model.Volumes {
		if v.Mod != nil {
			withMod[id] = v
		}
	}
	page, next, aerr := req.Run(withMod, errVolumeNotFound)
	if aerr != nil {
		return nil, aerr
	}
	return &wire.DescribeVolumesModificationsResponse{NextToken: next, Modifications: wire.Items(page, func(v *ec2.Volume) wire.VolumeModificationItem {
		return wire.VolumeModification(v.ID, v.Mod, now)
	})}, nil
}

// --- deadlines ---

func (s *Service) scheduleVolume(v *ec2.Volume) {
	if !v.Until.IsZero() {
		heap.Push(&s.deadlines, deadline{at: v.Until, id: v.ID})
	}
}

// scheduleEBSDeadlines re-arms the volume and snapshot transitions of a loaded state.
func (s *Service) scheduleEBSDeadlines() {
	for _, v := range s.model.Volumes {
		s.scheduleVolume(v)
	}
	for _, sn := range s.model.Snapshots {
		if sn.State == snapPending {
			heap.Push(&s.deadlines, deadline{at: sn.CompletedAt, id: sn.ID})
		}
	}
}

// advanceEBS ends the volume or snapshot transition d stands for; false when d is not
// an EBS deadline. Callers hold s.mu.
func (s *Service) advanceEBS(d deadline, now time.Time) bool {
	switch {
	case strings.HasPrefix(d.id, "vol-"):
		v := s.model.Volumes[d.id]
		if v == nil || v.Until.IsZero() || v.Until.After(now) {
			return true // gone or stale
		}
		v.Until = time.Time{}
		switch {
		case v.State == ec2.VolCreating:
			v.State = ec2.VolAvailable
		case v.State == ec2.VolDeleting:
			delete(s.model.Volumes, v.ID)
			s.remove(bucketVolumes, v.ID)
			return true
		case v.AttachState == ec2.AttAttaching && v.InstanceID != "":
			v.AttachState = ec2.AttAttached
		case v.AttachState == ec2.AttDetaching && v.InstanceID != "":
			s.finishDetach(v)
		}
		s.save(bucketVolumes, v.ID, v)
		return true
	case strings.HasPrefix(d.id, "snap-"):
		sn := s.model.Snapshots[d.id]
		if sn != nil && sn.State == snapPending && !sn.CompletedAt.After(now) {
			sn.State = snapCompleted
			s.save(bucketSnapshots, sn.ID, sn)
		}
		return true
	}
	return false
}

// CodeIncorrectModificationState answers a ModifyVolume while one is in progress.
const CodeIncorrectModificationState = ec2.CodeIncorrectModificationState
