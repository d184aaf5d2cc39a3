package fakeec2

import (
	"container/heap"
	"fmt"
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

// snapView is one snapshot as DescribeSnapshots sees it.
type snapView struct {
	seq                   uint64
	id, volumeID, ownerID string
	ownerAlias            string
	size                  int32
	state, description    string
	encrypted             bool
	kms                   string
	start                 string
	progress              string
	tags                  []ec2.Tag
}

type xmlSnapshot struct {
	SnapshotID  string     `xml:"snapshotId"`
	VolumeID    string     `xml:"volumeId"`
	Status      string     `xml:"status"`
	StartTime   string     `xml:"startTime"`
	Progress    string     `xml:"progress"`
	OwnerID     string     `xml:"ownerId"`
	OwnerAlias  string     `xml:"ownerAlias,omitempty"`
	Description string     `xml:"description"`
	VolumeSize  int32      `xml:"volumeSize"`
	Encrypted   bool       `xml:"encrypted"`
	KMSKeyID    string     `xml:"kmsKeyId,omitempty"`
	StorageTier string     `xml:"storageTier"`
	Tags        []wire.Tag `xml:"tagSet>item"`
}

func (v snapView) wire() xmlSnapshot {
	return xmlSnapshot{SnapshotID: v.id, VolumeID: v.volumeID, Status: v.state, StartTime: v.start, Progress: v.progress,
		OwnerID: v.ownerID, OwnerAlias: v.ownerAlias, Description: v.description, VolumeSize: v.size,
		Encrypted: v.encrypted, KMSKeyID: v.kms, StorageTier: "standard", Tags: wire.Tags(v.tags)}
}

// snapViews lists every snapshot the account can see. Callers hold s.mu.
func (s *Server) snapViews() map[string]snapView {
	out := map[string]snapView{}
	for _, im := range s.model.Images {
		if im.RootSnapshotID == "" {
			continue
		}
		out[im.RootSnapshotID] = snapView{seq: im.Seq, id: im.RootSnapshotID, volumeID: "vol-ffffffff", ownerID: im.OwnerID,
			ownerAlias: "amazon", size: im.RootSizeGiB, state: snapCompleted, start: wire.FormatTime(im.CreationDate),
			progress: "100%", description: "Root snapshot of " + im.Name}
	}
	for _, sn := range s.model.Snapshots {
		v := snapView{seq: sn.Seq, id: sn.ID, volumeID: sn.VolumeID, ownerID: s.account, size: sn.SizeGiB,
			state: sn.State, description: sn.Description, encrypted: sn.Encrypted, kms: sn.KMSKeyID,
			start: wire.FormatTime(sn.StartTime), progress: "100%", tags: sn.Tags}
		if sn.State == snapPending {
			v.progress = "0%"
		}
		if v.kms != "" && v.kms[0] == 'a' {
			v.kms = fmt.Sprintf("arn:aws:kms:%s:%s:alias/aws/ebs", s.region, s.account)
		}
		out[sn.ID] = v
	}
	return out
}

// snapshotSize is the size and encryption of a snapshot a volume may be created from.
// Callers hold s.mu.
func (s *Server) snapshotSize(id string) (int32, bool, *wire.Error) {
	v, ok := s.snapViews()[id]
	if !ok {
		return 0, false, errSnapshotNotFound(id)
	}
	if v.state != snapCompleted {
		return 0, false, wire.BadRequest(wire.CodeIncorrectState, "Snapshot is in invalid state - %s", v.state)
	}
	return v.size, v.encrypted, nil
}

func errSnapshotNotFound(id string) *wire.Error {
	if !validID(id, "snap") {
		return wire.BadRequest("InvalidSnapshotID.Malformed", "Invalid id: \"%s\" (expecting \"snap-...\")", id)
	}
	return wire.BadRequest("InvalidSnapshot.NotFound", "The snapshot '%s' does not exist.", id)
}

// --- CreateSnapshot ---

type createSnapshotResponse struct {
	wire.Header
	xmlSnapshot
}

var snapshotTagTypes = map[string]bool{"snapshot": true}

func (s *Server) createSnapshot(c *call) (wire.Response, *wire.Error) {
	vid := c.q.Str("VolumeId")
	tags, err := specTags(c.q, snapshotTagTypes)
	if err != nil {
		return nil, err
	}
	if len(c.q.Str("Description")) > 255 {
		return nil, wire.InvalidValue("The description exceeds 255 characters.")
	}
	resp := &createSnapshotResponse{}
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
		resp.xmlSnapshot = s.snapViews()[sn.ID].wire()
		s.advanceLocked(c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// --- DescribeSnapshots ---

type describeSnapshotsResponse struct {
	wire.Header
	Snapshots []xmlSnapshot `xml:"snapshotSet>item"`
	NextToken string        `xml:"nextToken,omitempty"`
}

var snapAttrs = wire.AttrTable[snapView]{
	"snapshot-id": func(v snapView) []string { return wire.One(v.id) },
	"volume-id":   func(v snapView) []string { return wire.One(v.volumeID) },
	"status":      func(v snapView) []string { return wire.One(v.state) },
	"owner-id":    func(v snapView) []string { return wire.One(v.ownerID) },
	"owner-alias": func(v snapView) []string { return wire.One(v.ownerAlias) },
	"description": func(v snapView) []string { return wire.One(v.description) },
	"volume-size": func(v snapView) []string { return []string{strconv.Itoa(int(v.size))} },
	"encrypted":   func(v snapView) []string { return wire.One(wire.FormatBool(v.encrypted)) },
	"progress":    func(v snapView) []string { return wire.One(v.progress) },
	"start-time":  func(v snapView) []string { return wire.One(v.start) },
	"storage-tier": func(v snapView) []string {
		return wire.One("standard")
	},
}

func (s *Server) describeSnapshots(c *call) (wire.Response, *wire.Error) {
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
				ok = ok || o == v.ownerID || (o == "self" && v.ownerID == s.account) || (o == "amazon" && v.ownerAlias == "amazon")
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
	resp := &describeSnapshotsResponse{NextToken: next}
	for _, v := range page {
		resp.Snapshots = append(resp.Snapshots, v.wire())
	}
	return resp, nil
}

// --- DeleteSnapshot ---

func (s *Server) deleteSnapshot(c *call) (wire.Response, *wire.Error) {
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
