package fakeec2

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

var (
	validVolumeTypes = map[string]bool{"gp2": true, "gp3": true, "io1": true, "io2": true, "st1": true, "sc1": true, "standard": true}
	ltNameRE         = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)
)

// parseLaunchData decodes the launch fields shared by RunInstances (at the top level) and
// CreateLaunchTemplate (under LaunchTemplateData). prefix names the structure in errors.
func parseLaunchData(q *wire.Query, prefix string) (ec2.LaunchData, *wire.Error) {
	var d ec2.LaunchData
	if q == nil {
		return d, nil
	}
	d.ImageID = q.Str("ImageId")
	d.InstanceType = q.Str("InstanceType")
	d.KeyName = q.Str("KeyName")
	d.UserData = q.Str("UserData")
	d.IAMProfileName = q.Str("IamInstanceProfile.Name")
	d.IAMProfileArn = q.Str("IamInstanceProfile.Arn")
	d.SecurityGroupIDs = q.Strs("SecurityGroupId")
	d.SecurityGroups = q.Strs("SecurityGroup")
	d.Zone = q.Str("Placement.AvailabilityZone")
	d.MarketType = q.Str("InstanceMarketOptions.MarketType")
	d.SpotMaxPrice = q.Str("InstanceMarketOptions.SpotOptions.MaxPrice")
	if d.MarketType != "" && d.MarketType != "spot" && d.MarketType != "capacity-block" {
		return d, wire.InvalidValue("Value (%s) for parameter InstanceMarketOptions.MarketType is invalid. Valid values: spot, capacity-block", d.MarketType)
	}
	if v, ok, err := q.Bool("Monitoring.Enabled"); err != nil {
		return d, err
	} else if ok {
		d.Monitoring = &v
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"EbsOptimized", &d.EbsOptimized}, {"DisableApiTermination", &d.DisableAPITerm}, {"DisableApiStop", &d.DisableAPIStop}} {
		if v, ok, err := q.Bool(b.name); err != nil {
			return d, err
		} else if ok {
			*b.dst = &v
		}
	}
	for i, m := range q.List("BlockDeviceMapping") {
		bd, err := parseBlockDevice(m, fmt.Sprintf("%sBlockDeviceMapping.%d", prefix, i+1))
		if err != nil {
			return d, err
		}
		d.BlockDevices = append(d.BlockDevices, bd)
	}
	if mo := q.Get("MetadataOptions"); mo != nil {
		m := &ec2.MetadataOptions{
			HTTPEndpoint: mo.Str("HttpEndpoint"), HTTPTokens: mo.Str("HttpTokens"),
			HTTPProtocolIPv6: mo.Str("HttpProtocolIpv6"), InstanceMetadataTags: mo.Str("InstanceMetadataTags"),
		}
		if n, ok, err := mo.Int("HttpPutResponseHopLimit"); err != nil {
			return d, err
		} else if ok {
			if n < 1 || n > 64 {
				return d, wire.InvalidValue("The HttpPutResponseHopLimit value must be between 1 and 64.")
			}
			m.HTTPPutResponseHopLimit = int32(n)
		}
		if m.HTTPTokens != "" && m.HTTPTokens != "optional" && m.HTTPTokens != "required" {
			return d, wire.InvalidValue("Value (%s) for parameter %sMetadataOptions.HttpTokens is invalid. Valid values: optional, required", m.HTTPTokens, prefix)
		}
		for name, v := range map[string]string{"HttpEndpoint": m.HTTPEndpoint, "HttpProtocolIpv6": m.HTTPProtocolIPv6, "InstanceMetadataTags": m.InstanceMetadataTags} {
			if v != "" && v != "enabled" && v != "disabled" {
				return d, wire.InvalidValue("Value (%s) for parameter %sMetadataOptions.%s is invalid. Valid values: enabled, disabled", v, prefix, name)
			}
		}
		d.Metadata = m
	}
	specs, err := q.TagSpecs("TagSpecification")
	if err != nil {
		return d, err
	}
	d.TagSpecs = specs
	for _, n := range q.List("NetworkInterface") {
		ni := ec2.NetworkInterfaceSpec{SubnetID: n.Str("SubnetId"), Groups: n.Strs("SecurityGroupId"),
			Description: n.Str("Description"), InterfaceType: n.Str("InterfaceType")}
		if v, ok, err := n.Int("DeviceIndex"); err != nil {
			return d, err
		} else if ok {
			i := int32(v)
			ni.DeviceIndex = &i
		}
		if v, ok, err := n.Bool("AssociatePublicIpAddress"); err != nil {
			return d, err
		} else if ok {
			ni.AssociatePublicIPAddress = &v
		}
		if v, ok, err := n.Bool("DeleteOnTermination"); err != nil {
			return d, err
		} else if ok {
			ni.DeleteOnTermination = &v
		}
		d.NetworkInterfaces = append(d.NetworkInterfaces, ni)
	}
	return d, nil
}

func parseBlockDevice(m *wire.Query, name string) (ec2.BlockDeviceSpec, *wire.Error) {
	bd := ec2.BlockDeviceSpec{DeviceName: m.Str("DeviceName")}
	if bd.DeviceName == "" {
		return bd, wire.Missing(name + ".DeviceName")
	}
	if m.Has("NoDevice") {
		bd.NoDevice = true
		return bd, nil
	}
	e := m.Get("Ebs")
	if e == nil {
		return bd, nil
	}
	spec := &ec2.EBSSpec{VolumeType: e.Str("VolumeType"), KMSKeyID: e.Str("KmsKeyId"), SnapshotID: e.Str("SnapshotId")}
	if spec.VolumeType != "" && !validVolumeTypes[spec.VolumeType] {
		return bd, wire.InvalidValue("Value (%s) for parameter volumeType is invalid. Valid values: standard, io1, io2, gp2, sc1, st1, gp3", spec.VolumeType)
	}
	for field, dst := range map[string]**int32{"VolumeSize": &spec.VolumeSize, "Iops": &spec.Iops, "Throughput": &spec.Throughput} {
		n, ok, err := e.Int(field)
		if err != nil {
			return bd, err
		}
		if ok {
			if n < 1 || n > 256000 {
				return bd, wire.InvalidValue("Value (%d) for parameter %s.Ebs.%s is invalid.", n, name, field)
			}
			v := int32(n)
			*dst = &v
		}
	}
	if spec.VolumeSize != nil && *spec.VolumeSize > 65536 {
		return bd, wire.InvalidValue("Volume of %dGiB is too large; the maximum is 65536GiB.", *spec.VolumeSize)
	}
	for field, dst := range map[string]**bool{"Encrypted": &spec.Encrypted, "DeleteOnTermination": &spec.DeleteOnTermination} {
		v, ok, err := e.Bool(field)
		if err != nil {
			return bd, err
		}
		if ok {
			b := v
			*dst = &b
		}
	}
	bd.Ebs = spec
	return bd, nil
}

// mergeLaunchData lays a request's fields over a template's (the request wins field by field).
func mergeLaunchData(base, over ec2.LaunchData) ec2.LaunchData {
	out := base
	str := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	str(&out.ImageID, over.ImageID)
	str(&out.InstanceType, over.InstanceType)
	str(&out.KeyName, over.KeyName)
	str(&out.UserData, over.UserData)
	str(&out.Zone, over.Zone)
	str(&out.MarketType, over.MarketType)
	str(&out.SpotMaxPrice, over.SpotMaxPrice)
	if over.IAMProfileName != "" || over.IAMProfileArn != "" {
		out.IAMProfileName, out.IAMProfileArn = over.IAMProfileName, over.IAMProfileArn
	}
	if len(over.SecurityGroupIDs) > 0 || len(over.SecurityGroups) > 0 {
		out.SecurityGroupIDs, out.SecurityGroups = over.SecurityGroupIDs, over.SecurityGroups
	}
	if len(over.BlockDevices) > 0 {
		out.BlockDevices = over.BlockDevices
	}
	if over.Metadata != nil {
		out.Metadata = over.Metadata
	}
	if len(over.NetworkInterfaces) > 0 {
		out.NetworkInterfaces = over.NetworkInterfaces
	}
	out.TagSpecs = append(append([]ec2.TagSpec(nil), base.TagSpecs...), over.TagSpecs...)
	if over.Monitoring != nil {
		out.Monitoring = over.Monitoring
	}
	for dst, v := range map[**bool]*bool{&out.EbsOptimized: over.EbsOptimized, &out.DisableAPITerm: over.DisableAPITerm, &out.DisableAPIStop: over.DisableAPIStop} {
		if v != nil {
			*dst = v
		}
	}
	return out
}

// findTemplate resolves a template by ID or name. Callers hold s.mu.
func (s *Server) findTemplate(id, name string) (*ec2.LaunchTemplate, *wire.Error) {
	switch {
	case id != "":
		if !validID(id, "lt") {
			return nil, wire.BadRequest(wire.CodeInvalidLaunchTemplateIDBad, "The specified launch template ID is invalid: %s", id)
		}
		lt := s.model.Templates[id]
		if lt == nil {
			return nil, wire.BadRequest(wire.CodeInvalidLaunchTemplateIDNotFound, "The specified launch template, with template ID %s, does not exist.", id)
		}
		return lt, nil
	case name != "":
		lt := s.model.Templates[s.model.LTByName[name]]
		if lt == nil {
			return nil, wire.BadRequest(wire.CodeInvalidLaunchTemplateNameNF, "The specified launch template, with template name %s, does not exist.", name)
		}
		return lt, nil
	}
	return nil, wire.Missing("LaunchTemplateId or LaunchTemplateName")
}

// templateVersion resolves "", "$Default", "$Latest" or a number.
func templateVersion(lt *ec2.LaunchTemplate, v string) (*ec2.LaunchTemplateVersion, *wire.Error) {
	var n int64
	switch v {
	case "", "$Default":
		n = lt.DefaultVersion
	case "$Latest":
		n = lt.Latest()
	default:
		var err error
		n, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, wire.InvalidValue("Invalid launch template version %q: expected a number, $Latest or $Default.", v)
		}
	}
	ver := lt.Version(n)
	if ver == nil {
		return nil, wire.BadRequest(wire.CodeInvalidLaunchTemplateIDVersion, "Could not find launch template version %s for template %s", v, lt.ID)
	}
	return ver, nil
}

func (s *Server) createdBy(caller string) string {
	return fmt.Sprintf("arn:aws:iam::%s:user/%s", s.account, caller)
}

// --- handlers ---

var templateTagTypes = map[string]bool{"launch-template": true}

func (s *Server) createLaunchTemplate(c *call) (wire.Response, *wire.Error) {
	name := c.q.Str("LaunchTemplateName")
	if name == "" {
		return nil, wire.Missing("LaunchTemplateName")
	}
	if !ltNameRE.MatchString(name) {
		return nil, wire.BadRequest(wire.CodeInvalidLaunchTemplateNameBad, "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'")
	}
	dq := c.q.Get("LaunchTemplateData")
	if dq == nil {
		return nil, wire.Missing("LaunchTemplateData")
	}
	data, err := parseLaunchData(dq, "LaunchTemplateData.")
	if err != nil {
		return nil, err
	}
	byType, err := specTags(c.q, templateTagTypes)
	if err != nil {
		return nil, err
	}
	tags := byType["launch-template"]
	resp := &launchTemplateResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		if _, ok := s.model.LTByName[name]; ok {
			return wire.BadRequest(wire.CodeInvalidLaunchTemplateNameExists, "Launch template name already in use.")
		}
		if e := s.validateTemplateRefs(data); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		lt := &ec2.LaunchTemplate{Seq: s.nextSeq(), ID: s.newID("lt"), Name: name, CreateTime: c.now,
			CreatedBy: s.createdBy(c.caller), DefaultVersion: 1, Tags: tags,
			Versions: []ec2.LaunchTemplateVersion{{Number: 1, Description: c.q.Str("VersionDescription"), CreateTime: c.now,
				CreatedBy: s.createdBy(c.caller), Data: data}}}
		s.model.Templates[lt.ID] = lt
		s.model.LTByName[name] = lt.ID
		s.save(bucketTemplates, lt.ID, lt)
		c.event.Created = append(c.event.Created, lt.ID)
		resp.LaunchTemplate = wireLaunchTemplate(lt)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// validateTemplateRefs checks what AWS checks when a template is stored: the image and
// security groups it names exist. Callers hold s.mu.
func (s *Server) validateTemplateRefs(d ec2.LaunchData) *wire.Error {
	if d.ImageID != "" && s.model.Images[d.ImageID] == nil {
		return wire.BadRequest(wire.CodeInvalidAMIIDNotFound, "The image id '[%s]' does not exist", d.ImageID)
	}
	if d.InstanceType != "" && s.types[d.InstanceType] == nil {
		return wire.InvalidValue("Invalid value '%s' for InstanceType.", d.InstanceType)
	}
	for _, g := range d.SecurityGroupIDs {
		if s.model.Groups[g] == nil {
			return wire.BadRequest(wire.CodeInvalidGroupNotFound, "The security group '%s' does not exist", g)
		}
	}
	return nil
}

func (s *Server) createLaunchTemplateVersion(c *call) (wire.Response, *wire.Error) {
	dq := c.q.Get("LaunchTemplateData")
	if dq == nil {
		return nil, wire.Missing("LaunchTemplateData")
	}
	data, err := parseLaunchData(dq, "LaunchTemplateData.")
	if err != nil {
		return nil, err
	}
	resp := &launchTemplateVersionResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		lt, e := s.findTemplate(c.q.Str("LaunchTemplateId"), c.q.Str("LaunchTemplateName"))
		if e != nil {
			return e
		}
		if src := c.q.Str("SourceVersion"); src != "" {
			base, e := templateVersion(lt, src)
			if e != nil {
				return e
			}
			data = mergeLaunchData(base.Data, data)
			data.TagSpecs = dedupeTagSpecs(data.TagSpecs)
		}
		if e := s.validateTemplateRefs(data); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		v := ec2.LaunchTemplateVersion{Number: lt.Latest() + 1, Description: c.q.Str("VersionDescription"),
			CreateTime: c.now, CreatedBy: s.createdBy(c.caller), Data: data}
		lt.Versions = append(lt.Versions, v)
		s.save(bucketTemplates, lt.ID, lt)
		resp.Version = wireLTVersion(lt, &lt.Versions[len(lt.Versions)-1])
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// dedupeTagSpecs keeps one spec per resource type, later tags overriding earlier ones.
func dedupeTagSpecs(specs []ec2.TagSpec) []ec2.TagSpec {
	var out []ec2.TagSpec
	idx := map[string]int{}
	for _, ts := range specs {
		if i, ok := idx[ts.ResourceType]; ok {
			out[i].Tags = ec2.SetTags(out[i].Tags, ts.Tags)
			continue
		}
		idx[ts.ResourceType] = len(out)
		out = append(out, ec2.TagSpec{ResourceType: ts.ResourceType, Tags: ec2.SetTags(nil, ts.Tags)})
	}
	return out
}

func (s *Server) deleteLaunchTemplate(c *call) (wire.Response, *wire.Error) {
	resp := &launchTemplateResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		lt, e := s.findTemplate(c.q.Str("LaunchTemplateId"), c.q.Str("LaunchTemplateName"))
		if e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		delete(s.model.Templates, lt.ID)
		delete(s.model.LTByName, lt.Name)
		s.remove(bucketTemplates, lt.ID)
		c.event.Terminated = append(c.event.Terminated, lt.ID)
		resp.LaunchTemplate = wireLaunchTemplate(lt)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}
