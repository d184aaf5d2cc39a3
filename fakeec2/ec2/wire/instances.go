package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// The XML shapes of the instance actions (RunInstances, Terminate-, Stop- and
// StartInstances, DescribeInstances, DescribeInstanceStatus, DescribeInstanceAttribute,
// ModifyInstanceMetadataOptions, GetConsoleOutput) and the conversions that render an
// instance in them.

// ReservationItem is one reservation of DescribeInstances' reservationSet.
type ReservationItem struct {
	ReservationID string         `xml:"reservationId"`
	OwnerID       string         `xml:"ownerId"`
	Groups        []Group        `xml:"groupSet>item"`
	Instances     []InstanceItem `xml:"instancesSet>item"`
}

// RunInstancesResponse is the body of its action's answer: the one reservation launched.
type RunInstancesResponse struct {
	Header
	ReservationID string         `xml:"reservationId"`
	OwnerID       string         `xml:"ownerId"`
	Groups        []Group        `xml:"groupSet>item"`
	Instances     []InstanceItem `xml:"instancesSet>item"`
}

// StateChangeItem is one instance's move in Terminate-, Stop- and StartInstances' answers.
type StateChangeItem struct {
	InstanceID    string `xml:"instanceId"`
	CurrentState  State  `xml:"currentState"`
	PreviousState State  `xml:"previousState"`
}

// StateChange is instance id's move from state prev to state cur.
func StateChange(id, prev, cur string) StateChangeItem {
	return StateChangeItem{InstanceID: id, CurrentState: InstanceState(cur), PreviousState: InstanceState(prev)}
}

// StateChangesResponse is the body of TerminateInstances', StopInstances' and
// StartInstances' answers.
type StateChangesResponse struct {
	Header
	Instances []StateChangeItem `xml:"instancesSet>item"`
}

// InstanceState is the named instance state with EC2's code for it.
func InstanceState(name string) State { return State{Code: ec2.StateCodes[name], Name: name} }

type xmlPlacement struct {
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
	GroupName          string `xml:"groupName"`
	Tenancy            string `xml:"tenancy"`
}

type xmlEbsInstanceDevice struct {
	VolumeID            string `xml:"volumeId"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

// InstanceBlockDevice is one item of an instance's blockDeviceMapping.
type InstanceBlockDevice struct {
	DeviceName string               `xml:"deviceName"`
	Ebs        xmlEbsInstanceDevice `xml:"ebs"`
}

type xmlInstanceENIAttachment struct {
	AttachmentID        string `xml:"attachmentId"`
	DeviceIndex         int    `xml:"deviceIndex"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
	NetworkCardIndex    int    `xml:"networkCardIndex"`
}

type xmlPrivateIP struct {
	PrivateIPAddress string `xml:"privateIpAddress"`
	PrivateDNSName   string `xml:"privateDnsName"`
	Primary          bool   `xml:"primary"`
}

type xmlInstanceENI struct {
	NetworkInterfaceID string                   `xml:"networkInterfaceId"`
	SubnetID           string                   `xml:"subnetId"`
	VpcID              string                   `xml:"vpcId"`
	Description        string                   `xml:"description"`
	OwnerID            string                   `xml:"ownerId"`
	Status             string                   `xml:"status"`
	MacAddress         string                   `xml:"macAddress"`
	PrivateIPAddress   string                   `xml:"privateIpAddress"`
	PrivateDNSName     string                   `xml:"privateDnsName"`
	SourceDestCheck    bool                     `xml:"sourceDestCheck"`
	Groups             []Group                  `xml:"groupSet>item"`
	Attachment         xmlInstanceENIAttachment `xml:"attachment"`
	PrivateIPs         []xmlPrivateIP           `xml:"privateIpAddressesSet>item"`
	InterfaceType      string                   `xml:"interfaceType"`
}

type xmlStateReason struct {
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

// MetadataOptionsItem is an instance's metadata options as EC2 answers them.
type MetadataOptionsItem struct {
	State                   string `xml:"state"`
	HTTPTokens              string `xml:"httpTokens"`
	HTTPPutResponseHopLimit int32  `xml:"httpPutResponseHopLimit"`
	HTTPEndpoint            string `xml:"httpEndpoint"`
	HTTPProtocolIPv6        string `xml:"httpProtocolIpv6"`
	InstanceMetadataTags    string `xml:"instanceMetadataTags"`
}

// MetadataOptions renders md in state (pending until a change applies, then applied).
func MetadataOptions(md ec2.MetadataOptions, state string) MetadataOptionsItem {
	return MetadataOptionsItem{State: state, HTTPTokens: md.HTTPTokens, HTTPPutResponseHopLimit: md.HTTPPutResponseHopLimit,
		HTTPEndpoint: md.HTTPEndpoint, HTTPProtocolIPv6: md.HTTPProtocolIPv6, InstanceMetadataTags: md.InstanceMetadataTags}
}

type xmlIAMProfile struct {
	Arn string `xml:"arn"`
	ID  string `xml:"id"`
}

type xmlValueState struct {
	State string `xml:"state"`
}

// InstanceItem is an instance as DescribeInstances and RunInstances answer it.
type InstanceItem struct {
	InstanceID            string                `xml:"instanceId"`
	ImageID               string                `xml:"imageId"`
	InstanceState         State                 `xml:"instanceState"`
	PrivateDNSName        string                `xml:"privateDnsName"`
	DNSName               string                `xml:"dnsName"`
	Reason                string                `xml:"reason"`
	KeyName               string                `xml:"keyName,omitempty"`
	AmiLaunchIndex        int                   `xml:"amiLaunchIndex"`
	InstanceType          string                `xml:"instanceType"`
	LaunchTime            string                `xml:"launchTime"`
	Placement             xmlPlacement          `xml:"placement"`
	Monitoring            xmlValueState         `xml:"monitoring"`
	SubnetID              string                `xml:"subnetId,omitempty"`
	VpcID                 string                `xml:"vpcId,omitempty"`
	PrivateIPAddress      string                `xml:"privateIpAddress,omitempty"`
	SourceDestCheck       string                `xml:"sourceDestCheck,omitempty"`
	Groups                []Group               `xml:"groupSet>item"`
	StateReason           *xmlStateReason       `xml:"stateReason,omitempty"`
	Architecture          string                `xml:"architecture"`
	RootDeviceType        string                `xml:"rootDeviceType"`
	RootDeviceName        string                `xml:"rootDeviceName"`
	BlockDeviceMapping    []InstanceBlockDevice `xml:"blockDeviceMapping>item"`
	InstanceLifecycle     string                `xml:"instanceLifecycle,omitempty"`
	SpotInstanceRequestID string                `xml:"spotInstanceRequestId,omitempty"`
	VirtualizationType    string                `xml:"virtualizationType"`
	ClientToken           string                `xml:"clientToken"`
	Tags                  []Tag                 `xml:"tagSet>item"`
	Hypervisor            string                `xml:"hypervisor"`
	NetworkInterfaces     []xmlInstanceENI      `xml:"networkInterfaceSet>item"`
	IAMInstanceProfile    *xmlIAMProfile        `xml:"iamInstanceProfile,omitempty"`
	EbsOptimized          bool                  `xml:"ebsOptimized"`
	EnaSupport            bool                  `xml:"enaSupport"`
	CPUOptions            struct {
		CoreCount      int32 `xml:"coreCount"`
		ThreadsPerCore int32 `xml:"threadsPerCore"`
	} `xml:"cpuOptions"`
	CapacityReservationSpecification struct {
		Preference string `xml:"capacityReservationPreference"`
	} `xml:"capacityReservationSpecification"`
	HibernationOptions struct {
		Configured bool `xml:"configured"`
	} `xml:"hibernationOptions"`
	MetadataOptions MetadataOptionsItem `xml:"metadataOptions"`
	EnclaveOptions  struct {
		Enabled bool `xml:"enabled"`
	} `xml:"enclaveOptions"`
	BootMode              string `xml:"bootMode"`
	PlatformDetails       string `xml:"platformDetails"`
	UsageOperation        string `xml:"usageOperation"`
	UsageOperationUpdated string `xml:"usageOperationUpdateTime"`
	PrivateDNSNameOptions struct {
		HostnameType                    string `xml:"hostnameType"`
		EnableResourceNameDNSARecord    bool   `xml:"enableResourceNameDnsARecord"`
		EnableResourceNameDNSAAAARecord bool   `xml:"enableResourceNameDnsAAAARecord"`
	} `xml:"privateDnsNameOptions"`
	MaintenanceOptions struct {
		AutoRecovery string `xml:"autoRecovery"`
	} `xml:"maintenanceOptions"`
	CurrentInstanceBootMode string `xml:"currentInstanceBootMode"`
}

// Instance renders in as DescribeInstances does; its security groups, volumes and network
// interfaces are looked up in env's model, its CPU options in env's catalog.
func (env Env) Instance(in *ec2.Instance) InstanceItem {
	x := InstanceItem{
		InstanceID: in.ID, ImageID: in.ImageID, InstanceState: InstanceState(in.State), PrivateDNSName: in.PrivateDNS,
		Reason: in.TransitionReason, KeyName: in.KeyName, AmiLaunchIndex: in.LaunchIndex, InstanceType: in.InstanceType,
		LaunchTime: FormatTime(in.LaunchTime),
		Placement:  xmlPlacement{AvailabilityZone: in.Zone, AvailabilityZoneID: in.ZoneID, Tenancy: "default"},
		Monitoring: xmlValueState{State: "disabled"}, SubnetID: in.SubnetID, VpcID: in.VpcID,
		PrivateIPAddress: in.PrivateIP, SourceDestCheck: "true", Architecture: in.Architecture,
		RootDeviceType: "ebs", RootDeviceName: in.RootDeviceName, VirtualizationType: "hvm", ClientToken: in.ClientToken,
		Tags: Tags(in.Tags), Hypervisor: "xen", EbsOptimized: true, EnaSupport: true,
		BootMode: bootMode(in.Architecture), CurrentInstanceBootMode: "uefi",
		PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances", UsageOperationUpdated: FormatTime(in.LaunchTime),
	}
	if in.Architecture != "arm64" {
		x.CurrentInstanceBootMode = "legacy-bios"
	}
	x.PrivateDNSNameOptions.HostnameType = "ip-name"
	x.MaintenanceOptions.AutoRecovery = "default"
	x.CapacityReservationSpecification.Preference = "open"
	if it := env.Types[in.InstanceType]; it != nil {
		threads := int32(2)
		if it.IsGraviton() {
			threads = 1
		}
		x.CPUOptions.CoreCount, x.CPUOptions.ThreadsPerCore = it.VCPUs/threads, threads
	}
	if in.CapacityType == "spot" {
		x.InstanceLifecycle, x.SpotInstanceRequestID = "spot", in.SpotRequestID
	}
	x.Groups = env.groups(in.SecurityGroups)
	mdState := "applied"
	if in.State == ec2.StatePending || env.Now.Before(in.MetadataAppliedAt) {
		mdState = "pending"
	}
	x.MetadataOptions = MetadataOptions(in.Metadata, mdState)
	if in.IAMProfileArn != "" {
		x.IAMInstanceProfile = &xmlIAMProfile{Arn: in.IAMProfileArn, ID: in.IAMProfileID}
	}
	if in.State == ec2.StateTerminated {
		x.StateReason = &xmlStateReason{Code: in.ReasonCode(), Message: in.StateReason}
		x.PrivateIPAddress, x.SubnetID, x.VpcID, x.SourceDestCheck = "", "", "", ""
		return x
	}
	if in.State == ec2.StateShuttingDown {
		x.StateReason = &xmlStateReason{Code: in.ReasonCode(), Message: in.ShuttingDownReason()}
	}
	x.BlockDeviceMapping, x.NetworkInterfaces = env.instanceDevices(in), env.instanceENIs(in)
	if in.State == ec2.StateStopping || in.State == ec2.StateStopped {
		x.StateReason = &xmlStateReason{Code: "Client.UserInitiatedShutdown", Message: in.StateReason}
	}
	return x
}

// instanceDevices are in's attached volumes that still exist.
func (env Env) instanceDevices(in *ec2.Instance) []InstanceBlockDevice {
	var out []InstanceBlockDevice
	for _, av := range in.Volumes {
		if env.Model.Volumes[av.VolumeID] == nil {
			continue
		}
		out = append(out, InstanceBlockDevice{DeviceName: av.DeviceName,
			Ebs: xmlEbsInstanceDevice{VolumeID: av.VolumeID, Status: "attached", AttachTime: FormatTime(av.AttachTime),
				DeleteOnTermination: av.DeleteOnTermination}})
	}
	return out
}

// instanceENIs are in's network interfaces that still exist, the primary first.
func (env Env) instanceENIs(in *ec2.Instance) []xmlInstanceENI {
	var out []xmlInstanceENI
	for _, id := range append([]string{in.ENIID}, in.SecondaryENIs...) {
		if n := env.Model.ENIs[id]; n != nil {
			out = append(out, env.instanceENI(n))
		}
	}
	return out
}

// instanceENI renders an attached interface inside DescribeInstances.
func (env Env) instanceENI(n *ec2.NetworkInterface) xmlInstanceENI {
	return xmlInstanceENI{NetworkInterfaceID: n.ID, SubnetID: n.SubnetID, VpcID: n.VpcID, Description: n.Description,
		OwnerID: env.Account, Status: n.Status, MacAddress: n.MAC, PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS,
		SourceDestCheck: true, Attachment: xmlInstanceENIAttachment{AttachmentID: n.AttachmentID, DeviceIndex: n.DeviceIndex,
			Status: "attached", AttachTime: FormatTime(n.AttachTime), DeleteOnTermination: n.DeleteOnTermination},
		PrivateIPs:    []xmlPrivateIP{{PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS, Primary: true}},
		InterfaceType: n.InterfaceType, Groups: env.groups(n.Groups)}
}

// DescribeInstancesResponse is the body of its action's answer.
type DescribeInstancesResponse struct {
	Header
	Reservations []ReservationItem `xml:"reservationSet>item"`
	NextToken    string            `xml:"nextToken,omitempty"`
}

// Reservations renders a page of instances grouped by reservation, each reservation where
// its first instance is, as DescribeInstances answers them.
func (env Env) Reservations(page []*ec2.Instance) []ReservationItem {
	var out []ReservationItem
	idx := map[string]int{}
	for _, in := range page {
		i, ok := idx[in.ReservationID]
		if !ok {
			i = len(out)
			idx[in.ReservationID] = i
			out = append(out, ReservationItem{ReservationID: in.ReservationID, OwnerID: in.OwnerID})
		}
		out[i].Instances = append(out[i].Instances, env.Instance(in))
	}
	return out
}

type xmlStatusDetail struct {
	Name   string `xml:"name"`
	Status string `xml:"status"`
}

type xmlStatusSummary struct {
	Status  string            `xml:"status"`
	Details []xmlStatusDetail `xml:"details>item"`
}

// InstanceStatusItem is one item of DescribeInstanceStatus' instanceStatusSet.
type InstanceStatusItem struct {
	InstanceID         string           `xml:"instanceId"`
	AvailabilityZone   string           `xml:"availabilityZone"`
	AvailabilityZoneID string           `xml:"availabilityZoneId"`
	InstanceState      State            `xml:"instanceState"`
	SystemStatus       xmlStatusSummary `xml:"systemStatus"`
	InstanceStatus     xmlStatusSummary `xml:"instanceStatus"`
}

// DescribeInstanceStatusResponse is the body of its action's answer.
type DescribeInstanceStatusResponse struct {
	Header
	Statuses  []InstanceStatusItem `xml:"instanceStatusSet>item"`
	NextToken string               `xml:"nextToken,omitempty"`
}

// InstanceHealth is the status of in's system and instance checks: ok when it runs,
// initializing while it is pending, not-applicable otherwise.
func InstanceHealth(in *ec2.Instance) string {
	switch in.State {
	case ec2.StateRunning:
		return "ok"
	case ec2.StatePending:
		return "initializing"
	}
	return "not-applicable"
}

// Reachability is the status of in's reachability check: passed, initializing, or ""
// when the check does not apply.
func Reachability(in *ec2.Instance) string {
	return map[string]string{"ok": "passed", "initializing": "initializing"}[InstanceHealth(in)]
}

// InstanceStatus renders in as DescribeInstanceStatus does: the same summary for its
// system and instance checks.
func InstanceStatus(in *ec2.Instance) InstanceStatusItem {
	sum := xmlStatusSummary{Status: InstanceHealth(in)}
	if reach := Reachability(in); reach != "" {
		sum.Details = []xmlStatusDetail{{Name: "reachability", Status: reach}}
	}
	return InstanceStatusItem{InstanceID: in.ID, AvailabilityZone: in.Zone, AvailabilityZoneID: in.ZoneID,
		InstanceState: InstanceState(in.State), SystemStatus: sum, InstanceStatus: sum}
}

type xmlBoolValue struct {
	Value bool `xml:"value"`
}

// DescribeInstanceAttributeResponse is the body of its action's answer: the one attribute
// asked for.
type DescribeInstanceAttributeResponse struct {
	Header
	InstanceID         string                `xml:"instanceId"`
	UserData           *Value                `xml:"userData,omitempty"`
	InstanceType       *Value                `xml:"instanceType,omitempty"`
	RootDeviceName     *Value                `xml:"rootDeviceName,omitempty"`
	ShutdownBehavior   *Value                `xml:"instanceInitiatedShutdownBehavior,omitempty"`
	DisableAPITerm     *xmlBoolValue         `xml:"disableApiTermination,omitempty"`
	DisableAPIStop     *xmlBoolValue         `xml:"disableApiStop,omitempty"`
	EbsOptimized       *xmlBoolValue         `xml:"ebsOptimized,omitempty"`
	EnaSupport         *xmlBoolValue         `xml:"enaSupport,omitempty"`
	SourceDestCheck    *xmlBoolValue         `xml:"sourceDestCheck,omitempty"`
	Groups             []Group               `xml:"groupSet>item"`
	BlockDeviceMapping []InstanceBlockDevice `xml:"blockDeviceMapping>item"`
}

// InstanceAttribute answers DescribeInstanceAttribute for attr of in; false when attr is
// not an attribute EC2 knows.
func (env Env) InstanceAttribute(in *ec2.Instance, attr string) (*DescribeInstanceAttributeResponse, bool) {
	resp := &DescribeInstanceAttributeResponse{InstanceID: in.ID}
	switch attr {
	case "userData":
		resp.UserData = &Value{Value: in.UserData}
	case "instanceType":
		resp.InstanceType = &Value{Value: in.InstanceType}
	case "rootDeviceName":
		resp.RootDeviceName = &Value{Value: in.RootDeviceName}
	case "instanceInitiatedShutdownBehavior":
		resp.ShutdownBehavior = &Value{Value: "terminate"}
	case "disableApiTermination":
		resp.DisableAPITerm = &xmlBoolValue{Value: in.DisableAPITermination}
	case "disableApiStop":
		resp.DisableAPIStop = &xmlBoolValue{Value: in.DisableAPIStop}
	case "ebsOptimized":
		resp.EbsOptimized = &xmlBoolValue{Value: true}
	case "enaSupport":
		resp.EnaSupport = &xmlBoolValue{Value: true}
	case "sourceDestCheck":
		resp.SourceDestCheck = &xmlBoolValue{Value: true}
	case "groupSet":
		resp.Groups = env.groups(in.SecurityGroups)
	case "blockDeviceMapping":
		resp.BlockDeviceMapping = env.Instance(in).BlockDeviceMapping
	default:
		return nil, false
	}
	return resp, true
}

// ModifyInstanceMetadataOptionsResponse is the body of its action's answer.
type ModifyInstanceMetadataOptionsResponse struct {
	Header
	InstanceID string              `xml:"instanceId"`
	Options    MetadataOptionsItem `xml:"instanceMetadataOptions"`
}

// GetConsoleOutputResponse is the body of its action's answer; Output is base64.
type GetConsoleOutputResponse struct {
	Header
	InstanceID string `xml:"instanceId"`
	Timestamp  string `xml:"timestamp"`
	Output     string `xml:"output"`
}
