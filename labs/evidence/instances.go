package evidence

import (
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/trail"
)

// correlateInstances joins each described instance to its bill, its launch and termination
// calls, and the disks and interfaces it ever had.
func correlateInstances(s *Snapshot) []InstanceRow {
	j := instanceJoin{ledger: s.LedgerByResource(), volumes: map[string]ec2types.Volume{},
		enis: map[string]ec2types.NetworkInterface{}, instanceAudit: readInstanceAudit(s.Audit)}
	for _, v := range s.Volumes {
		j.volumes[aws.ToString(v.VolumeId)] = v
	}
	for _, n := range s.ENIs {
		j.enis[aws.ToString(n.NetworkInterfaceId)] = n
	}
	var rows []InstanceRow
	for _, in := range s.Instances {
		rows = append(rows, j.row(in))
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].LaunchTime.Equal(rows[j].LaunchTime) {
			return rows[i].LaunchTime.Before(rows[j].LaunchTime)
		}
		return rows[i].ID < rows[j].ID
	})
	return rows
}

// instanceJoin is what correlateInstances joins to each described instance, by ID.
type instanceJoin struct {
	ledger  map[string]billing.LedgerEntry
	volumes map[string]ec2types.Volume
	enis    map[string]ec2types.NetworkInterface
	instanceAudit
}

// instanceAudit is what the audit trail tells of each instance. The launch call names
// everything the instance came with; AWS stops describing a terminated instance's disks and
// interface, the audit trail does not.
type instanceAudit struct {
	launches map[string]*instanceLaunch
	// attached are disks and interfaces attached after launch (AttachVolume, AttachNetworkInterface).
	attached     map[string][]string
	terminations map[string]trail.AuditEvent
}

type instanceLaunch struct {
	e       trail.AuditEvent
	volumes []string
	enis    []string
}

func readInstanceAudit(audit []trail.AuditEvent) instanceAudit {
	a := instanceAudit{launches: map[string]*instanceLaunch{}, attached: map[string][]string{},
		terminations: map[string]trail.AuditEvent{}}
	for _, e := range audit {
		if e.ErrorCode != "" {
			continue
		}
		switch e.Action {
		case "CreateFleet", "RunInstances":
			var current *instanceLaunch
			for _, id := range e.Created {
				switch {
				case strings.HasPrefix(id, "i-"):
					current = &instanceLaunch{e: e}
					a.launches[id] = current
				case strings.HasPrefix(id, "vol-") && current != nil:
					current.volumes = append(current.volumes, id)
				case strings.HasPrefix(id, "eni-") && current != nil:
					current.enis = append(current.enis, id)
				}
			}
		case "AttachVolume", "AttachNetworkInterface":
			if id, what := e.Parameters["InstanceId"], e.Parameters["VolumeId"]+e.Parameters["NetworkInterfaceId"]; id != "" && what != "" {
				a.attached[id] = append(a.attached[id], what)
			}
		case "TerminateInstances", fakeec2.ActionBidEvicted: // a caller's, or EC2 reclaiming spot
			for _, id := range e.Terminated {
				if _, seen := a.terminations[id]; !seen {
					a.terminations[id] = e
				}
			}
		}
	}
	return a
}

// row is one instance as described, with its bill, launch and termination calls, disks and interfaces.
func (j *instanceJoin) row(in ec2types.Instance) InstanceRow {
	id := aws.ToString(in.InstanceId)
	row := InstanceRow{
		ID: id, Type: string(in.InstanceType), State: string(in.State.Name),
		SubnetID: aws.ToString(in.SubnetId), PrivateDNS: aws.ToString(in.PrivateDnsName),
		ImageID: aws.ToString(in.ImageId), LaunchTime: aws.ToTime(in.LaunchTime).UTC(),
		Tags: tagMap(in.Tags), CapacityType: "on-demand",
	}
	if in.Placement != nil {
		row.Zone = aws.ToString(in.Placement.AvailabilityZone)
	}
	if in.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		row.CapacityType = "spot"
	}
	if in.MetadataOptions != nil {
		row.HTTPTokens = string(in.MetadataOptions.HttpTokens)
	}
	row.NodeClaim, row.NodePool = row.Tags["karpenter.sh/nodeclaim"], row.Tags["karpenter.sh/nodepool"]
	row.FleetID = row.Tags[fakeec2.TagFleetID]
	if lt := row.Tags[fakeec2.TagLaunchTemplateID]; lt != "" {
		row.LaunchTemplate = lt + ":" + row.Tags[fakeec2.TagLaunchTemplateVersion]
	}
	if l, ok := j.ledger[id]; ok {
		row.PricePerHour, row.CostUSD, row.BilledUntil = l.PricePerHour, l.AccruedUSD, l.Stopped
	}
	if t, ok := j.terminations[id]; ok {
		at := t.Time.UTC()
		row.TerminatedAt, row.TerminatedBy = &at, t.Caller
	}
	if l := j.launches[id]; l != nil {
		row.LaunchedBy = l.e.Caller
		row.LaunchCall = l.e.Action + " " + l.e.RequestID
	}
	volIDs, eniIDs := j.deviceIDs(in, id)
	ended := in.State != nil && in.State.Name == ec2types.InstanceStateNameTerminated
	for _, vid := range volIDs {
		row.Volumes = append(row.Volumes, j.volumeRow(in, vid, ended))
	}
	for _, nid := range eniIDs {
		er := ENIRow{ID: nid, Deleted: true}
		if n, ok := j.enis[nid]; ok {
			er.Deleted, er.PrivateIP, er.Tags = false, aws.ToString(n.PrivateIpAddress), tagMap(n.TagSet)
		}
		er.Outlived = ended && !er.Deleted
		row.ENIs = append(row.ENIs, er)
	}
	return row
}

// deviceIDs lists the volumes and interfaces an instance ever had: launched with it, described
// on it, or attached later.
func (j *instanceJoin) deviceIDs(in ec2types.Instance, id string) (volIDs, eniIDs []string) {
	volIDs, eniIDs = []string{}, []string{}
	if l := j.launches[id]; l != nil {
		volIDs, eniIDs = l.volumes, l.enis
	}
	for _, bd := range in.BlockDeviceMappings {
		if bd.Ebs != nil {
			volIDs = appendNew(volIDs, aws.ToString(bd.Ebs.VolumeId))
		}
	}
	for _, ni := range in.NetworkInterfaces {
		eniIDs = appendNew(eniIDs, aws.ToString(ni.NetworkInterfaceId))
	}
	for _, later := range j.attached[id] {
		if strings.HasPrefix(later, "vol-") {
			volIDs = appendNew(volIDs, later)
		} else {
			eniIDs = appendNew(eniIDs, later)
		}
	}
	return volIDs, eniIDs
}

// volumeRow is one of an instance's volumes: the ledger remembers a deleted one, EC2 describes
// a live one (and wins).
func (j *instanceJoin) volumeRow(in ec2types.Instance, vid string, ended bool) VolumeRow {
	vr := VolumeRow{ID: vid, Deleted: true}
	if l, ok := j.ledger[vid]; ok {
		vr.SizeGiB, vr.Type, vr.CostUSD, vr.Tags = l.SizeGiB, l.Type, l.AccruedUSD, l.Tags
		vr.Encrypted = l.Encrypted
	}
	if v, ok := j.volumes[vid]; ok {
		vr.Deleted = v.State == ec2types.VolumeStateDeleted
		vr.SizeGiB, vr.Type, vr.Tags = aws.ToInt32(v.Size), string(v.VolumeType), tagMap(v.Tags)
		vr.Encrypted = v.Encrypted
		for _, a := range v.Attachments {
			vr.DeleteOnTermination = a.DeleteOnTermination
		}
	}
	for _, bd := range in.BlockDeviceMappings {
		if bd.Ebs != nil && aws.ToString(bd.Ebs.VolumeId) == vid {
			vr.DeleteOnTermination = bd.Ebs.DeleteOnTermination
		}
	}
	vr.Outlived = ended && !vr.Deleted
	return vr
}
