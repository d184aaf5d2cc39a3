package service

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
func (s *Service) findTemplate(id, name string) (*ec2.LaunchTemplate, *wire.Error) {
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

func (s *Service) createdBy(caller string) string {
	return fmt.Sprintf("arn:aws:iam::%s:user/%s", s.account, caller)
}

// --- handlers ---

var templateTagTypes = map[string]bool{"launch-template": true}

func (s *Service) createLaunchTemplate(c *call) (wire.Response, *wire.Error) {
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
	resp := &wire.LaunchTemplateResponse{}
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
		resp.LaunchTemplate = wire.LaunchTemplate(lt)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// validateTemplateRefs checks what AWS checks when a template is stored: the image and
// security groups it names exist. Callers hold s.mu.
func (s *Service) validateTemplateRefs(d ec2.LaunchData) *wire.Error {
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

func (s *Service) createLaunchTemplateVersion(c *call) (wire.Response, *wire.Error) {
	dq := c.q.Get("LaunchTemplateData")
	if dq == nil {
		return nil, wire.Missing("LaunchTemplateData")
	}
	data, err := parseLaunchData(dq, "LaunchTemplateData.")
	if err != nil {
		return nil, err
	}
	resp := &wire.LaunchTemplateVersionResponse{}
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
		resp.Version = wire.LaunchTemplateVersion(lt, &lt.Versions[len(lt.Versions)-1])
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

func (s *Service) deleteLaunchTemplate(c *call) (wire.Response, *wire.Error) {
	resp := &wire.LaunchTemplateResponse{}
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
		resp.LaunchTemplate = wire.LaunchTemplate(lt)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// --- DescribeLaunchTemplates, DescribeLaunchTemplateVersions ---

var ltAttrs = wire.AttrTable[*ec2.LaunchTemplate]{
	"launch-template-name": func(lt *ec2.LaunchTemplate) []string { return wire.One(lt.Name) },
	"launch-template-id":   func(lt *ec2.LaunchTemplate) []string { return wire.One(lt.ID) },
	"create-time":          func(lt *ec2.LaunchTemplate) []string { return wire.One(wire.FormatTime(lt.CreateTime)) },
}

func (s *Service) describeLaunchTemplates(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.LaunchTemplate]{Attrs: ltAttrs, Tags: func(lt *ec2.LaunchTemplate) []ec2.Tag { return lt.Tags },
		Min: 1, Max: 200, IDParam: "LaunchTemplateId", NameParam: "LaunchTemplateName",
		WithMax: "The parameter MaxResults cannot be used with LaunchTemplateIds or LaunchTemplateNames.",
		ByName: func(n string) (*ec2.LaunchTemplate, *wire.Error) {
			if lt := s.model.Templates[s.model.LTByName[n]]; lt != nil {
				return lt, nil
			}
			return nil, wire.BadRequest(wire.CodeInvalidLaunchTemplateNameNF, "At least one of the launch templates specified in the request does not exist.")
		},
		Seq: func(lt *ec2.LaunchTemplate) uint64 { return lt.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.Templates, func(id string) *wire.Error {
		_, e := s.findTemplate(id, "")
		return e
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeLaunchTemplatesResponse{LaunchTemplates: wire.Items(page, wire.LaunchTemplate), NextToken: next}, nil
}

// ltVersionRow is one template version as DescribeLaunchTemplateVersions lists it.
type ltVersionRow struct {
	seq uint64
	lt  *ec2.LaunchTemplate
	v   *ec2.LaunchTemplateVersion
}

var ltVersionAttrs = wire.AttrTable[ltVersionRow]{
	"is-default-version": func(x ltVersionRow) []string { return wire.One(wire.FormatBool(x.v.Number == x.lt.DefaultVersion)) },
	"image-id":           func(x ltVersionRow) []string { return wire.One(x.v.Data.ImageID) },
	"instance-type":      func(x ltVersionRow) []string { return wire.One(x.v.Data.InstanceType) },
	"create-time":        func(x ltVersionRow) []string { return wire.One(wire.FormatTime(x.v.CreateTime)) },
}

func (s *Service) describeLaunchTemplateVersions(c *call) (wire.Response, *wire.Error) {
	req, err := wire.ParseDescribe(c.q, wire.Describe[ltVersionRow]{Attrs: ltVersionAttrs, Min: 1, Max: 200,
		Seq: func(x ltVersionRow) uint64 { return x.seq }})
	if err != nil {
		return nil, err
	}
	versions := c.q.Strs("LaunchTemplateVersion")
	minV, _, err := c.q.Int("MinVersion")
	if err != nil {
		return nil, err
	}
	maxV, _, err := c.q.Int("MaxVersion")
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var lts []*ec2.LaunchTemplate
	id, name := c.q.Str("LaunchTemplateId"), c.q.Str("LaunchTemplateName")
	if id != "" || name != "" {
		lt, e := s.findTemplate(id, name)
		if e != nil {
			return nil, e
		}
		lts = []*ec2.LaunchTemplate{lt}
	} else {
		for _, v := range versions {
			if v != "$Latest" && v != "$Default" {
				return nil, wire.Missing("LaunchTemplateId or LaunchTemplateName")
			}
		}
		if len(versions) == 0 {
			return nil, wire.Missing("LaunchTemplateId or LaunchTemplateName")
		}
		for _, lt := range s.model.Templates {
			lts = append(lts, lt)
		}
		ec2.BySeq(lts, func(lt *ec2.LaunchTemplate) uint64 { return lt.Seq })
	}
	var items []ltVersionRow
	for _, lt := range lts {
		if len(versions) > 0 {
			seen := map[int64]bool{}
			for _, vs := range versions {
				v, e := templateVersion(lt, vs)
				if e != nil {
					return nil, e
				}
				if !seen[v.Number] {
					seen[v.Number] = true
					items = append(items, ltVersionRow{lt: lt, v: v})
				}
			}
			continue
		}
		for i := range lt.Versions {
			v := &lt.Versions[i]
			if (minV == 0 || v.Number >= minV) && (maxV == 0 || v.Number <= maxV) {
				items = append(items, ltVersionRow{lt: lt, v: v})
			}
		}
	}
	for i := range items {
		items[i].seq = uint64(i + 1)
	}
	page, next := req.List(items)
	return &wire.DescribeLaunchTemplateVersionsResponse{NextToken: next, Versions: wire.Items(page, func(x ltVersionRow) wire.LaunchTemplateVersionItem {
		return wire.LaunchTemplateVersion(x.lt, x.v)
	})}, nil
}
