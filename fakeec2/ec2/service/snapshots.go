package service

import (
	"container/heap"
	"strconv"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// EBS snapshots: CreateSnapshot, DescribeSnapshots, DeleteSnapshot. The account's own
// snapshots are records (pending for the volume delay, then completed, billed per
// GB-month); the images' root snapshots belong to the AMI owner and are derived from the
// images, so OwnerIds self never shows them.

const (
	bucketSnapshots = "snapshots"
	snapPending     = "pending"
	snapCompleted   = "completed"
)

// snapView is a snapshot as DescribeSnapshots sees it: the account's own or an image's
// root snapshot, already in its wire form (the filters match what is answered).
type snapView struct {
	seq  uint64
	tags []ec2.Tag
	x    wire.SnapshotItem
}

// snapViews are the snapshots DescribeSnapshots knows, by ID. Callers hold s.mu.
func (s *Service) snapViews() map[string]snapView {
	out := map[string]snapView{}
	for _, im := range s.model.Images {
		if im.RootSnapshotID == "" {
			continue
		}
		out[im.RootSnapshotID] = snapView{seq: im.Seq, x: wire.ImageSnapshot(im)}
	}
	env := s.env()
	for _, sn := range s.model.Snapshots {
		out[sn.ID] = snapView{seq: sn.Seq, tags: sn.Tags, x: env.Snapshot(sn)}
	}
	return out
}

// snapshotSize is the size and encryption of a snapshot a volume may be created from.
// Callers hold s.mu.
func (s *Service) snapshotSize(id string) (int32, bool, *wire.Error) {
	v, ok := s.snapViews()[id]
	if !ok {
		return 0, false, errSnapshotNotFound(id)
	}
	if v.x.Status != snapCompleted {
		return 0, false, wire.BadRequest(wire.CodeIncorrectState, "Snapshot is in invalid state - %s", v.x.Status)
	}
	return v.x.VolumeSize, v.x.Encrypted, nil
}

func errSnapshotNotFound(id string) *wire.Error {
	if !validID(id, "snap") {
		return wire.BadRequest("InvalidSnapshotID.Malformed", "Invalid id: \"%s\" (expecting \"snap-...\")", id)
	}
	return wire.BadRequest("InvalidSnapshot.NotFound", "The snapshot '%s' does not exist.", id)
}

// --- CreateSnapshot ---

var snapshotTagTypes = map[string]bool{"snapshot": true}

func (s *Service) createSnapshot(c *call) (wire.Response, *wire.Error) {
	vid := c.q.Str("VolumeId")
	tags, err := specTags(c.q, snapshotTagTypes)
	if err != nil {
		return nil, err
	}
	if len(c.q.Str("Description")) > 255 {
		return nil, wire.InvalidValue("The description exceeds 255 characters.")
	}
	resp := &wire.CreateSnapshotResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		v, e := s.findVolume(vid)
		if e != nil {
			return e
		}
		if e := wire.Refuse(ec2.VolumeRefusals, "CreateSnapshot", ec2.VolumeAt{Volume: v, Now: c.now}); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		sn := &ec2.Snapshot{Seq: s.nextSeq(), ID: s.newID("snap"), VolumeID: v.ID, SizeGiB: v.SizeGiB, Encrypted: v.Encrypted,
			KMSKeyID: v.KMSKeyID, Description: c.q.Str("Description"), State: snapPending, StartTime: c.now,
			CompletedAt: c.now.Add(s.volumeDelay), Tags: ec2.SetTags(nil, tags["snapshot"])}
		s.model.Snapshots[sn.ID] = sn
		s.save(bucketSnapshots, sn.ID, sn)
		heap.Push(&s.deadlines, deadline{at: sn.CompletedAt, id: sn.ID})
		s.startLedger(&billing.LedgerEntry{ResourceID: sn.ID, ResourceType: "snapshot", Type: "standard", SizeGiB: sn.SizeGiB,
			Zone: v.Zone, PricePerHour: billing.SnapshotHourly(sn.SizeGiB), Started: c.now,
			Tags: ec2.TagsMap(sn.Tags), Caller: c.caller})
		c.event.Created = append(c.event.Created, sn.ID)
		resp.SnapshotItem = s.env().Snapshot(sn)
		s.advanceLocked(c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// --- DescribeSnapshots ---

var snapAttrs = wire.AttrTable[snapView]{
	"snapshot-id":  func(v snapView) []string { return wire.One(v.x.SnapshotID) },
	"volume-id":    func(v snapView) []string { return wire.One(v.x.VolumeID) },
	"status":       func(v snapView) []string { return wire.One(v.x.Status) },
	"owner-id":     func(v snapView) []string { return wire.One(v.x.OwnerID) },
	"owner-alias":  func(v snapView) []string { return wire.One(v.x.OwnerAlias) },
	"description":  func(v snapView) []string { return wire.One(v.x.Description) },
	"volume-size":  func(v snapView) []string { return []string{strconv.Itoa(int(v.x.VolumeSize))} },
	"encrypted":    func(v snapView) []string { return wire.One(wire.FormatBool(v.x.Encrypted)) },
	"progress":     func(v snapView) []string { return wire.One(v.x.Progress) },
	"start-time":   func(v snapView) []string { return wire.One(v.x.StartTime) },
	"storage-tier": func(v snapView) []string { return wire.One(v.x.StorageTier) },
}

func (s *Service) describeSnapshots(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[snapView]{Attrs: snapAttrs, Tags: func(v snapView) []ec2.Tag { return v.tags },
		Min: 5, Max: 1000, IDParam: "SnapshotId", Seq: func(v snapView) uint64 { return v.seq }})
	if err != nil {
		return nil, err
	}
	owners := c.q.Strs("Owner")
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := s.snapViews()
	if len(owners) > 0 {
		for id, v := range all {
			ok := false
			for _, o := range owners {
				ok = ok || o == v.x.OwnerID || (o == "self" && v.x.OwnerID == s.account) || (o == "amazon" && v.x.OwnerAlias == "amazon")
			}
			if !ok {
				delete(all, id)
			}
		}
	}
	page, next, aerr := req.Run(all, errSnapshotNotFound)
	if aerr != nil {
		return nil, aerr
	}
	return &wire.DescribeSnapshotsResponse{Snapshots: wire.Items(page, func(v snapView) wire.SnapshotItem { return v.x }), NextToken: next}, nil
}

// --- DeleteSnapshot ---

func (s *Service) deleteSnapshot(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("SnapshotId")
	if id == "" {
		return nil, wire.Missing("SnapshotId")
	}
	aerr := s.mutate(c, func() *wire.Error {
		use := ec2.SnapshotUse{ID: id}
		for _, im := range s.model.Images {
			if im.RootSnapshotID == id {
				use.Image = im.ID
			}
		}
		if e := wire.Refuse(ec2.SnapshotRefusals, "DeleteSnapshot", use); e != nil {
			return e
		}
		sn := s.model.Snapshots[id]
		if sn == nil {
			return errSnapshotNotFound(id)
		}
		if c.dryRun {
			return wire.DryRun()
		}
		delete(s.model.Snapshots, id)
		s.remove(bucketSnapshots, id)
		s.stopLedger(id, c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}
