package service

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/statefile"
)

// Bucket names of EC2's records in the account's state file, which package statefile
// writes. Every record is JSON keyed by its ID.
const (
	bucketInstances = "instances"
	bucketVolumes   = "volumes"
	bucketENIs      = "enis"
	bucketTemplates = "launch-templates"
	bucketVPCs      = "vpcs"
	bucketSubnets   = "subnets"
	bucketGroups    = "security-groups"
	bucketImages    = "images"
	bucketFleets    = "fleets"
	bucketLedger    = "ledger"
	// BucketMeta holds EC2's counters under "meta"; the account keeps its own record there.
	BucketMeta = "meta"
)

// Buckets are the state file's buckets EC2 writes; the account opens the file with them.
var Buckets = []string{bucketInstances, bucketVolumes, bucketENIs, bucketTemplates, bucketVPCs,
	bucketSubnets, bucketGroups, bucketImages, bucketFleets, bucketLedger, BucketMeta, bucketIdempotency, bucketSnapshots}

// metaRecord is EC2's own counters under the meta bucket's "meta" key. Records written
// before the account kept its own ("account") also hold the policy and the clock's lead,
// which the account reads from here once.
type metaRecord struct {
	Seq    uint64  `json:"seq"`
	Faults []Fault `json:"faults"`
}

// load reads EC2's records; seeded is false for a new, empty state file.
func (s *Service) load() (seeded bool, err error) {
	p := s.persist
	var meta *metaRecord
	if err := p.Load(BucketMeta, func(k, v []byte) error {
		if string(k) != "meta" {
			return nil
		}
		meta = &metaRecord{}
		return json.Unmarshal(v, meta)
	}); err != nil {
		return false, fmt.Errorf("reading meta: %w", err)
	}
	if meta == nil {
		return false, nil
	}
	s.seq, s.faults = meta.Seq, meta.Faults
	errs := []error{
		statefile.LoadJSON(p, bucketVPCs, func(r *ec2.VPC) { s.model.VPCs[r.ID] = r }),
		statefile.LoadJSON(p, bucketSubnets, func(r *ec2.Subnet) { s.model.Subnets[r.ID] = r }),
		statefile.LoadJSON(p, bucketGroups, func(r *ec2.SecurityGroup) { s.model.Groups[r.ID] = r }),
		statefile.LoadJSON(p, bucketImages, func(r *ec2.Image) { s.model.Images[r.ID] = r }),
		statefile.LoadJSON(p, bucketInstances, func(r *ec2.Instance) { s.model.Instances[r.ID] = r }),
		statefile.LoadJSON(p, bucketVolumes, func(r *ec2.Volume) { s.model.Volumes[r.ID] = r }),
		statefile.LoadJSON(p, bucketENIs, func(r *ec2.NetworkInterface) { s.model.ENIs[r.ID] = r }),
		statefile.LoadJSON(p, bucketTemplates, func(r *ec2.LaunchTemplate) { s.model.Templates[r.ID] = r; s.model.LTByName[r.Name] = r.ID }),
		statefile.LoadJSON(p, bucketFleets, func(r *ec2.Fleet) { s.model.Fleets[r.ID] = r }),
		statefile.LoadJSON(p, bucketSnapshots, func(r *ec2.Snapshot) { s.model.Snapshots[r.ID] = r }),
		statefile.LoadJSON(p, bucketLedger, func(r *billing.LedgerEntry) { s.ledger[r.ResourceID] = r }),
		s.loadIdempotency(),
	}
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	for _, n := range s.model.ENIs {
		s.model.MarkIP(n.SubnetID, n.PrivateIP)
	}
	for _, in := range s.model.Instances {
		s.scheduleDeadline(in)
		s.model.InstTags.Add(in.ID, in.Tags)
	}
	s.scheduleEBSDeadlines()
	return true, nil
}

// save records a changed record for the next flush.
func (s *Service) save(bucket, key string, v any) {
	if s.persist == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeec2: encoding %s/%s: %v", bucket, key, err)) // our own types: a bug
	}
	s.pending = append(s.pending, statefile.Op{Bucket: bucket, Key: key, Val: b})
}

func (s *Service) remove(bucket, key string) {
	if s.persist == nil {
		return
	}
	s.pending = append(s.pending, statefile.Op{Bucket: bucket, Key: key})
}

func (s *Service) saveMeta() {
	s.save(BucketMeta, "meta", metaRecord{Seq: s.seq, Faults: s.faults})
}

// flushLocked queues the pending writes; the channel reports when they are on disk.
func (s *Service) flushLocked() <-chan error {
	ops := s.pending
	s.pending = nil
	return s.persist.Enqueue(ops)
}
