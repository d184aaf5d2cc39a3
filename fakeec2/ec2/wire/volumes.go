package wire

import (
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// The XML shapes of the EBS actions (CreateVolume, AttachVolume, DetachVolume,
// DescribeVolumes, ModifyVolume, DescribeVolumesModifications, CreateSnapshot,
// DescribeSnapshots) and the conversions that render volumes, their modifications and
// snapshots in them.

// VolumeAttachmentItem is a volume's attachment as DescribeVolumes lists it.
type VolumeAttachmentItem struct {
	VolumeID            string `xml:"volumeId"`
	InstanceID          string `xml:"instanceId"`
	Device              string `xml:"device"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

// VolumeAttachment is attached volume v's attachment as it stands.
func VolumeAttachment(v *ec2.Volume) VolumeAttachmentItem {
	return VolumeAttachmentItem{VolumeID: v.ID, InstanceID: v.InstanceID, Device: v.Device, Status: v.AttachStatus(),
		AttachTime: FormatTime(v.AttachTime), DeleteOnTermination: v.DeleteOnTermination}
}

// VolumeAttachmentResponse is the body of AttachVolume's and DetachVolume's answers.
type VolumeAttachmentResponse struct {
	Header
	VolumeAttachmentItem
}

// VolumeItem is a volume as DescribeVolumes answers it.
type VolumeItem struct {
	VolumeID           string                 `xml:"volumeId"`
	Size               int32                  `xml:"size"`
	SnapshotID         string                 `xml:"snapshotId"`
	AvailabilityZone   string                 `xml:"availabilityZone"`
	AvailabilityZoneID string                 `xml:"availabilityZoneId"`
	Status             string                 `xml:"status"`
	CreateTime         string                 `xml:"createTime"`
	Attachments        []VolumeAttachmentItem `xml:"attachmentSet>item"`
	Tags               []Tag                  `xml:"tagSet>item"`
	VolumeType         string                 `xml:"volumeType"`
	Iops               int32                  `xml:"iops,omitempty"`
	Throughput         int32                  `xml:"throughput,omitempty"`
	Encrypted          bool                   `xml:"encrypted"`
	KMSKeyID           string                 `xml:"kmsKeyId,omitempty"`
	MultiAttachEnabled bool                   `xml:"multiAttachEnabled"`
	VolumeArn          string                 `xml:"volumeArn"`
}

// Volume renders v as DescribeVolumes does, its ARN and key in env's account and region.
func (env Env) Volume(v *ec2.Volume) VolumeItem {
	x := VolumeItem{VolumeID: v.ID, Size: v.SizeGiB, SnapshotID: v.SnapshotID, AvailabilityZone: v.Zone,
		AvailabilityZoneID: v.ZoneID, Status: v.State, CreateTime: FormatTime(v.CreateTime), Tags: Tags(v.Tags),
		VolumeType: v.Type, Iops: v.Iops, Throughput: v.Throughput, Encrypted: v.Encrypted, KMSKeyID: env.kmsKey(v.KMSKeyID),
		VolumeArn: env.ARN("volume", v.ID)}
	if v.InstanceID != "" {
		x.Attachments = []VolumeAttachmentItem{VolumeAttachment(v)}
	}
	return x
}

// kmsKey is a volume's or snapshot's key as EC2 reports it: the default key's alias
// (alias/aws/ebs) as its ARN in the account.
func (env Env) kmsKey(id string) string {
	if id != "" && id[0] == 'a' {
		return "arn:aws:kms:" + env.Region + ":" + env.Account + ":alias/aws/ebs"
	}
	return id
}

// CreateVolumeResponse is the body of its action's answer: the new volume.
type CreateVolumeResponse struct {
	Header
	VolumeItem
}

// DescribeVolumesResponse is the body of its action's answer.
type DescribeVolumesResponse struct {
	Header
	Volumes   []VolumeItem `xml:"volumeSet>item"`
	NextToken string       `xml:"nextToken,omitempty"`
}

// VolumeModificationItem is a volume's modification as ModifyVolume and
// DescribeVolumesModifications answer it.
type VolumeModificationItem struct {
	VolumeID          string `xml:"volumeId"`
	ModificationState string `xml:"modificationState"`
	TargetSize        int32  `xml:"targetSize"`
	TargetIops        int32  `xml:"targetIops,omitempty"`
	TargetVolumeType  string `xml:"targetVolumeType"`
	TargetThroughput  int32  `xml:"targetThroughput,omitempty"`
	TargetMultiAttach bool   `xml:"targetMultiAttachEnabled"`
	OriginalSize      int32  `xml:"originalSize"`
	OriginalIops      int32  `xml:"originalIops,omitempty"`
	OriginalType      string `xml:"originalVolumeType"`
	OriginalThr       int32  `xml:"originalThroughput,omitempty"`
	OriginalMulti     bool   `xml:"originalMultiAttachEnabled"`
	Progress          int64  `xml:"progress"`
	StartTime         string `xml:"startTime"`
	EndTime           string `xml:"endTime,omitempty"`
}

// VolumeModification renders volume vid's modification m as of now: modifying when it
// has just started, completed once it has ended, optimizing (half done) between.
func VolumeModification(vid string, m *ec2.VolumeModification, now time.Time) VolumeModificationItem {
	x := VolumeModificationItem{VolumeID: vid, TargetSize: m.TargetSize, TargetIops: m.TargetIops, TargetVolumeType: m.TargetType,
		TargetThroughput: m.TargetThroughput, OriginalSize: m.OrigSize, OriginalIops: m.OrigIops, OriginalType: m.OrigType,
		OriginalThr: m.OrigThroughput, StartTime: FormatTime(m.Start), ModificationState: "optimizing", Progress: 50}
	if !now.Before(m.End) {
		x.ModificationState, x.Progress, x.EndTime = "completed", 100, FormatTime(m.End)
	} else if now.Equal(m.Start) {
		x.ModificationState, x.Progress = "modifying", 0
	}
	return x
}

// ModifyVolumeResponse is the body of its action's answer.
type ModifyVolumeResponse struct {
	Header
	Modification VolumeModificationItem `xml:"volumeModification"`
}

// DescribeVolumesModificationsResponse is the body of its action's answer.
type DescribeVolumesModificationsResponse struct {
	Header
	Modifications []VolumeModificationItem `xml:"volumeModificationSet>item"`
	NextToken     string                   `xml:"nextToken,omitempty"`
}

// SnapshotItem is a snapshot as DescribeSnapshots answers it.
type SnapshotItem struct {
	SnapshotID  string `xml:"snapshotId"`
	VolumeID    string `xml:"volumeId"`
	Status      string `xml:"status"`
	StartTime   string `xml:"startTime"`
	Progress    string `xml:"progress"`
	OwnerID     string `xml:"ownerId"`
	OwnerAlias  string `xml:"ownerAlias,omitempty"`
	Description string `xml:"description"`
	VolumeSize  int32  `xml:"volumeSize"`
	Encrypted   bool   `xml:"encrypted"`
	KMSKeyID    string `xml:"kmsKeyId,omitempty"`
	StorageTier string `xml:"storageTier"`
	Tags        []Tag  `xml:"tagSet>item"`
}

// Snapshot renders the account's snapshot sn as DescribeSnapshots does.
func (env Env) Snapshot(sn *ec2.Snapshot) SnapshotItem {
	x := SnapshotItem{SnapshotID: sn.ID, VolumeID: sn.VolumeID, Status: sn.State, StartTime: FormatTime(sn.StartTime),
		Progress: "100%", OwnerID: env.Account, Description: sn.Description, VolumeSize: sn.SizeGiB,
		Encrypted: sn.Encrypted, KMSKeyID: env.kmsKey(sn.KMSKeyID), StorageTier: "standard", Tags: Tags(sn.Tags)}
	if sn.State == "pending" {
		x.Progress = "0%"
	}
	return x
}

// ImageSnapshot renders image im's root snapshot, which Amazon owns, as DescribeSnapshots
// does.
func ImageSnapshot(im *ec2.Image) SnapshotItem {
	return SnapshotItem{SnapshotID: im.RootSnapshotID, VolumeID: "vol-ffffffff", Status: "completed",
		StartTime: FormatTime(im.CreationDate), Progress: "100%", OwnerID: im.OwnerID, OwnerAlias: "amazon",
		Description: "Root snapshot of " + im.Name, VolumeSize: im.RootSizeGiB, StorageTier: "standard"}
}

// CreateSnapshotResponse is the body of its action's answer: the new snapshot.
type CreateSnapshotResponse struct {
	Header
	SnapshotItem
}

// DescribeSnapshotsResponse is the body of its action's answer.
type DescribeSnapshotsResponse struct {
	Header
	Snapshots []SnapshotItem `xml:"snapshotSet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}
