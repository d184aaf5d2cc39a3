package fakeec2

import (
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// The wire form of instances: the XML shapes EC2 answers the instance actions with
// (RunInstances, Terminate-, Stop- and StartInstances, DescribeInstances,
// DescribeInstanceStatus, DescribeInstanceAttribute), wireInstance and its helpers that
// render an instance in them, and the Describe handlers, which only read the model
// (instances.go: launching, state, lookups) and answer it.

// --- RunInstances ---

type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        []wire.Group  `xml:"groupSet>item"`
	Instances     []xmlInstance `xml:"instancesSet>item"`
}

type runInstancesResponse struct {
	wire.Header
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        []wire.Group  `xml:"groupSet>item"`
	Instances     []xmlInstance `xml:"instancesSet>item"`
}

// --- TerminateInstances ---

type xmlStateChange struct {
	InstanceID    string     `xml:"instanceId"`
	CurrentState  wire.State `xml:"currentState"`
	PreviousState wire.State `xml:"previousState"`
}

type terminateInstancesResponse struct {
	wire.Header
	Instances []xmlStateChange `xml:"instancesSet>item"`
}

func state(name string) wire.State { return wire.State{Code: ec2.StateCodes[name], Name: name} }

// --- DescribeInstances ---

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

type xmlInstanceBlockDevice struct {
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
	Groups             []wire.Group             `xml:"groupSet>item"`
	Attachment         xmlInstanceENIAttachment `xml:"attachment"`
	PrivateIPs         []xmlPrivateIP           `xml:"privateIpAddressesSet>item"`
	InterfaceType      string                   `xml:"interfaceType"`
}

type xmlStateReason struct {
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

type xmlMetadataOptions struct {
	State                   string `xml:"state"`
	HTTPTokens              string `xml:"httpTokens"`
	HTTPPutResponseHopLimit int32  `xml:"httpPutResponseHopLimit"`
	HTTPEndpoint            string `xml:"httpEndpoint"`
	HTTPProtocolIPv6        string `xml:"httpProtocolIpv6"`
	InstanceMetadataTags    string `xml:"instanceMetadataTags"`
}

type xmlIAMProfile struct {
	Arn string `xml:"arn"`
	ID  string `xml:"id"`
}

type xmlInstance struct {
	InstanceID            string                   `xml:"instanceId"`
	ImageID               string                   `xml:"imageId"`
	InstanceState         wire.State               `xml:"instanceState"`
	PrivateDNSName        string                   `xml:"privateDnsName"`
	DNSName               string                   `xml:"dnsName"`
	Reason                string                   `xml:"reason"`
	KeyName               string                   `xml:"keyName,omitempty"`
	AmiLaunchIndex        int                      `xml:"amiLaunchIndex"`
	InstanceType          string                   `xml:"instanceType"`
	LaunchTime            string                   `xml:"launchTime"`
	Placement             xmlPlacement             `xml:"placement"`
	Monitoring            xmlValueState            `xml:"monitoring"`
	SubnetID              string                   `xml:"subnetId,omitempty"`
	VpcID                 string                   `xml:"vpcId,omitempty"`
	PrivateIPAddress      string                   `xml:"privateIpAddress,omitempty"`
	SourceDestCheck       string                   `xml:"sourceDestCheck,omitempty"`
	Groups                []wire.Group             `xml:"groupSet>item"`
	StateReason           *xmlStateReason          `xml:"stateReason,omitempty"`
	Architecture          string                   `xml:"architecture"`
	RootDeviceType        string                   `xml:"rootDeviceType"`
	RootDeviceName        string                   `xml:"rootDeviceName"`
	BlockDeviceMapping    []xmlInstanceBlockDevice `xml:"blockDeviceMapping>item"`
	InstanceLifecycle     string                   `xml:"instanceLifecycle,omitempty"`
	SpotInstanceRequestID string                   `xml:"spotInstanceRequestId,omitempty"`
	VirtualizationType    string                   `xml:"virtualizationType"`
	ClientToken           string                   `xml:"clientToken"`
	Tags                  []wire.Tag               `xml:"tagSet>item"`
	Hypervisor            string                   `xml:"hypervisor"`
	NetworkInterfaces     []xmlInstanceENI         `xml:"networkInterfaceSet>item"`
	IAMInstanceProfile    *xmlIAMProfile           `xml:"iamInstanceProfile,omitempty"`
	EbsOptimized          bool                     `xml:"ebsOptimized"`
	EnaSupport            bool                     `xml:"enaSupport"`
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
	MetadataOptions xmlMetadataOptions `xml:"metadataOptions"`
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

type xmlValueState struct {
	State string `xml:"state"`
}

// wireInstance renders an instance as DescribeInstances does. Callers hold s.mu.
func (s *Server) wireInstance(in *ec2.Instance) xmlInstance {
	x := xmlInstance{
		InstanceID: in.ID, ImageID: in.ImageID, InstanceState: state(in.State), PrivateDNSName: in.PrivateDNS,
		Reason: in.TransitionReason, KeyName: in.KeyName, AmiLaunchIndex: in.LaunchIndex, InstanceType: in.InstanceType,
		LaunchTime: wire.FormatTime(in.LaunchTime),
		Placement:  xmlPlacement{AvailabilityZone: in.Zone, AvailabilityZoneID: in.ZoneID, Tenancy: "default"},
		Monitoring: xmlValueState{State: "disabled"}, SubnetID: in.SubnetID, VpcID: in.VpcID,
		PrivateIPAddress: in.PrivateIP, SourceDestCheck: "true", Architecture: in.Architecture,
		RootDeviceType: "ebs", RootDeviceName: in.RootDeviceName, VirtualizationType: "hvm", ClientToken: in.ClientToken,
		Tags: wire.Tags(in.Tags), Hypervisor: "xen", EbsOptimized: true, EnaSupport: true,
		BootMode: bootModeFor(in.Architecture), CurrentInstanceBootMode: "uefi",
		PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances", UsageOperationUpdated: wire.FormatTime(in.LaunchTime),
	}
	if in.Architecture != "arm64" {
		x.CurrentInstanceBootMode = "legacy-bios"
	}
	x.PrivateDNSNameOptions.HostnameType = "ip-name"
	x.MaintenanceOptions.AutoRecovery = "default"
	x.CapacityReservationSpecification.Preference = "open"
	if it := s.types[in.InstanceType]; it != nil {
		threads := int32(2)
		if it.IsGraviton() {
			threads = 1
		}
		x.CPUOptions.CoreCount, x.CPUOptions.ThreadsPerCore = it.VCPUs/threads, threads
	}
	if in.CapacityType == "spot" {
		x.InstanceLifecycle, x.SpotInstanceRequestID = "spot", in.SpotRequestID
	}
	for _, g := range in.SecurityGroups {
		x.Groups = append(x.Groups, wire.Group{GroupID: g, GroupName: s.groupName(g)})
	}
	md := in.Metadata
	mdState := "applied"
	if in.State == ec2.StatePending || s.clock.Now().Before(in.MetadataAppliedAt) {
		mdState = "pending"
	}
	x.MetadataOptions = xmlMetadataOptions{State: mdState, HTTPTokens: md.HTTPTokens, HTTPPutResponseHopLimit: md.HTTPPutResponseHopLimit,
		HTTPEndpoint: md.HTTPEndpoint, HTTPProtocolIPv6: md.HTTPProtocolIPv6, InstanceMetadataTags: md.InstanceMetadataTags}
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
	for _, av := range in.Volumes {
		if s.model.Volumes[av.VolumeID] == nil {
			continue
		}
		x.BlockDeviceMapping = append(x.BlockDeviceMapping, xmlInstanceBlockDevice{DeviceName: av.DeviceName,
			Ebs: xmlEbsInstanceDevice{VolumeID: av.VolumeID, Status: "attached", AttachTime: wire.FormatTime(av.AttachTime),
				DeleteOnTermination: av.DeleteOnTermination}})
	}
	if n := s.model.ENIs[in.ENIID]; n != nil {
		x.NetworkInterfaces = []xmlInstanceENI{s.wireInstanceENI(n)}
	}
	for _, id := range in.SecondaryENIs {
		if n := s.model.ENIs[id]; n != nil {
			x.NetworkInterfaces = append(x.NetworkInterfaces, s.wireInstanceENI(n))
		}
	}
	if in.State == ec2.StateStopping || in.State == ec2.StateStopped {
		x.StateReason = &xmlStateReason{Code: "Client.UserInitiatedShutdown", Message: in.StateReason}
	}
	return x
}

func (s *Server) groupName(id string) string {
	if g := s.model.Groups[id]; g != nil {
		return g.Name
	}
	return ""
}

type describeInstancesResponse struct {
	wire.Header
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

var instanceAttrs = wire.AttrTable[*ec2.Instance]{
	"instance-id":         func(in *ec2.Instance) []string { return wire.One(in.ID) },
	"instance-type":       func(in *ec2.Instance) []string { return wire.One(in.InstanceType) },
	"instance-state-name": func(in *ec2.Instance) []string { return wire.One(in.State) },
	"instance-state-code": func(in *ec2.Instance) []string { return []string{itoa(ec2.StateCodes[in.State])} },
	"availability-zone":   func(in *ec2.Instance) []string { return wire.One(in.Zone) },
	"availability-zone-id": func(in *ec2.Instance) []string {
		return wire.One(in.ZoneID)
	},
	"subnet-id":          func(in *ec2.Instance) []string { return wire.One(in.SubnetID) },
	"vpc-id":             func(in *ec2.Instance) []string { return wire.One(in.VpcID) },
	"image-id":           func(in *ec2.Instance) []string { return wire.One(in.ImageID) },
	"architecture":       func(in *ec2.Instance) []string { return wire.One(in.Architecture) },
	"private-ip-address": func(in *ec2.Instance) []string { return wire.One(in.PrivateIP) },
	"private-dns-name":   func(in *ec2.Instance) []string { return wire.One(in.PrivateDNS) },
	"reservation-id":     func(in *ec2.Instance) []string { return wire.One(in.ReservationID) },
	"owner-id":           func(in *ec2.Instance) []string { return wire.One(in.OwnerID) },
	"key-name":           func(in *ec2.Instance) []string { return wire.One(in.KeyName) },
	"client-token":       func(in *ec2.Instance) []string { return wire.One(in.ClientToken) },
	"launch-time":        func(in *ec2.Instance) []string { return wire.One(wire.FormatTime(in.LaunchTime)) },
	"instance-lifecycle": func(in *ec2.Instance) []string {
		if in.CapacityType == "spot" {
			return wire.One("spot")
		}
		return nil
	},
	"spot-instance-request-id": func(in *ec2.Instance) []string { return wire.One(in.SpotRequestID) },
	"iam-instance-profile.arn": func(in *ec2.Instance) []string { return wire.One(in.IAMProfileArn) },
	"network-interface.network-interface-id": func(in *ec2.Instance) []string {
		return wire.One(in.ENIID)
	},
	"block-device-mapping.volume-id": func(in *ec2.Instance) []string {
		var out []string
		for _, v := range in.Volumes {
			out = append(out, v.VolumeID)
		}
		return out
	},
	"instance.group-id":              func(in *ec2.Instance) []string { return in.SecurityGroups },
	"group-id":                       func(in *ec2.Instance) []string { return in.SecurityGroups },
	"metadata-options.http-tokens":   func(in *ec2.Instance) []string { return wire.One(in.Metadata.HTTPTokens) },
	"metadata-options.http-endpoint": func(in *ec2.Instance) []string { return wire.One(in.Metadata.HTTPEndpoint) },
	"root-device-type":               func(in *ec2.Instance) []string { return wire.One("ebs") },
	"root-device-name":               func(in *ec2.Instance) []string { return wire.One(in.RootDeviceName) },
	"hypervisor":                     func(in *ec2.Instance) []string { return wire.One("xen") },
	"virtualization-type":            func(in *ec2.Instance) []string { return wire.One("hvm") },
	"tenancy":                        func(in *ec2.Instance) []string { return wire.One("default") },
	"placement-group-name":           func(in *ec2.Instance) []string { return nil },
	"platform-details":               func(in *ec2.Instance) []string { return wire.One("Linux/UNIX") },
}

// describeInstances keeps its own shape: it answers reservations, and narrows by the tag
// index before filtering.
func (s *Server) describeInstances(c *call) (wire.Response, *wire.Error) {
	fs, err := c.q.Filters()
	if err != nil {
		return nil, err
	}
	pred, err := wire.CompileFilters(fs, instanceAttrs, func(in *ec2.Instance) []ec2.Tag { return in.Tags })
	if err != nil {
		return nil, err
	}
	p, err := wire.PageParams(c.q, 5, 1000)
	if err != nil {
		return nil, err
	}
	ids := c.q.Strs("InstanceId")
	if len(ids) > 0 && p.Max > 0 {
		return nil, wire.BadRequest(wire.CodeInvalidParameterCombination, "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var items []*ec2.Instance
	if len(ids) > 0 {
		if e := s.checkInstanceIDs(ids); e != nil {
			return nil, e
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				if in := s.model.Instances[id]; pred(in) {
					items = append(items, in)
				}
			}
		}
	} else if cands, ok := s.instanceCandidates(fs); ok {
		items = filterSlice(cands, pred)
	} else {
		for _, in := range s.model.Instances {
			if pred(in) {
				items = append(items, in)
			}
		}
	}
	seq := func(in *ec2.Instance) uint64 { return in.Seq }
	ec2.BySeq(items, seq)
	resp := &describeInstancesResponse{}
	var page []*ec2.Instance
	page, resp.NextToken = wire.Paginate(items, seq, p)
	idx := map[string]int{}
	for _, in := range page {
		i, ok := idx[in.ReservationID]
		if !ok {
			i = len(resp.Reservations)
			idx[in.ReservationID] = i
			resp.Reservations = append(resp.Reservations, reservationXML{ReservationID: in.ReservationID, OwnerID: in.OwnerID})
		}
		resp.Reservations[i].Instances = append(resp.Reservations[i].Instances, s.wireInstance(in))
	}
	return resp, nil
}

// --- DescribeInstanceStatus ---

type xmlStatusDetail struct {
	Name   string `xml:"name"`
	Status string `xml:"status"`
}

type xmlStatusSummary struct {
	Status  string            `xml:"status"`
	Details []xmlStatusDetail `xml:"details>item"`
}

type xmlInstanceStatus struct {
	InstanceID         string           `xml:"instanceId"`
	AvailabilityZone   string           `xml:"availabilityZone"`
	AvailabilityZoneID string           `xml:"availabilityZoneId"`
	InstanceState      wire.State       `xml:"instanceState"`
	SystemStatus       xmlStatusSummary `xml:"systemStatus"`
	InstanceStatus     xmlStatusSummary `xml:"instanceStatus"`
}

type describeInstanceStatusResponse struct {
	wire.Header
	Statuses  []xmlInstanceStatus `xml:"instanceStatusSet>item"`
	NextToken string              `xml:"nextToken,omitempty"`
}

func statusOf(in *ec2.Instance) string {
	switch in.State {
	case ec2.StateRunning:
		return "ok"
	case ec2.StatePending:
		return "initializing"
	}
	return "not-applicable"
}

var instanceStatusAttrs = wire.AttrTable[*ec2.Instance]{
	"availability-zone":      func(in *ec2.Instance) []string { return wire.One(in.Zone) },
	"instance-state-name":    func(in *ec2.Instance) []string { return wire.One(in.State) },
	"instance-state-code":    func(in *ec2.Instance) []string { return []string{itoa(ec2.StateCodes[in.State])} },
	"instance-status.status": func(in *ec2.Instance) []string { return wire.One(statusOf(in)) },
	"system-status.status":   func(in *ec2.Instance) []string { return wire.One(statusOf(in)) },
	"instance-status.reachability": func(in *ec2.Instance) []string {
		return wire.One(map[string]string{"ok": "passed", "initializing": "initializing"}[statusOf(in)])
	},
	"system-status.reachability": func(in *ec2.Instance) []string {
		return wire.One(map[string]string{"ok": "passed", "initializing": "initializing"}[statusOf(in)])
	},
	// The lab schedules no events, so every event filter matches nothing.
	"event.code":                 noValues,
	"event.description":          noValues,
	"event.instance-event-id":    noValues,
	"event.not-after":            noValues,
	"event.not-before":           noValues,
	"event.not-before-deadline":  noValues,
	"operator.managed":           func(*ec2.Instance) []string { return wire.One("false") },
	"operator.principal":         noValues,
	"attached-ebs-status.status": func(in *ec2.Instance) []string { return wire.One(statusOf(in)) },
	"attached-ebs-status.reachability": func(in *ec2.Instance) []string {
		return wire.One(map[string]string{"ok": "passed", "initializing": "initializing"}[statusOf(in)])
	},
}

func noValues(*ec2.Instance) []string { return nil }

func (s *Server) describeInstanceStatus(c *call) (wire.Response, *wire.Error) {
	var all bool
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Instance]{Attrs: instanceStatusAttrs, Min: 5, Max: 1000,
		Params: func(q *wire.Query) (e *wire.Error) {
			all, _, e = q.Bool("IncludeAllInstances")
			return e
		},
		IDParam: "InstanceId", WithMax: wire.SetWithMax("instancesSet"), CheckIDs: s.checkInstanceIDs, Dedupe: true,
		Keep: func(in *ec2.Instance) bool { return all || in.State == ec2.StateRunning },
		Seq:  func(in *ec2.Instance) uint64 { return in.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.Instances, wire.InstanceNotFound)
	if err != nil {
		return nil, err
	}
	resp := &describeInstanceStatusResponse{NextToken: next}
	for _, in := range page {
		st := statusOf(in)
		reach := map[string]string{"ok": "passed", "initializing": "initializing"}[st]
		sum := xmlStatusSummary{Status: st}
		if reach != "" {
			sum.Details = []xmlStatusDetail{{Name: "reachability", Status: reach}}
		}
		resp.Statuses = append(resp.Statuses, xmlInstanceStatus{InstanceID: in.ID, AvailabilityZone: in.Zone,
			AvailabilityZoneID: in.ZoneID, InstanceState: state(in.State), SystemStatus: sum, InstanceStatus: sum})
	}
	return resp, nil
}

// --- DescribeInstanceAttribute ---

type xmlBoolValue struct {
	Value bool `xml:"value"`
}

type describeInstanceAttributeResponse struct {
	wire.Header
	InstanceID         string                   `xml:"instanceId"`
	UserData           *wire.Value              `xml:"userData,omitempty"`
	InstanceType       *wire.Value              `xml:"instanceType,omitempty"`
	RootDeviceName     *wire.Value              `xml:"rootDeviceName,omitempty"`
	ShutdownBehavior   *wire.Value              `xml:"instanceInitiatedShutdownBehavior,omitempty"`
	DisableAPITerm     *xmlBoolValue            `xml:"disableApiTermination,omitempty"`
	DisableAPIStop     *xmlBoolValue            `xml:"disableApiStop,omitempty"`
	EbsOptimized       *xmlBoolValue            `xml:"ebsOptimized,omitempty"`
	EnaSupport         *xmlBoolValue            `xml:"enaSupport,omitempty"`
	SourceDestCheck    *xmlBoolValue            `xml:"sourceDestCheck,omitempty"`
	Groups             []wire.Group             `xml:"groupSet>item"`
	BlockDeviceMapping []xmlInstanceBlockDevice `xml:"blockDeviceMapping>item"`
}

func (s *Server) describeInstanceAttribute(c *call) (wire.Response, *wire.Error) {
	id, attr := c.q.Str("InstanceId"), c.q.Str("Attribute")
	if id == "" {
		return nil, wire.Missing("InstanceId")
	}
	if attr == "" {
		return nil, wire.Missing("Attribute")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.checkInstanceIDs([]string{id}); e != nil {
		return nil, e
	}
	in := s.model.Instances[id]
	resp := &describeInstanceAttributeResponse{InstanceID: id}
	switch attr {
	case "userData":
		resp.UserData = &wire.Value{Value: in.UserData}
	case "instanceType":
		resp.InstanceType = &wire.Value{Value: in.InstanceType}
	case "rootDeviceName":
		resp.RootDeviceName = &wire.Value{Value: in.RootDeviceName}
	case "instanceInitiatedShutdownBehavior":
		resp.ShutdownBehavior = &wire.Value{Value: "terminate"}
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
		for _, g := range in.SecurityGroups {
			resp.Groups = append(resp.Groups, wire.Group{GroupID: g, GroupName: s.groupName(g)})
		}
	case "blockDeviceMapping":
		resp.BlockDeviceMapping = s.wireInstance(in).BlockDeviceMapping
	default:
		return nil, wire.InvalidValue("Value (%s) for parameter attribute is invalid. Unknown attribute.", attr)
	}
	return resp, nil
}
