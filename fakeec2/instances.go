package fakeec2

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strings"
	"time"
)

// resolvedDevice is one EBS volume an instance will get.
type resolvedDevice struct {
	Device              string
	SizeGiB             int32
	Type                string
	Encrypted           bool
	DeleteOnTermination bool
	Iops, Throughput    int32
	KMSKeyID            string
	SnapshotID          string
}

// launchSpec is a fully resolved launch: what, where and how many. Resolving does all
// validation, so creating from a spec cannot fail.
type launchSpec struct {
	caller                                    string
	count                                     int
	image                                     *image
	instanceType                              string
	subnet                                    *subnet
	groups                                    []string
	devices                                   []resolvedDevice
	metadata                                  metadataOptions
	iamArn, iamID                             string
	userData, keyName                         string
	capacityType                              string
	tags                                      map[string][]Tag // by resource type
	templateID, templateName, templateVersion string
	fleetID, clientToken                      string
	noTerminate, noStop                       bool // termination and stop protection
}

// Resource types a launch may tag.
var launchTagTypes = map[string]bool{"instance": true, "volume": true, "network-interface": true, "spot-instances-request": true}

func tagsByType(specs []tagSpec, allowed map[string]bool) (map[string][]Tag, *APIError) {
	out := map[string][]Tag{}
	for _, ts := range specs {
		if !allowed[ts.ResourceType] {
			return nil, errInvalidValue("'%s' is not a valid taggable resource type for this operation.", ts.ResourceType)
		}
		for _, t := range ts.Tags {
			if isSystemTag(t.Key) {
				return nil, errReservedTag()
			}
		}
		out[ts.ResourceType] = setTags(out[ts.ResourceType], ts.Tags)
	}
	return out, nil
}

// resolveLaunch validates a launch and fills in defaults as EC2 does. subnetID and zone
// come from the request, an override or the template. It changes nothing. Callers hold s.mu.
func (s *Server) resolveLaunch(caller string, d launchData, subnetID string, count int, allowedTags map[string]bool) (*launchSpec, *APIError) {
	spec := &launchSpec{caller: caller, count: count, userData: d.UserData, keyName: d.KeyName,
		noTerminate: d.DisableAPITerm != nil && *d.DisableAPITerm, noStop: d.DisableAPIStop != nil && *d.DisableAPIStop}
	var err *APIError
	if spec.image, spec.instanceType, err = s.resolveImageType(d); err != nil {
		return nil, err
	}
	if spec.subnet, err = s.resolvePlacement(d, subnetID, count); err != nil {
		return nil, err
	}
	if spec.groups, err = s.resolveGroups(d, spec.subnet); err != nil {
		return nil, err
	}
	if spec.devices, err = resolveDevices(spec.image, d.BlockDevices); err != nil {
		return nil, err
	}
	spec.metadata = resolveMetadata(d.Metadata)
	spec.iamArn, spec.iamID = s.resolveProfile(d)
	spec.capacityType = "on-demand"
	if d.MarketType == "spot" {
		spec.capacityType = "spot"
	}
	if spec.tags, err = tagsByType(d.TagSpecs, allowedTags); err != nil {
		return nil, err
	}
	return spec, nil
}

// resolveImageType checks the image, the instance type and that their architectures match.
func (s *Server) resolveImageType(d launchData) (*image, string, *APIError) {
	if d.ImageID == "" {
		return nil, "", errMissing("ImageId")
	}
	im := s.images[d.ImageID]
	if im == nil {
		return nil, "", errImageID(d.ImageID)
	}
	if d.InstanceType == "" {
		return nil, "", errMissing("InstanceType")
	}
	it := s.types[d.InstanceType]
	if it == nil {
		return nil, "", errInvalidValue("Invalid value '%s' for InstanceType.", d.InstanceType)
	}
	if it.Arch != im.Architecture {
		return nil, "", errInvalidValue("The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. Specify an instance type and an AMI that have matching architectures, and try again.", it.Arch, im.Architecture)
	}
	return im, it.Name, nil
}

// resolvePlacement picks the subnet: the request's or the first network interface's, else
// the zone's default; it must have count free addresses.
func (s *Server) resolvePlacement(d launchData, subnetID string, count int) (*subnet, *APIError) {
	if subnetID == "" && len(d.NetworkInterfaces) > 0 {
		subnetID = d.NetworkInterfaces[0].SubnetID
	}
	if d.Zone != "" {
		if _, ok := s.zoneID(d.Zone); !ok {
			return nil, errInvalidValue("Invalid availability zone: [%s]", d.Zone)
		}
	}
	var sn *subnet
	if subnetID != "" {
		if sn = s.subnets[subnetID]; sn == nil {
			return nil, badRequest(CodeInvalidSubnetIDNotFound, "The subnet ID '%s' does not exist", subnetID)
		}
		if d.Zone != "" && d.Zone != sn.Zone {
			return nil, badRequest(CodeInvalidParameterCombination, "The specified subnet %s is in availability zone %s, not %s.", sn.ID, sn.Zone, d.Zone)
		}
	} else if sn = s.defaultSubnet(d.Zone); sn == nil {
		return nil, badRequest("MissingInput", "No default subnet for availability zone: [%s].", d.Zone)
	}
	if free := s.freeIPCount(sn); free < count {
		return nil, badRequest("InsufficientFreeAddressesInSubnet", "There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", sn.ID)
	}
	return sn, nil
}

// resolveGroups resolves the security groups (by ID, from the first network interface, or
// by name in the subnet's VPC), defaulting to the VPC's default group.
func (s *Server) resolveGroups(d launchData, sn *subnet) ([]string, *APIError) {
	groups := d.SecurityGroupIDs
	if len(groups) == 0 && len(d.NetworkInterfaces) > 0 {
		groups = d.NetworkInterfaces[0].Groups
	}
	for _, name := range d.SecurityGroups {
		var found *securityGroup
		for _, g := range s.groups {
			if g.Name == name && g.VpcID == sn.VpcID {
				found = g
			}
		}
		if found == nil {
			return nil, badRequest(CodeInvalidGroupNotFound, "The security group '%s' does not exist in VPC '%s'", name, sn.VpcID)
		}
		groups = append(groups, found.ID)
	}
	for _, g := range groups {
		sg := s.groups[g]
		if sg == nil {
			return nil, badRequest(CodeInvalidGroupNotFound, "The security group '%s' does not exist", g)
		}
		if sg.VpcID != sn.VpcID {
			return nil, badRequest(CodeInvalidParameter, "Security group %s and subnet %s belong to different networks.", g, sn.ID)
		}
	}
	if len(groups) == 0 {
		if def := s.defaultGroup(sn.VpcID); def != nil {
			groups = []string{def.ID}
		}
	}
	return groups, nil
}

// resolveMetadata lays the requested metadata options over the defaults: AL2023 AMIs
// declare ImdsSupport v2.0, so EC2 defaults their instances to IMDSv2 with a hop limit of 2.
func resolveMetadata(m *metadataOptions) metadataOptions {
	md := metadataOptions{HTTPEndpoint: "enabled", HTTPTokens: "required", HTTPProtocolIPv6: "disabled",
		HTTPPutResponseHopLimit: 2, InstanceMetadataTags: "disabled"}
	if m == nil {
		return md
	}
	if m.HTTPEndpoint != "" {
		md.HTTPEndpoint = m.HTTPEndpoint
	}
	if m.HTTPTokens != "" {
		md.HTTPTokens = m.HTTPTokens
	}
	if m.HTTPProtocolIPv6 != "" {
		md.HTTPProtocolIPv6 = m.HTTPProtocolIPv6
	}
	if m.HTTPPutResponseHopLimit != 0 {
		md.HTTPPutResponseHopLimit = m.HTTPPutResponseHopLimit
	}
	if m.InstanceMetadataTags != "" {
		md.InstanceMetadataTags = m.InstanceMetadataTags
	}
	return md
}

// resolveProfile gives the instance profile's ARN (from its name if need be) and a stable ID.
func (s *Server) resolveProfile(d launchData) (arn, id string) {
	switch {
	case d.IAMProfileArn != "":
		arn = d.IAMProfileArn
	case d.IAMProfileName != "":
		arn = fmt.Sprintf("arn:aws:iam::%s:instance-profile/%s", s.account, d.IAMProfileName)
	}
	if arn != "" {
		h := fnv.New64a()
		h.Write([]byte(arn))
		id = fmt.Sprintf("AIPA%016X", h.Sum64())
	}
	return arn, id
}

// resolveDevices lays requested block device mappings over the image's root device.
func resolveDevices(im *image, req []blockDeviceSpec) ([]resolvedDevice, *APIError) {
	devs := []resolvedDevice{{Device: im.RootDeviceName, SizeGiB: im.RootSizeGiB, Type: "gp3",
		DeleteOnTermination: true, SnapshotID: im.RootSnapshotID}}
	for _, bd := range req {
		i := -1
		for j := range devs {
			if devs[j].Device == bd.DeviceName {
				i = j
			}
		}
		if bd.NoDevice {
			if i >= 0 {
				devs = append(devs[:i], devs[i+1:]...)
			}
			continue
		}
		if bd.Ebs == nil {
			continue // ephemeral (instance store) mappings: these types have none
		}
		if i < 0 {
			devs = append(devs, resolvedDevice{Device: bd.DeviceName, Type: "gp3", DeleteOnTermination: true})
			i = len(devs) - 1
		}
		d := &devs[i]
		e := bd.Ebs
		if e.VolumeSize != nil {
			d.SizeGiB = *e.VolumeSize
		}
		if e.VolumeType != "" {
			d.Type = e.VolumeType
		}
		if e.Encrypted != nil {
			d.Encrypted = *e.Encrypted
		}
		if e.DeleteOnTermination != nil {
			d.DeleteOnTermination = *e.DeleteOnTermination
		}
		if e.Iops != nil {
			d.Iops = *e.Iops
		}
		if e.Throughput != nil {
			d.Throughput = *e.Throughput
		}
		if e.KMSKeyID != "" {
			d.KMSKeyID, d.Encrypted = e.KMSKeyID, true
		}
		if e.SnapshotID != "" {
			d.SnapshotID = e.SnapshotID
		}
		if d.SizeGiB == 0 {
			return nil, errMissing("BlockDeviceMapping.Ebs.VolumeSize")
		}
		if d.Device == im.RootDeviceName && d.SizeGiB < im.RootSizeGiB {
			return nil, errInvalidValue("Volume of size %dGB is smaller than snapshot '%s', expect size >= %dGB", d.SizeGiB, im.RootSnapshotID, im.RootSizeGiB)
		}
		if (d.Type == "io1" || d.Type == "io2") && d.Iops == 0 {
			return nil, errMissing("BlockDeviceMapping.Ebs.Iops")
		}
	}
	for i := range devs {
		d := &devs[i]
		switch d.Type {
		case "gp3":
			if d.Iops == 0 {
				d.Iops = 3000
			}
			if d.Throughput == 0 {
				d.Throughput = 125
			}
		case "gp2":
			d.Iops = max(100, min(16000, 3*d.SizeGiB))
		}
		if d.Encrypted && d.KMSKeyID == "" {
			d.KMSKeyID = "alias/aws/ebs"
		}
	}
	return devs, nil
}

// policyCheck is what the policy sees of a resolved launch.
func (spec *launchSpec) policyCheck() launchCheck {
	lc := launchCheck{Count: spec.count, InstanceTags: spec.tags["instance"], HTTPTokens: spec.metadata.HTTPTokens}
	for _, d := range spec.devices {
		lc.Volumes = append(lc.Volumes, volumeCheck{Device: d.Device, Encrypted: d.Encrypted})
	}
	return lc
}

// createInstances launches spec.count instances in one reservation, each with its primary
// ENI, its volumes and their ledger entries. Callers hold s.mu and have validated spec.
func (s *Server) createInstances(spec *launchSpec, now time.Time) []*instance {
	resID := s.newID("r")
	zoneID, _ := s.zoneID(spec.subnet.Zone)
	price := s.price(spec.instanceType, spec.subnet.Zone, spec.capacityType)
	instSys, volSys := launchSystemTags(spec)
	var out []*instance
	for i := 0; i < spec.count; i++ {
		in := &instance{
			Seq: s.nextSeq(), ID: s.newID("i"), ReservationID: resID, OwnerID: s.account, Caller: spec.caller,
			ImageID: spec.image.ID, InstanceType: spec.instanceType, Architecture: spec.image.Architecture,
			Zone: spec.subnet.Zone, ZoneID: zoneID, SubnetID: spec.subnet.ID, VpcID: spec.subnet.VpcID,
			SecurityGroups: spec.groups, RootDeviceName: spec.image.RootDeviceName, KeyName: spec.keyName,
			IAMProfileArn: spec.iamArn, IAMProfileID: spec.iamID, Metadata: spec.metadata, UserData: spec.userData,
			CapacityType: spec.capacityType, LaunchTemplateID: spec.templateID, LaunchTemplateName: spec.templateName,
			LaunchTemplateVersion: spec.templateVersion, FleetID: spec.fleetID, ClientToken: spec.clientToken,
			LaunchIndex: i, Tags: setTags(spec.tags["instance"], instSys), State: statePending,
			LaunchTime: now, RunningAt: now.Add(s.bootDelay), PricePerHour: price,
			DisableAPITermination: spec.noTerminate, DisableAPIStop: spec.noStop,
		}
		if spec.capacityType == "spot" {
			in.SpotRequestID = s.newID("sir")
		}
		ip, _ := s.allocIP(spec.subnet) // capacity was checked while resolving
		in.PrivateIP, in.PrivateDNS = ip, s.privateDNS(ip)
		eni := &networkInterface{
			Seq: s.nextSeq(), ID: s.newID("eni"), SubnetID: spec.subnet.ID, VpcID: spec.subnet.VpcID,
			Zone: spec.subnet.Zone, ZoneID: zoneID, PrivateIP: ip, PrivateDNS: in.PrivateDNS, Groups: spec.groups,
			Status: "in-use", InstanceID: in.ID, DeviceIndex: 0, DeleteOnTermination: true, AttachTime: now,
			InterfaceType: "interface", Tags: setTags(nil, spec.tags["network-interface"]),
		}
		eni.MAC = macFor(eni.ID)
		eni.AttachmentID = "eni-attach-" + strings.TrimPrefix(s.newID("eni"), "eni-")
		s.enis[eni.ID] = eni
		s.save(bucketENIs, eni.ID, eni)
		in.ENIID = eni.ID
		for _, d := range spec.devices {
			v := &volume{
				Seq: s.nextSeq(), ID: s.newID("vol"), Zone: spec.subnet.Zone, ZoneID: zoneID, Type: d.Type,
				SizeGiB: d.SizeGiB, Iops: d.Iops, Throughput: d.Throughput, Encrypted: d.Encrypted, KMSKeyID: d.KMSKeyID,
				SnapshotID: d.SnapshotID, State: "in-use", CreateTime: now, InstanceID: in.ID, Device: d.Device,
				DeleteOnTermination: d.DeleteOnTermination, AttachTime: now, Tags: setTags(spec.tags["volume"], volSys),
			}
			s.volumes[v.ID] = v
			s.save(bucketVolumes, v.ID, v)
			in.Volumes = append(in.Volumes, attachedVolume{DeviceName: d.Device, VolumeID: v.ID,
				DeleteOnTermination: d.DeleteOnTermination, AttachTime: now})
			encrypted := v.Encrypted
			s.startLedger(&LedgerEntry{ResourceID: v.ID, ResourceType: "volume", Type: v.Type, SizeGiB: v.SizeGiB,
				Encrypted: &encrypted, Zone: v.Zone, InstanceID: in.ID, PricePerHour: volumeHourly(v.Type, v.SizeGiB), Started: now,
				Tags: tagsMap(v.Tags), Caller: spec.caller})
		}
		s.instances[in.ID] = in
		s.instTags.add(in.ID, in.Tags)
		s.save(bucketInstances, in.ID, in)
		s.scheduleDeadline(in)
		s.startLedger(&LedgerEntry{ResourceID: in.ID, ResourceType: "instance", Type: in.InstanceType,
			CapacityType: in.CapacityType, Zone: in.Zone, PricePerHour: price, Started: in.RunningAt,
			Tags: tagsMap(in.Tags), Caller: spec.caller})
		out = append(out, in)
	}
	if s.bootDelay == 0 {
		s.advanceLocked(now)
	}
	return out
}

// --- RunInstances ---

type reservationXML struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        []xmlGroup    `xml:"groupSet>item"`
	Instances     []xmlInstance `xml:"instancesSet>item"`
}

type runInstancesResponse struct {
	WireHeader
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        []xmlGroup    `xml:"groupSet>item"`
	Instances     []xmlInstance `xml:"instancesSet>item"`
}

func (s *Server) runInstances(c *call) (wireResponse, *APIError) {
	minC, okMin, err := c.q.integer("MinCount")
	if err != nil {
		return nil, err
	}
	maxC, okMax, err := c.q.integer("MaxCount")
	if err != nil {
		return nil, err
	}
	if !okMin {
		return nil, errMissing("MinCount")
	}
	if !okMax {
		return nil, errMissing("MaxCount")
	}
	if minC < 1 || maxC < minC {
		return nil, errInvalidValue("Value (%d) for parameter minCount is invalid. Expected a value between 1 and maxCount (%d).", minC, maxC)
	}
	if maxC > 1000 {
		return nil, apiErr(http.StatusBadRequest, CodeInstanceLimitExceeded, "You have requested more instances (%d) than your current instance limit of 1000 allows for the specified instance type.", maxC)
	}
	data, err := parseLaunchData(c.q, "")
	if err != nil {
		return nil, err
	}
	resp := &runInstancesResponse{}
	aerr := s.mutate(c, func() *APIError {
		var lt *launchTemplate
		var ver *launchTemplateVersion
		if lq := c.q.get("LaunchTemplate"); lq != nil {
			var e *APIError
			if lt, e = s.findTemplate(lq.str("LaunchTemplateId"), lq.str("LaunchTemplateName")); e != nil {
				return e
			}
			if ver, e = templateVersion(lt, lq.str("Version")); e != nil {
				return e
			}
			data = mergeLaunchData(ver.Data, data)
		}
		spec, e := s.resolveAndCheck(c, data, c.q.str("SubnetId"), int(maxC))
		if e != nil {
			return e
		}
		if lt != nil {
			spec.templateID, spec.templateName, spec.templateVersion = lt.ID, lt.Name, fmt.Sprint(ver.Number)
		}
		return s.finishRun(c, spec, resp)
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// resolveAndCheck resolves a RunInstances launch and applies policy and capacity faults.
func (s *Server) resolveAndCheck(c *call, data launchData, subnetID string, count int) (*launchSpec, *APIError) {
	spec, e := s.resolveLaunch(c.caller, data, subnetID, count, launchTagTypes)
	if e != nil {
		return nil, e
	}
	spec.clientToken = c.q.str("ClientToken")
	if reason := s.checkLaunch(c.caller, spec.policyCheck()); reason != "" {
		return nil, s.deny(c, reason)
	}
	if reason := s.checkPlacement(c.caller, spec.instanceType, spec.subnet.Zone, spec.capacityType); reason != "" {
		return nil, s.deny(c, reason)
	}
	if c.dryRun {
		return spec, nil // a DryRun checks permissions, not capacity, and consumes no fault
	}
	if f := s.capacityFault(spec.instanceType, spec.subnet.Zone, spec.capacityType); f != nil {
		c.event.Faults = append(c.event.Faults, f.ID)
		s.consumeFault(f)
		s.saveMeta()
		return nil, errInsufficientCapacity(spec.instanceType, spec.subnet.Zone)
	}
	return spec, nil
}

func (s *Server) finishRun(c *call, spec *launchSpec, resp *runInstancesResponse) *APIError {
	if c.dryRun {
		return errDryRun()
	}
	ins := s.createInstances(spec, c.now)
	resp.ReservationID, resp.OwnerID = ins[0].ReservationID, s.account
	for _, in := range ins {
		c.event.Created = append(c.event.Created, in.ID)
		c.event.Created = append(c.event.Created, in.ENIID)
		for _, v := range in.Volumes {
			c.event.Created = append(c.event.Created, v.VolumeID)
		}
		resp.Instances = append(resp.Instances, s.wireInstance(in))
	}
	return nil
}

// --- TerminateInstances ---

type xmlStateChange struct {
	InstanceID    string   `xml:"instanceId"`
	CurrentState  xmlState `xml:"currentState"`
	PreviousState xmlState `xml:"previousState"`
}

type terminateInstancesResponse struct {
	WireHeader
	Instances []xmlStateChange `xml:"instancesSet>item"`
}

func state(name string) xmlState { return xmlState{Code: stateCodes[name], Name: name} }

// checkInstanceIDs rejects malformed IDs, then reports the missing ones together.
// Callers hold s.mu.
func (s *Server) checkInstanceIDs(ids []string) *APIError {
	for _, id := range ids {
		if !validID(id, "i") {
			return errInstanceMalformed(id)
		}
	}
	var missing []string
	for _, id := range ids {
		if s.instances[id] == nil {
			missing = append(missing, id)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return errInstanceNotFound(missing[0])
	}
	return badRequest(CodeInvalidInstanceIDNotFound, "The instance IDs '%s' do not exist", strings.Join(missing, ", "))
}

func (s *Server) terminateInstances(c *call) (wireResponse, *APIError) {
	ids := c.q.strs("InstanceId")
	if len(ids) == 0 {
		return nil, errMissing("InstanceId")
	}
	resp := &terminateInstancesResponse{}
	aerr := s.mutate(c, func() *APIError {
		if e := s.checkInstanceIDs(ids); e != nil {
			return e
		}
		for _, id := range ids {
			if e := refuse(instanceRefusals, "TerminateInstances", s.instances[id]); e != nil {
				return e
			}
		}
		if c.dryRun {
			return errDryRun()
		}
		for _, id := range ids {
			in := s.instances[id]
			prev := in.State
			cur := prev
			switch prev {
			case statePending, stateRunning, stateStopping, stateStopped:
				cur = stateShuttingDown
				if f := s.leakFault(id); f != nil {
					// The leak: EC2 says it is shutting down, but nothing happens.
					c.event.Faults = append(c.event.Faults, f.ID+":"+id)
					s.consumeFault(f)
					s.saveMeta()
					break
				}
				in.State = stateShuttingDown
				in.TerminateRequestedAt = c.now
				in.TerminatedAt = c.now.Add(s.shutdownDelay)
				in.TransitionReason = fmt.Sprintf("User initiated (%s)", c.now.UTC().Format("2006-01-02 15:04:05 GMT"))
				s.stopLedger(in.ID, c.now)
				s.save(bucketInstances, in.ID, in)
				s.scheduleDeadline(in)
				s.noteStateChange(in, stateShuttingDown, c.now)
			}
			c.event.Terminated = append(c.event.Terminated, id)
			resp.Instances = append(resp.Instances, xmlStateChange{InstanceID: id, CurrentState: state(cur), PreviousState: state(prev)})
		}
		s.advanceLocked(c.now) // a zero shutdown delay terminates at once
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

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
	Groups             []xmlGroup               `xml:"groupSet>item"`
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
	InstanceState         xmlState                 `xml:"instanceState"`
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
	Groups                []xmlGroup               `xml:"groupSet>item"`
	StateReason           *xmlStateReason          `xml:"stateReason,omitempty"`
	Architecture          string                   `xml:"architecture"`
	RootDeviceType        string                   `xml:"rootDeviceType"`
	RootDeviceName        string                   `xml:"rootDeviceName"`
	BlockDeviceMapping    []xmlInstanceBlockDevice `xml:"blockDeviceMapping>item"`
	InstanceLifecycle     string                   `xml:"instanceLifecycle,omitempty"`
	SpotInstanceRequestID string                   `xml:"spotInstanceRequestId,omitempty"`
	VirtualizationType    string                   `xml:"virtualizationType"`
	ClientToken           string                   `xml:"clientToken"`
	Tags                  []xmlTag                 `xml:"tagSet>item"`
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
func (s *Server) wireInstance(in *instance) xmlInstance {
	x := xmlInstance{
		InstanceID: in.ID, ImageID: in.ImageID, InstanceState: state(in.State), PrivateDNSName: in.PrivateDNS,
		Reason: in.TransitionReason, KeyName: in.KeyName, AmiLaunchIndex: in.LaunchIndex, InstanceType: in.InstanceType,
		LaunchTime: xmlTime(in.LaunchTime),
		Placement:  xmlPlacement{AvailabilityZone: in.Zone, AvailabilityZoneID: in.ZoneID, Tenancy: "default"},
		Monitoring: xmlValueState{State: "disabled"}, SubnetID: in.SubnetID, VpcID: in.VpcID,
		PrivateIPAddress: in.PrivateIP, SourceDestCheck: "true", Architecture: in.Architecture,
		RootDeviceType: "ebs", RootDeviceName: in.RootDeviceName, VirtualizationType: "hvm", ClientToken: in.ClientToken,
		Tags: xmlTags(in.Tags), Hypervisor: "xen", EbsOptimized: true, EnaSupport: true,
		BootMode: bootModeFor(in.Architecture), CurrentInstanceBootMode: "uefi",
		PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances", UsageOperationUpdated: xmlTime(in.LaunchTime),
	}
	if in.Architecture != "arm64" {
		x.CurrentInstanceBootMode = "legacy-bios"
	}
	x.PrivateDNSNameOptions.HostnameType = "ip-name"
	x.MaintenanceOptions.AutoRecovery = "default"
	x.CapacityReservationSpecification.Preference = "open"
	if it := s.types[in.InstanceType]; it != nil {
		threads := int32(2)
		if isGraviton(it) {
			threads = 1
		}
		x.CPUOptions.CoreCount, x.CPUOptions.ThreadsPerCore = it.VCPUs/threads, threads
	}
	if in.CapacityType == "spot" {
		x.InstanceLifecycle, x.SpotInstanceRequestID = "spot", in.SpotRequestID
	}
	for _, g := range in.SecurityGroups {
		x.Groups = append(x.Groups, xmlGroup{GroupID: g, GroupName: s.groupName(g)})
	}
	md := in.Metadata
	mdState := "applied"
	if in.State == statePending || s.clock.Now().Before(in.MetadataAppliedAt) {
		mdState = "pending"
	}
	x.MetadataOptions = xmlMetadataOptions{State: mdState, HTTPTokens: md.HTTPTokens, HTTPPutResponseHopLimit: md.HTTPPutResponseHopLimit,
		HTTPEndpoint: md.HTTPEndpoint, HTTPProtocolIPv6: md.HTTPProtocolIPv6, InstanceMetadataTags: md.InstanceMetadataTags}
	if in.IAMProfileArn != "" {
		x.IAMInstanceProfile = &xmlIAMProfile{Arn: in.IAMProfileArn, ID: in.IAMProfileID}
	}
	if in.State == stateTerminated {
		x.StateReason = &xmlStateReason{Code: in.stateReasonCode(), Message: in.StateReason}
		x.PrivateIPAddress, x.SubnetID, x.VpcID, x.SourceDestCheck = "", "", "", ""
		return x
	}
	if in.State == stateShuttingDown {
		x.StateReason = &xmlStateReason{Code: in.stateReasonCode(), Message: in.shuttingDownReason()}
	}
	for _, av := range in.Volumes {
		if s.volumes[av.VolumeID] == nil {
			continue
		}
		x.BlockDeviceMapping = append(x.BlockDeviceMapping, xmlInstanceBlockDevice{DeviceName: av.DeviceName,
			Ebs: xmlEbsInstanceDevice{VolumeID: av.VolumeID, Status: "attached", AttachTime: xmlTime(av.AttachTime),
				DeleteOnTermination: av.DeleteOnTermination}})
	}
	if n := s.enis[in.ENIID]; n != nil {
		xe := xmlInstanceENI{NetworkInterfaceID: n.ID, SubnetID: n.SubnetID, VpcID: n.VpcID, Description: n.Description,
			OwnerID: s.account, Status: n.Status, MacAddress: n.MAC, PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS,
			SourceDestCheck: true, Attachment: xmlInstanceENIAttachment{AttachmentID: n.AttachmentID, DeviceIndex: n.DeviceIndex,
				Status: "attached", AttachTime: xmlTime(n.AttachTime), DeleteOnTermination: n.DeleteOnTermination},
			PrivateIPs:    []xmlPrivateIP{{PrivateIPAddress: n.PrivateIP, PrivateDNSName: n.PrivateDNS, Primary: true}},
			InterfaceType: n.InterfaceType}
		for _, g := range n.Groups {
			xe.Groups = append(xe.Groups, xmlGroup{GroupID: g, GroupName: s.groupName(g)})
		}
		x.NetworkInterfaces = []xmlInstanceENI{xe}
	}
	for _, id := range in.SecondaryENIs {
		if n := s.enis[id]; n != nil {
			x.NetworkInterfaces = append(x.NetworkInterfaces, s.wireInstanceENI(n))
		}
	}
	if in.State == stateStopping || in.State == stateStopped {
		x.StateReason = &xmlStateReason{Code: "Client.UserInitiatedShutdown", Message: in.StateReason}
	}
	return x
}

func (s *Server) groupName(id string) string {
	if g := s.groups[id]; g != nil {
		return g.Name
	}
	return ""
}

type describeInstancesResponse struct {
	WireHeader
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

var instanceAttrs = attrTable[*instance]{
	"instance-id":         func(in *instance) []string { return one(in.ID) },
	"instance-type":       func(in *instance) []string { return one(in.InstanceType) },
	"instance-state-name": func(in *instance) []string { return one(in.State) },
	"instance-state-code": func(in *instance) []string { return []string{itoa(stateCodes[in.State])} },
	"availability-zone":   func(in *instance) []string { return one(in.Zone) },
	"availability-zone-id": func(in *instance) []string {
		return one(in.ZoneID)
	},
	"subnet-id":          func(in *instance) []string { return one(in.SubnetID) },
	"vpc-id":             func(in *instance) []string { return one(in.VpcID) },
	"image-id":           func(in *instance) []string { return one(in.ImageID) },
	"architecture":       func(in *instance) []string { return one(in.Architecture) },
	"private-ip-address": func(in *instance) []string { return one(in.PrivateIP) },
	"private-dns-name":   func(in *instance) []string { return one(in.PrivateDNS) },
	"reservation-id":     func(in *instance) []string { return one(in.ReservationID) },
	"owner-id":           func(in *instance) []string { return one(in.OwnerID) },
	"key-name":           func(in *instance) []string { return one(in.KeyName) },
	"client-token":       func(in *instance) []string { return one(in.ClientToken) },
	"launch-time":        func(in *instance) []string { return one(xmlTime(in.LaunchTime)) },
	"instance-lifecycle": func(in *instance) []string {
		if in.CapacityType == "spot" {
			return one("spot")
		}
		return nil
	},
	"spot-instance-request-id": func(in *instance) []string { return one(in.SpotRequestID) },
	"iam-instance-profile.arn": func(in *instance) []string { return one(in.IAMProfileArn) },
	"network-interface.network-interface-id": func(in *instance) []string {
		return one(in.ENIID)
	},
	"block-device-mapping.volume-id": func(in *instance) []string {
		var out []string
		for _, v := range in.Volumes {
			out = append(out, v.VolumeID)
		}
		return out
	},
	"instance.group-id":              func(in *instance) []string { return in.SecurityGroups },
	"group-id":                       func(in *instance) []string { return in.SecurityGroups },
	"metadata-options.http-tokens":   func(in *instance) []string { return one(in.Metadata.HTTPTokens) },
	"metadata-options.http-endpoint": func(in *instance) []string { return one(in.Metadata.HTTPEndpoint) },
	"root-device-type":               func(in *instance) []string { return one("ebs") },
	"root-device-name":               func(in *instance) []string { return one(in.RootDeviceName) },
	"hypervisor":                     func(in *instance) []string { return one("xen") },
	"virtualization-type":            func(in *instance) []string { return one("hvm") },
	"tenancy":                        func(in *instance) []string { return one("default") },
	"placement-group-name":           func(in *instance) []string { return nil },
	"platform-details":               func(in *instance) []string { return one("Linux/UNIX") },
}

// describeInstances keeps its own shape: it answers reservations, and narrows by the tag
// index before filtering.
func (s *Server) describeInstances(c *call) (wireResponse, *APIError) {
	fs, err := c.q.filters()
	if err != nil {
		return nil, err
	}
	pred, err := compileFilters(fs, instanceAttrs, func(in *instance) []Tag { return in.Tags })
	if err != nil {
		return nil, err
	}
	p, err := pageParams(c.q, 5, 1000)
	if err != nil {
		return nil, err
	}
	ids := c.q.strs("InstanceId")
	if len(ids) > 0 && p.max > 0 {
		return nil, badRequest(CodeInvalidParameterCombination, "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var items []*instance
	if len(ids) > 0 {
		if e := s.checkInstanceIDs(ids); e != nil {
			return nil, e
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				if in := s.instances[id]; pred(in) {
					items = append(items, in)
				}
			}
		}
	} else if cands, ok := s.instanceCandidates(fs); ok {
		items = filterSlice(cands, pred)
	} else {
		for _, in := range s.instances {
			if pred(in) {
				items = append(items, in)
			}
		}
	}
	seq := func(in *instance) uint64 { return in.Seq }
	bySeq(items, seq)
	resp := &describeInstancesResponse{}
	var page []*instance
	page, resp.NextToken = paginate(items, seq, p)
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
	InstanceState      xmlState         `xml:"instanceState"`
	SystemStatus       xmlStatusSummary `xml:"systemStatus"`
	InstanceStatus     xmlStatusSummary `xml:"instanceStatus"`
}

type describeInstanceStatusResponse struct {
	WireHeader
	Statuses  []xmlInstanceStatus `xml:"instanceStatusSet>item"`
	NextToken string              `xml:"nextToken,omitempty"`
}

func statusOf(in *instance) string {
	switch in.State {
	case stateRunning:
		return "ok"
	case statePending:
		return "initializing"
	}
	return "not-applicable"
}

var instanceStatusAttrs = attrTable[*instance]{
	"availability-zone":      func(in *instance) []string { return one(in.Zone) },
	"instance-state-name":    func(in *instance) []string { return one(in.State) },
	"instance-state-code":    func(in *instance) []string { return []string{itoa(stateCodes[in.State])} },
	"instance-status.status": func(in *instance) []string { return one(statusOf(in)) },
	"system-status.status":   func(in *instance) []string { return one(statusOf(in)) },
	"instance-status.reachability": func(in *instance) []string {
		return one(map[string]string{"ok": "passed", "initializing": "initializing"}[statusOf(in)])
	},
	"system-status.reachability": func(in *instance) []string {
		return one(map[string]string{"ok": "passed", "initializing": "initializing"}[statusOf(in)])
	},
	// The lab schedules no events, so every event filter matches nothing.
	"event.code":                 noValues,
	"event.description":          noValues,
	"event.instance-event-id":    noValues,
	"event.not-after":            noValues,
	"event.not-before":           noValues,
	"event.not-before-deadline":  noValues,
	"operator.managed":           func(*instance) []string { return one("false") },
	"operator.principal":         noValues,
	"attached-ebs-status.status": func(in *instance) []string { return one(statusOf(in)) },
	"attached-ebs-status.reachability": func(in *instance) []string {
		return one(map[string]string{"ok": "passed", "initializing": "initializing"}[statusOf(in)])
	},
}

func noValues(*instance) []string { return nil }

func (s *Server) describeInstanceStatus(c *call) (wireResponse, *APIError) {
	var all bool
	req, err := parseDescribe(c, describeSpec[*instance]{attrs: instanceStatusAttrs, min: 5, max: 1000,
		params: func(q *query) (e *APIError) {
			all, _, e = q.boolean("IncludeAllInstances")
			return e
		},
		idParam: "InstanceId", withMax: setWithMax("instancesSet"), checkIDs: s.checkInstanceIDs, dedupe: true,
		keep: func(in *instance) bool { return all || in.State == stateRunning },
		seq:  func(in *instance) uint64 { return in.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.run(s.instances, errInstanceNotFound)
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
	WireHeader
	InstanceID         string                   `xml:"instanceId"`
	UserData           *xmlValue                `xml:"userData,omitempty"`
	InstanceType       *xmlValue                `xml:"instanceType,omitempty"`
	RootDeviceName     *xmlValue                `xml:"rootDeviceName,omitempty"`
	ShutdownBehavior   *xmlValue                `xml:"instanceInitiatedShutdownBehavior,omitempty"`
	DisableAPITerm     *xmlBoolValue            `xml:"disableApiTermination,omitempty"`
	DisableAPIStop     *xmlBoolValue            `xml:"disableApiStop,omitempty"`
	EbsOptimized       *xmlBoolValue            `xml:"ebsOptimized,omitempty"`
	EnaSupport         *xmlBoolValue            `xml:"enaSupport,omitempty"`
	SourceDestCheck    *xmlBoolValue            `xml:"sourceDestCheck,omitempty"`
	Groups             []xmlGroup               `xml:"groupSet>item"`
	BlockDeviceMapping []xmlInstanceBlockDevice `xml:"blockDeviceMapping>item"`
}

func (s *Server) describeInstanceAttribute(c *call) (wireResponse, *APIError) {
	id, attr := c.q.str("InstanceId"), c.q.str("Attribute")
	if id == "" {
		return nil, errMissing("InstanceId")
	}
	if attr == "" {
		return nil, errMissing("Attribute")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.checkInstanceIDs([]string{id}); e != nil {
		return nil, e
	}
	in := s.instances[id]
	resp := &describeInstanceAttributeResponse{InstanceID: id}
	switch attr {
	case "userData":
		resp.UserData = &xmlValue{Value: in.UserData}
	case "instanceType":
		resp.InstanceType = &xmlValue{Value: in.InstanceType}
	case "rootDeviceName":
		resp.RootDeviceName = &xmlValue{Value: in.RootDeviceName}
	case "instanceInitiatedShutdownBehavior":
		resp.ShutdownBehavior = &xmlValue{Value: "terminate"}
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
			resp.Groups = append(resp.Groups, xmlGroup{GroupID: g, GroupName: s.groupName(g)})
		}
	case "blockDeviceMapping":
		resp.BlockDeviceMapping = s.wireInstance(in).BlockDeviceMapping
	default:
		return nil, errInvalidValue("Value (%s) for parameter attribute is invalid. Unknown attribute.", attr)
	}
	return resp, nil
}

// sortedKeys is a small helper for stable output.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
