package fakeec2

import (
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// --- DescribeVolumes ---

type xmlVolumeAttachment struct {
	VolumeID            string `xml:"volumeId"`
	InstanceID          string `xml:"instanceId"`
	Device              string `xml:"device"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type xmlVolume struct {
	VolumeID           string                `xml:"volumeId"`
	Size               int32                 `xml:"size"`
	SnapshotID         string                `xml:"snapshotId"`
	AvailabilityZone   string                `xml:"availabilityZone"`
	AvailabilityZoneID string                `xml:"availabilityZoneId"`
	Status             string                `xml:"status"`
	CreateTime         string                `xml:"createTime"`
	Attachments        []xmlVolumeAttachment `xml:"attachmentSet>item"`
	Tags               []wire.Tag            `xml:"tagSet>item"`
	VolumeType         string                `xml:"volumeType"`
	Iops               int32                 `xml:"iops,omitempty"`
	Throughput         int32                 `xml:"throughput,omitempty"`
	Encrypted          bool                  `xml:"encrypted"`
	KMSKeyID           string                `xml:"kmsKeyId,omitempty"`
	MultiAttachEnabled bool                  `xml:"multiAttachEnabled"`
	VolumeArn          string                `xml:"volumeArn"`
}

type describeVolumesResponse struct {
	wire.Header
	Volumes   []xmlVolume `xml:"volumeSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

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

func (s *Server) describeVolumes(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Volume]{Attrs: volumeAttrs, Tags: func(v *ec2.Volume) []ec2.Tag { return v.Tags },
		Min: 5, Max: 500, IDParam: "VolumeId", WithMax: wire.SetWithMax("volumeSet"), Seq: func(v *ec2.Volume) uint64 { return v.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	resp := &describeVolumesResponse{}
	page, next, err := req.Run(s.model.Volumes, func(id string) *wire.Error {
		if !validID(id, "vol") {
			return wire.BadRequest("InvalidVolumeID.Malformed", "Invalid id: \"%s\"", id)
		}
		return wire.BadRequest(wire.CodeInvalidVolumeNotFound, "The volume '%s' does not exist.", id)
	})
	if err != nil {
		return nil, err
	}
	resp.NextToken = next
	for _, v := range page {
		resp.Volumes = append(resp.Volumes, s.wireVolume(v))
	}
	return resp, nil
}
