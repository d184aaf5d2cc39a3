package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// The XML shapes of the VPC actions (DescribeVpcs, DescribeSubnets,
// DescribeSecurityGroups, DescribeAvailabilityZones, DescribeRouteTables,
// CreateSecurityGroup, DeleteSecurityGroup) and the conversions that render the network's
// records in them, owned by Env's account.

// ARN is the ARN of the EC2 resource id of kind (volume, subnet, security-group) in env's
// account and region.
func (env Env) ARN(kind, id string) string {
	return "arn:aws:ec2:" + env.Region + ":" + env.Account + ":" + kind + "/" + id
}

// VpcItem is a VPC as DescribeVpcs answers it.
type VpcItem struct {
	VpcID     string `xml:"vpcId"`
	OwnerID   string `xml:"ownerId"`
	State     string `xml:"state"`
	CidrBlock string `xml:"cidrBlock"`
	IsDefault string `xml:"isDefault"`
	Tenancy   string `xml:"instanceTenancy"`
	Tags      []Tag  `xml:"tagSet>item"`
}

// Vpc renders v as DescribeVpcs does.
func (env Env) Vpc(v *ec2.VPC) VpcItem {
	return VpcItem{VpcID: v.ID, OwnerID: env.Account, State: "available", CidrBlock: v.CIDR,
		IsDefault: FormatBool(v.IsDefault), Tenancy: "default", Tags: Tags(v.Tags)}
}

// DescribeVpcsResponse is the body of its action's answer.
type DescribeVpcsResponse struct {
	Header
	Vpcs      []VpcItem `xml:"vpcSet>item"`
	NextToken string    `xml:"nextToken,omitempty"`
}

// SubnetItem is a subnet as DescribeSubnets answers it.
type SubnetItem struct {
	SubnetID                string `xml:"subnetId"`
	SubnetArn               string `xml:"subnetArn"`
	State                   string `xml:"state"`
	VpcID                   string `xml:"vpcId"`
	OwnerID                 string `xml:"ownerId"`
	CidrBlock               string `xml:"cidrBlock"`
	AvailableIPAddressCount int    `xml:"availableIpAddressCount"`
	AvailabilityZone        string `xml:"availabilityZone"`
	AvailabilityZoneID      string `xml:"availabilityZoneId"`
	DefaultForAz            string `xml:"defaultForAz"`
	MapPublicIPOnLaunch     string `xml:"mapPublicIpOnLaunch"`
	AssignIpv6OnCreation    string `xml:"assignIpv6AddressOnCreation"`
	Tags                    []Tag  `xml:"tagSet>item"`
}

// Subnet renders x as DescribeSubnets does, its free addresses counted in env's model.
func (env Env) Subnet(x *ec2.Subnet) SubnetItem {
	return SubnetItem{SubnetID: x.ID, SubnetArn: env.ARN("subnet", x.ID), State: "available", VpcID: x.VpcID,
		OwnerID: env.Account, CidrBlock: x.CIDR, AvailableIPAddressCount: env.Model.FreeIPCount(x),
		AvailabilityZone: x.Zone, AvailabilityZoneID: x.ZoneID, DefaultForAz: FormatBool(x.IsDefault),
		MapPublicIPOnLaunch: "false", AssignIpv6OnCreation: "false", Tags: Tags(x.Tags)}
}

// DescribeSubnetsResponse is the body of its action's answer.
type DescribeSubnetsResponse struct {
	Header
	Subnets   []SubnetItem `xml:"subnetSet>item"`
	NextToken string       `xml:"nextToken,omitempty"`
}

// SecurityGroupItem is a security group as DescribeSecurityGroups answers it.
type SecurityGroupItem struct {
	OwnerID          string `xml:"ownerId"`
	GroupID          string `xml:"groupId"`
	GroupName        string `xml:"groupName"`
	GroupDescription string `xml:"groupDescription"`
	VpcID            string `xml:"vpcId"`
	SecurityGroupArn string `xml:"securityGroupArn"`
	Tags             []Tag  `xml:"tagSet>item"`
}

// SecurityGroup renders g as DescribeSecurityGroups does.
func (env Env) SecurityGroup(g *ec2.SecurityGroup) SecurityGroupItem {
	return SecurityGroupItem{OwnerID: env.Account, GroupID: g.ID, GroupName: g.Name, GroupDescription: g.Description,
		VpcID: g.VpcID, SecurityGroupArn: env.ARN("security-group", g.ID), Tags: Tags(g.Tags)}
}

// DescribeSecurityGroupsResponse is the body of its action's answer.
type DescribeSecurityGroupsResponse struct {
	Header
	Groups    []SecurityGroupItem `xml:"securityGroupInfo>item"`
	NextToken string              `xml:"nextToken,omitempty"`
}

// CreateSecurityGroupResponse is the body of its action's answer.
type CreateSecurityGroupResponse struct {
	Header
	Return           bool   `xml:"return"`
	GroupID          string `xml:"groupId"`
	SecurityGroupArn string `xml:"securityGroupArn"`
	Tags             []Tag  `xml:"tagSet>item,omitempty"`
}

// CreatedSecurityGroup answers CreateSecurityGroup with the new group g.
func (env Env) CreatedSecurityGroup(g *ec2.SecurityGroup) *CreateSecurityGroupResponse {
	return &CreateSecurityGroupResponse{Return: true, GroupID: g.ID, SecurityGroupArn: env.ARN("security-group", g.ID),
		Tags: Tags(g.Tags)}
}

// DeleteSecurityGroupResponse is the body of its action's answer.
type DeleteSecurityGroupResponse struct {
	Header
	Return  bool   `xml:"return"`
	GroupID string `xml:"groupId"`
}

// ZoneItem is an availability zone as DescribeAvailabilityZones answers it.
type ZoneItem struct {
	ZoneName           string `xml:"zoneName"`
	ZoneID             string `xml:"zoneId"`
	ZoneState          string `xml:"zoneState"`
	RegionName         string `xml:"regionName"`
	ZoneType           string `xml:"zoneType"`
	OptInStatus        string `xml:"optInStatus"`
	GroupName          string `xml:"groupName"`
	NetworkBorderGroup string `xml:"networkBorderGroup"`
}

// Zone renders the zone named name, of ID id, in env's region.
func (env Env) Zone(name, id string) ZoneItem {
	return ZoneItem{ZoneName: name, ZoneID: id, ZoneState: "available", RegionName: env.Region,
		ZoneType: "availability-zone", OptInStatus: "opt-in-not-required", GroupName: env.Region,
		NetworkBorderGroup: env.Region}
}

// DescribeAvailabilityZonesResponse is the body of its action's answer.
type DescribeAvailabilityZonesResponse struct {
	Header
	Zones []ZoneItem `xml:"availabilityZoneInfo>item"`
}

type xmlRoute struct {
	DestinationCidrBlock string `xml:"destinationCidrBlock"`
	GatewayID            string `xml:"gatewayId"`
	State                string `xml:"state"`
	Origin               string `xml:"origin"`
}

type xmlRouteTableAssociation struct {
	Main          bool   `xml:"main"`
	AssociationID string `xml:"routeTableAssociationId"`
	RouteTableID  string `xml:"routeTableId"`
	State         struct {
		State string `xml:"state"`
	} `xml:"associationState"`
}

// RouteTableItem is a route table as DescribeRouteTables answers it.
type RouteTableItem struct {
	RouteTableID string                     `xml:"routeTableId"`
	VpcID        string                     `xml:"vpcId"`
	OwnerID      string                     `xml:"ownerId"`
	Routes       []xmlRoute                 `xml:"routeSet>item"`
	Associations []xmlRouteTableAssociation `xml:"associationSet>item"`
	Tags         []Tag                      `xml:"tagSet>item"`
}

// MainRouteTable renders VPC vpcID's main route table id, with its association assocID
// and its one route, the local route of the VPC's CIDR.
func (env Env) MainRouteTable(id, assocID, vpcID, vpcCIDR string) RouteTableItem {
	a := xmlRouteTableAssociation{Main: true, AssociationID: assocID, RouteTableID: id}
	a.State.State = "associated"
	return RouteTableItem{RouteTableID: id, VpcID: vpcID, OwnerID: env.Account,
		Routes:       []xmlRoute{{DestinationCidrBlock: vpcCIDR, GatewayID: "local", State: "active", Origin: "CreateRouteTable"}},
		Associations: []xmlRouteTableAssociation{a}}
}

// DescribeRouteTablesResponse is the body of its action's answer.
type DescribeRouteTablesResponse struct {
	Header
	RouteTables []RouteTableItem `xml:"routeTableSet>item"`
	NextToken   string           `xml:"nextToken,omitempty"`
}
