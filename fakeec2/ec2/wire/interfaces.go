package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// The XML shapes of the network interface actions (CreateNetworkInterface,
// AttachNetworkInterface, DescribeNetworkInterfaces) and NetworkInterface, which renders
// an interface in them.

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

// NetworkInterfaceItem is an interface as DescribeNetworkInterfaces answers it.
type NetworkInterfaceItem struct {
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
	Groups             []Group           `xml:"groupSet>item"`
	Attachment         *xmlENIAttachment `xml:"attachment,omitempty"`
	Tags               []Tag             `xml:"tagSet>item"`
	PrivateIPs         []xmlPrivateIP    `xml:"privateIpAddressesSet>item"`
	InterfaceType      string            `xml:"interfaceType"`
}

// NetworkInterface renders n as DescribeNetworkInterfaces does, owned by env's account,
// its security groups named from env's model.
func (env Env) NetworkInterface(n *ec2.NetworkInterface) NetworkInterfaceItem {
	x := NetworkInterfaceItem{NetworkInterfaceID: n.ID, SubnetID: n.SubnetID, VpcID: n.VpcID, AvailabilityZone: n.Zone,
		AvailabilityZoneID: n.ZoneID, Description: n.Description, OwnerID: env.Account, Status: n.Status,
		MacAddress: n.MAC, PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS, SourceDestCheck: true,
		Tags: Tags(n.Tags), InterfaceType: n.InterfaceType, Groups: env.groups(n.Groups),
		PrivateIPs: []xmlPrivateIP{{PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS, Primary: true}}}
	if n.InstanceID != "" {
		x.Attachment = &xmlENIAttachment{AttachmentID: n.AttachmentID, InstanceID: n.InstanceID, InstanceOwnerID: env.Account,
			DeviceIndex: n.DeviceIndex, Status: "attached", AttachTime: FormatTime(n.AttachTime), DeleteOnTermination: n.DeleteOnTermination}
	}
	return x
}

// CreateNetworkInterfaceResponse is the body of its action's answer.
type CreateNetworkInterfaceResponse struct {
	Header
	Interface NetworkInterfaceItem `xml:"networkInterface"`
}

// AttachNetworkInterfaceResponse is the body of its action's answer.
type AttachNetworkInterfaceResponse struct {
	Header
	AttachmentID     string `xml:"attachmentId"`
	NetworkCardIndex int    `xml:"networkCardIndex"`
}

// DescribeNetworkInterfacesResponse is the body of its action's answer.
type DescribeNetworkInterfacesResponse struct {
	Header
	Interfaces []NetworkInterfaceItem `xml:"networkInterfaceSet>item"`
	NextToken  string                 `xml:"nextToken,omitempty"`
}
