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

// --- DescribeNetworkInterfaces ---

type xmlENIAttachment struct {
	AttachmentID        string `xml:"attachmentId"`
	InstanceID          string `xml:"instanceId"`
	InstanceOwnerID     string `xml:"instanceOwnerId"`
	DeviceIndex         int    `xml:"deviceIndex"`
	NetworkCardIndex    int    `xml:"networkCardIndex"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type xmlENI struct {
	NetworkInterfaceID string            `xml:"networkInterfaceId"`
	SubnetID           string            `xml:"subnetId"`
	VpcID              string            `xml:"vpcId"`
	AvailabilityZone   string            `xml:"availabilityZone"`
	AvailabilityZoneID string            `xml:"availabilityZoneId"`
	Description        string            `xml:"description"`
	OwnerID            string            `xml:"ownerId"`
	RequesterManaged   bool              `xml:"requesterManaged"`
	Status             string            `xml:"status"`
	MacAddress         string            `xml:"macAddress"`
	PrivateIPAddress   string            `xml:"privateIpAddress"`
	PrivateDNSName     string            `xml:"privateDnsName"`
	SourceDestCheck    bool              `xml:"sourceDestCheck"`
	Groups             []wire.Group      `xml:"groupSet>item"`
	Attachment         *xmlENIAttachment `xml:"attachment,omitempty"`
	Tags               []wire.Tag        `xml:"tagSet>item"`
	PrivateIPs         []xmlPrivateIP    `xml:"privateIpAddressesSet>item"`
	InterfaceType      string            `xml:"interfaceType"`
}

type describeENIsResponse struct {
	wire.Header
	Interfaces []xmlENI `xml:"networkInterfaceSet>item"`
	NextToken  string   `xml:"nextToken,omitempty"`
}

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

func (s *Server) describeNetworkInterfaces(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.NetworkInterface]{Attrs: eniAttrs, Tags: func(n *ec2.NetworkInterface) []ec2.Tag { return n.Tags },
		Min: 5, Max: 1000, IDParam: "NetworkInterfaceId", WithMax: wire.SetWithMax("networkInterfaceIdSet"),
		Seq: func(n *ec2.NetworkInterface) uint64 { return n.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	resp := &describeENIsResponse{}
	page, next, err := req.Run(s.model.ENIs, func(id string) *wire.Error {
		return wire.BadRequest(wire.CodeInvalidNetworkInterfaceNotFound, "The networkInterface ID '%s' does not exist", id)
	})
	if err != nil {
		return nil, err
	}
	resp.NextToken = next
	for _, n := range page {
		x := xmlENI{NetworkInterfaceID: n.ID, SubnetID: n.SubnetID, VpcID: n.VpcID, AvailabilityZone: n.Zone,
			AvailabilityZoneID: n.ZoneID, Description: n.Description, OwnerID: s.account, Status: n.Status,
			MacAddress: n.MAC, PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS, SourceDestCheck: true,
			Tags: wire.Tags(n.Tags), InterfaceType: n.InterfaceType,
			PrivateIPs: []xmlPrivateIP{{PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS, Primary: true}}}
		for _, g := range n.Groups {
			x.Groups = append(x.Groups, wire.Group{GroupID: g, GroupName: s.groupName(g)})
		}
		if n.InstanceID != "" {
			x.Attachment = &xmlENIAttachment{AttachmentID: n.AttachmentID, InstanceID: n.InstanceID, InstanceOwnerID: s.account,
				DeviceIndex: n.DeviceIndex, Status: "attached", AttachTime: wire.FormatTime(n.AttachTime), DeleteOnTermination: n.DeleteOnTermination}
		}
		resp.Interfaces = append(resp.Interfaces, x)
	}
	return resp, nil
}
