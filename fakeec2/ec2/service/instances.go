package service

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
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
	image                                     *ec2.Image
	instanceType                              string
	subnet                                    *ec2.Subnet
	groups                                    []string
	devices                                   []resolvedDevice
	metadata                                  ec2.MetadataOptions
	iamArn, iamID                             string
	userData, keyName                         string
	capacityType                              string
	tags                                      map[string][]ec2.Tag // by resource type
	templateID, templateName, templateVersion string
	fleetID, clientToken                      string
	noTerminate, noStop                       bool // termination and stop protection
}

// Resource types a launch may tag.
var launchTagTypes = map[string]bool{"instance": true, "volume": true, "network-interface": true, "spot-instances-request": true}

// specTags reads a request's TagSpecification list: its tags by resource type, each type
// one of allowed and no key one of EC2's own (aws:).
func specTags(q *wire.Query, allowed map[string]bool) (map[string][]ec2.Tag, *wire.Error) {
	specs, err := q.TagSpecs("TagSpecification")
	if err != nil {
		return nil, err
	}
	return tagsByType(specs, allowed)
}

func tagsByType(specs []ec2.TagSpec, allowed map[string]bool) (map[string][]ec2.Tag, *wire.Error) {
	out := map[string][]ec2.Tag{}
	for _, ts := range specs {
		if !allowed[ts.ResourceType] {
			return nil, wire.InvalidValue("'%s' is not a valid taggable resource type for this operation.", ts.ResourceType)
		}
		for _, t := range ts.Tags {
			if isSystemTag(t.Key) {
				return nil, errReservedTag()
			}
		}
		out[ts.ResourceType] = ec2.SetTags(out[ts.ResourceType], ts.Tags)
	}
	return out, nil
}

// resolveLaunch validates a launch and fills in defaults as EC2 does. subnetID and zone
// come from the request, an override or the template. It changes nothing. Callers hold s.mu.
func (s *Service) resolveLaunch(caller string, d ec2.LaunchData, subnetID string, count int, allowedTags map[string]bool) (*launchSpec, *wire.Error) {
	spec := &launchSpec{caller: caller, count: count, userData: d.UserData, keyName: d.KeyName,
		noTerminate: d.DisableAPITerm != nil && *d.DisableAPITerm, noStop: d.DisableAPIStop != nil && *d.DisableAPIStop}
	var err *wire.Error
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
func (s *Service) resolveImageType(d ec2.LaunchData) (*ec2.Image, string, *wire.Error) {
	if d.ImageID == "" {
		return nil, "", wire.Missing("ImageId")
	}
	im := s.model.Images[d.ImageID]
	if im == nil {
		return nil, "", errImageID(d.ImageID)
	}
	if d.InstanceType == "" {
		return nil, "", wire.Missing("InstanceType")
	}
	it := s.types[d.InstanceType]
	if it == nil {
		return nil, "", wire.InvalidValue("Invalid value '%s' for InstanceType.", d.InstanceType)
	}
	if it.Arch != im.Architecture {
		return nil, "", wire.InvalidValue("The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. Specify an instance type and an AMI that have matching architectures, and try again.", it.Arch, im.Architecture)
	}
	return im, it.Name, nil
}

// resolvePlacement picks the subnet: the request's or the first network interface's, else
// the zone's default; it must have count free addresses.
func (s *Service) resolvePlacement(d ec2.LaunchData, subnetID string, count int) (*ec2.Subnet, *wire.Error) {
	if subnetID == "" && len(d.NetworkInterfaces) > 0 {
		subnetID = d.NetworkInterfaces[0].SubnetID
	}
	if d.Zone != "" {
		if _, ok := s.zoneID(d.Zone); !ok {
			return nil, wire.InvalidValue("Invalid availability zone: [%s]", d.Zone)
		}
	}
	var sn *ec2.Subnet
	if subnetID != "" {
		if sn = s.model.Subnets[subnetID]; sn == nil {
			return nil, wire.BadRequest(wire.CodeInvalidSubnetIDNotFound, "The subnet ID '%s' does not exist", subnetID)
		}
		if d.Zone != "" && d.Zone != sn.Zone {
			return nil, wire.BadRequest(wire.CodeInvalidParameterCombination, "The specified subnet %s is in availability zone %s, not %s.", sn.ID, sn.Zone, d.Zone)
		}
	} else if sn = s.model.DefaultSubnet(d.Zone); sn == nil {
		return nil, wire.BadRequest("MissingInput", "No default subnet for availability zone: [%s].", d.Zone)
	}
	if free := s.model.FreeIPCount(sn); free < count {
		return nil, wire.BadRequest("InsufficientFreeAddressesInSubnet", "There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", sn.ID)
	}
	return sn, nil
}

// resolveGroups resolves the security groups (by ID, from the first network interface, or
// by name in the subnet's VPC), defaulting to the VPC's default group.
func (s *Service) resolveGroups(d ec2.LaunchData, sn *ec2.Subnet) ([]string, *wire.Error) {
	groups := d.SecurityGroupIDs
	if len(groups) == 0 && len(d.NetworkInterfaces) > 0 {
		groups = d.NetworkInterfaces[0].Groups
	}
	for _, name := range d.SecurityGroups {
		var found *ec2.SecurityGroup
		for _, g := range s.model.Groups {
			if g.Name == name && g.VpcID == sn.VpcID {
				found = g
			}
		}
		if found == nil {
			return nil, wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist in VPC '%s'", name, sn.VpcID)
		}
		groups = append(groups, found.ID)
	}
	for _, g := range groups {
		sg := s.model.Groups[g]
		if sg == nil {
			return nil, wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist", g)
		}
		if sg.VpcID != sn.VpcID {
			return nil, wire.BadRequest(wire.CodeInvalidParameter, "Security group %s and subnet %s belong to different networks.", g, sn.ID)
		}
	}
	if len(groups) == 0 {
		if def := s.model.DefaultGroup(sn.VpcID); def != nil {
			groups = []string{def.ID}
		}
	}
	return groups, nil
}

// resolveMetadata lays the requested metadata options over the defaults: AL2023 AMIs
// declare ImdsSupport v2.0, so EC2 defaults their instances to IMDSv2 with a hop limit of 2.
func resolveMetadata(m *ec2.MetadataOptions) ec2.MetadataOptions {
	md := ec2.MetadataOptions{HTTPEndpoint: "enabled", HTTPTokens: "required", HTTPProtocolIPv6: "disabled",
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
func (s *Service) resolveProfile(d ec2.LaunchData) (arn, id string) {
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
func resolveDevices(im *ec2.Image, req []ec2.BlockDeviceSpec) ([]resolvedDevice, *wire.Error) {
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
			return nil, wire.Missing("BlockDeviceMapping.Ebs.VolumeSize")
		}
		if d.Device == im.RootDeviceName && d.SizeGiB < im.RootSizeGiB {
			return nil, wire.InvalidValue("Volume of size %dGB is smaller than snapshot '%s', expect size >= %dGB", d.SizeGiB, im.RootSnapshotID, im.RootSizeGiB)
		}
		if (d.Type == "io1" || d.Type == "io2") && d.Iops == 0 {
			return nil, wire.Missing("BlockDeviceMapping.Ebs.Iops")
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
func (spec *launchSpec) policyCheck() authz.Launch {
	lc := authz.Launch{Count: spec.count, InstanceTags: spec.tags["instance"], HTTPTokens: spec.metadata.HTTPTokens}
	for _, d := range spec.devices {
		lc.Volumes = append(lc.Volumes, authz.Volume{Device: d.Device, Encrypted: d.Encrypted})
	}
	return lc
}

// createInstances launches spec.count instances in one reservation, each with its primary
// ENI, its volumes and their ledger entries. Callers hold s.mu and have validated spec.
func (s *Service) createInstances(spec *launchSpec, now time.Time) []*ec2.Instance {
	resID := s.newID("r")
	zoneID, _ := s.zoneID(spec.subnet.Zone)
	price := s.price(spec.instanceType, spec.subnet.Zone, spec.capacityType)
	instSys, volSys := launchSystemTags(spec)
	var out []*ec2.Instance
	for i := 0; i < spec.count; i++ {
		in := &ec2.Instance{
			Seq: s.nextSeq(), ID: s.newID("i"), ReservationID: resID, OwnerID: s.account, Caller: spec.caller,
			ImageID: spec.image.ID, InstanceType: spec.instanceType, Architecture: spec.image.Architecture,
			Zone: spec.subnet.Zone, ZoneID: zoneID, SubnetID: spec.subnet.ID, VpcID: spec.subnet.VpcID,
			SecurityGroups: spec.groups, RootDeviceName: spec.image.RootDeviceName, KeyName: spec.keyName,
			IAMProfileArn: spec.iamArn, IAMProfileID: spec.iamID, Metadata: spec.metadata, UserData: spec.userData,
			CapacityType: spec.capacityType, LaunchTemplateID: spec.templateID, LaunchTemplateName: spec.templateName,
			LaunchTemplateVersion: spec.templateVersion, FleetID: spec.fleetID, ClientToken: spec.clientToken,
			LaunchIndex: i, Tags: ec2.SetTags(spec.tags["instance"], instSys), State: ec2.StatePending,
			LaunchTime: now, RunningAt: now.Add(s.bootDelay), PricePerHour: price,
			DisableAPITermination: spec.noTerminate, DisableAPIStop: spec.noStop,
		}
		if spec.capacityType == "spot" {
			in.SpotRequestID = s.newID("sir")
		}
		ip, _ := s.model.AllocIP(spec.subnet) // capacity was checked while resolving
		in.PrivateIP, in.PrivateDNS = ip, s.privateDNS(ip)
		eni := &ec2.NetworkInterface{
			Seq: s.nextSeq(), ID: s.newID("eni"), SubnetID: spec.subnet.ID, VpcID: spec.subnet.VpcID,
			Zone: spec.subnet.Zone, ZoneID: zoneID, PrivateIP: ip, PrivateDNS: in.PrivateDNS, Groups: spec.groups,
			Status: "in-use", InstanceID: in.ID, DeviceIndex: 0, DeleteOnTermination: true, AttachTime: now,
			InterfaceType: "interface", Tags: ec2.SetTags(nil, spec.tags["network-interface"]),
		}
		eni.MAC = macFor(eni.ID)
		eni.AttachmentID = "eni-attach-" + strings.TrimPrefix(s.newID("eni"), "eni-")
		s.model.ENIs[eni.ID] = eni
		s.save(bucketENIs, eni.ID, eni)
		in.ENIID = eni.ID
		for _, d := range spec.devices {
			v := &ec2.Volume{
				Seq: s.nextSeq(), ID: s.newID("vol"), Zone: spec.subnet.Zone, ZoneID: zoneID, Type: d.Type,
				SizeGiB: d.SizeGiB, Iops: d.Iops, Throughput: d.Throughput, Encrypted: d.Encrypted, KMSKeyID: d.KMSKeyID,
				SnapshotID: d.SnapshotID, State: "in-use", CreateTime: now, InstanceID: in.ID, Device: d.Device,
				DeleteOnTermination: d.DeleteOnTermination, AttachTime: now, Tags: ec2.SetTags(spec.tags["volume"], volSys),
			}
			s.model.Volumes[v.ID] = v
			s.save(bucketVolumes, v.ID, v)
			in.Volumes = append(in.Volumes, ec2.AttachedVolume{DeviceName: d.Device, VolumeID: v.ID,
				DeleteOnTermination: d.DeleteOnTermination, AttachTime: now})
			encrypted := v.Encrypted
			s.startLedger(&billing.LedgerEntry{ResourceID: v.ID, ResourceType: "volume", Type: v.Type, SizeGiB: v.SizeGiB,
				Encrypted: &encrypted, Zone: v.Zone, InstanceID: in.ID, PricePerHour: billing.VolumeHourly(v.Type, v.SizeGiB), Started: now,
				Tags: ec2.TagsMap(v.Tags), Caller: spec.caller})
		}
		s.model.Instances[in.ID] = in
		s.model.InstTags.Add(in.ID, in.Tags)
		s.save(bucketInstances, in.ID, in)
		s.scheduleDeadline(in)
		s.startLedger(&billing.LedgerEntry{ResourceID: in.ID, ResourceType: "instance", Type: in.InstanceType,
			CapacityType: in.CapacityType, Zone: in.Zone, PricePerHour: price, Started: in.RunningAt,
			Tags: ec2.TagsMap(in.Tags), Caller: spec.caller})
		out = append(out, in)
	}
	if s.bootDelay == 0 {
		s.advanceLocked(now)
	}
	return out
}

// --- RunInstances ---

func (s *Service) runInstances(c *call) (wire.Response, *wire.Error) {
	minC, okMin, err := c.q.Int("MinCount")
	if err != nil {
		return nil, err
	}
	maxC, okMax, err := c.q.Int("MaxCount")
	if err != nil {
		return nil, err
	}
	if !okMin {
		return nil, wire.Missing("MinCount")
	}
	if !okMax {
		return nil, wire.Missing("MaxCount")
	}
	if minC < 1 || maxC < minC {
		return nil, wire.InvalidValue("Value (%d) for parameter minCount is invalid. Expected a value between 1 and maxCount (%d).", minC, maxC)
	}
	if maxC > 1000 {
		return nil, wire.Errorf(http.StatusBadRequest, wire.CodeInstanceLimitExceeded, "You have requested more instances (%d) than your current instance limit of 1000 allows for the specified instance type.", maxC)
	}
	data, err := parseLaunchData(c.q, "")
	if err != nil {
		return nil, err
	}
	resp := &wire.RunInstancesResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		var lt *ec2.LaunchTemplate
		var ver *ec2.LaunchTemplateVersion
		if lq := c.q.Get("LaunchTemplate"); lq != nil {
			var e *wire.Error
			if lt, e = s.findTemplate(lq.Str("LaunchTemplateId"), lq.Str("LaunchTemplateName")); e != nil {
				return e
			}
			if ver, e = templateVersion(lt, lq.Str("Version")); e != nil {
				return e
			}
			data = mergeLaunchData(ver.Data, data)
		}
		spec, e := s.resolveAndCheck(c, data, c.q.Str("SubnetId"), int(maxC))
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
func (s *Service) resolveAndCheck(c *call, data ec2.LaunchData, subnetID string, count int) (*launchSpec, *wire.Error) {
	spec, e := s.resolveLaunch(c.caller, data, subnetID, count, launchTagTypes)
	if e != nil {
		return nil, e
	}
	spec.clientToken = c.q.Str("ClientToken")
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
		return nil, wire.InsufficientCapacity(spec.instanceType, spec.subnet.Zone)
	}
	return spec, nil
}

func (s *Service) finishRun(c *call, spec *launchSpec, resp *wire.RunInstancesResponse) *wire.Error {
	if c.dryRun {
		return wire.DryRun()
	}
	ins := s.createInstances(spec, c.now)
	resp.ReservationID, resp.OwnerID = ins[0].ReservationID, s.account
	env := s.env()
	for _, in := range ins {
		c.event.Created = append(c.event.Created, in.ID)
		c.event.Created = append(c.event.Created, in.ENIID)
		for _, v := range in.Volumes {
			c.event.Created = append(c.event.Created, v.VolumeID)
		}
		resp.Instances = append(resp.Instances, env.Instance(in))
	}
	return nil
}

// --- TerminateInstances ---

// checkInstanceIDs rejects malformed IDs, then reports the missing ones together.
// Callers hold s.mu.
func (s *Service) checkInstanceIDs(ids []string) *wire.Error {
	for _, id := range ids {
		if !validID(id, "i") {
			return wire.InstanceMalformed(id)
		}
	}
	var missing []string
	for _, id := range ids {
		if s.model.Instances[id] == nil {
			missing = append(missing, id)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return wire.InstanceNotFound(missing[0])
	}
	return wire.BadRequest(wire.CodeInvalidInstanceIDNotFound, "The instance IDs '%s' do not exist", strings.Join(missing, ", "))
}

func (s *Service) terminateInstances(c *call) (wire.Response, *wire.Error) {
	return s.changeInstances(c, "TerminateInstances", nil, func(in *ec2.Instance) string {
		c.event.Terminated = append(c.event.Terminated, in.ID)
		switch in.State {
		case ec2.StatePending, ec2.StateRunning, ec2.StateStopping, ec2.StateStopped:
		default:
			return in.State
		}
		if f := s.leakFault(in.ID); f != nil {
			// The leak: EC2 says it is shutting down, but nothing happens.
			c.event.Faults = append(c.event.Faults, f.ID+":"+in.ID)
			s.consumeFault(f)
			s.saveMeta()
			return ec2.StateShuttingDown
		}
		in.State = ec2.StateShuttingDown
		in.TerminateRequestedAt = c.now
		in.TerminatedAt = c.now.Add(s.shutdownDelay)
		in.TransitionReason = fmt.Sprintf("User initiated (%s)", c.now.UTC().Format("2006-01-02 15:04:05 GMT"))
		s.stopLedger(in.ID, c.now)
		s.save(bucketInstances, in.ID, in)
		s.scheduleDeadline(in)
		s.noteStateChange(in, ec2.StateShuttingDown, c.now)
		return in.State
	})
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
