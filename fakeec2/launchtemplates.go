package fakeec2

import (
	"fmt"
	"regexp"
	"strconv"
)

var (
	validVolumeTypes = map[string]bool{"gp2": true, "gp3": true, "io1": true, "io2": true, "st1": true, "sc1": true, "standard": true}
	ltNameRE         = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)
)

// parseLaunchData decodes the launch fields shared by RunInstances (at the top level) and
// CreateLaunchTemplate (under LaunchTemplateData). prefix names the structure in errors.
func parseLaunchData(q *query, prefix string) (launchData, *APIError) {
	var d launchData
	if q == nil {
		return d, nil
	}
	d.ImageID = q.str("ImageId")
	d.InstanceType = q.str("InstanceType")
	d.KeyName = q.str("KeyName")
	d.UserData = q.str("UserData")
	d.IAMProfileName = q.str("IamInstanceProfile.Name")
	d.IAMProfileArn = q.str("IamInstanceProfile.Arn")
	d.SecurityGroupIDs = q.strs("SecurityGroupId")
	d.SecurityGroups = q.strs("SecurityGroup")
	d.Zone = q.str("Placement.AvailabilityZone")
	d.MarketType = q.str("InstanceMarketOptions.MarketType")
	d.SpotMaxPrice = q.str("InstanceMarketOptions.SpotOptions.MaxPrice")
	if d.MarketType != "" && d.MarketType != "spot" && d.MarketType != "capacity-block" {
		return d, errInvalidValue("Value (%s) for parameter InstanceMarketOptions.MarketType is invalid. Valid values: spot, capacity-block", d.MarketType)
	}
	if v, ok, err := q.boolean("Monitoring.Enabled"); err != nil {
		return d, err
	} else if ok {
		d.Monitoring = &v
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"EbsOptimized", &d.EbsOptimized}, {"DisableApiTermination", &d.DisableAPITerm}, {"DisableApiStop", &d.DisableAPIStop}} {
		if v, ok, err := q.boolean(b.name); err != nil {
			return d, err
		} else if ok {
			*b.dst = &v
		}
	}
	for i, m := range q.list("BlockDeviceMapping") {
		bd, err := parseBlockDevice(m, fmt.Sprintf("%sBlockDeviceMapping.%d", prefix, i+1))
		if err != nil {
			return d, err
		}
		d.BlockDevices = append(d.BlockDevices, bd)
	}
	if mo := q.get("MetadataOptions"); mo != nil {
		m := &metadataOptions{
			HTTPEndpoint: mo.str("HttpEndpoint"), HTTPTokens: mo.str("HttpTokens"),
			HTTPProtocolIPv6: mo.str("HttpProtocolIpv6"), InstanceMetadataTags: mo.str("InstanceMetadataTags"),
		}
		if n, ok, err := mo.integer("HttpPutResponseHopLimit"); err != nil {
			return d, err
		} else if ok {
			if n < 1 || n > 64 {
				return d, errInvalidValue("The HttpPutResponseHopLimit value must be between 1 and 64.")
			}
			m.HTTPPutResponseHopLimit = int32(n)
		}
		if m.HTTPTokens != "" && m.HTTPTokens != "optional" && m.HTTPTokens != "required" {
			return d, errInvalidValue("Value (%s) for parameter %sMetadataOptions.HttpTokens is invalid. Valid values: optional, required", m.HTTPTokens, prefix)
		}
		for name, v := range map[string]string{"HttpEndpoint": m.HTTPEndpoint, "HttpProtocolIpv6": m.HTTPProtocolIPv6, "InstanceMetadataTags": m.InstanceMetadataTags} {
			if v != "" && v != "enabled" && v != "disabled" {
				return d, errInvalidValue("Value (%s) for parameter %sMetadataOptions.%s is invalid. Valid values: enabled, disabled", v, prefix, name)
			}
		}
		d.Metadata = m
	}
	specs, err := q.tagSpecs("TagSpecification")
	if err != nil {
		return d, err
	}
	d.TagSpecs = specs
	for _, n := range q.list("NetworkInterface") {
		ni := networkInterfaceSpec{SubnetID: n.str("SubnetId"), Groups: n.strs("SecurityGroupId"),
			Description: n.str("Description"), InterfaceType: n.str("InterfaceType")}
		if v, ok, err := n.integer("DeviceIndex"); err != nil {
			return d, err
		} else if ok {
			i := int32(v)
			ni.DeviceIndex = &i
		}
		if v, ok, err := n.boolean("AssociatePublicIpAddress"); err != nil {
			return d, err
		} else if ok {
			ni.AssociatePublicIPAddress = &v
		}
		if v, ok, err := n.boolean("DeleteOnTermination"); err != nil {
			return d, err
		} else if ok {
			ni.DeleteOnTermination = &v
		}
		d.NetworkInterfaces = append(d.NetworkInterfaces, ni)
	}
	return d, nil
}

func parseBlockDevice(m *query, name string) (blockDeviceSpec, *APIError) {
	bd := blockDeviceSpec{DeviceName: m.str("DeviceName")}
	if bd.DeviceName == "" {
		return bd, errMissing(name + ".DeviceName")
	}
	if m.has("NoDevice") {
		bd.NoDevice = true
		return bd, nil
	}
	e := m.get("Ebs")
	if e == nil {
		return bd, nil
	}
	spec := &ebsSpec{VolumeType: e.str("VolumeType"), KMSKeyID: e.str("KmsKeyId"), SnapshotID: e.str("SnapshotId")}
	if spec.VolumeType != "" && !validVolumeTypes[spec.VolumeType] {
		return bd, errInvalidValue("Value (%s) for parameter volumeType is invalid. Valid values: standard, io1, io2, gp2, sc1, st1, gp3", spec.VolumeType)
	}
	for field, dst := range map[string]**int32{"VolumeSize": &spec.VolumeSize, "Iops": &spec.Iops, "Throughput": &spec.Throughput} {
		n, ok, err := e.integer(field)
		if err != nil {
			return bd, err
		}
		if ok {
			if n < 1 || n > 256000 {
				return bd, errInvalidValue("Value (%d) for parameter %s.Ebs.%s is invalid.", n, name, field)
			}
			v := int32(n)
			*dst = &v
		}
	}
	if spec.VolumeSize != nil && *spec.VolumeSize > 65536 {
		return bd, errInvalidValue("Volume of %dGiB is too large; the maximum is 65536GiB.", *spec.VolumeSize)
	}
	for field, dst := range map[string]**bool{"Encrypted": &spec.Encrypted, "DeleteOnTermination": &spec.DeleteOnTermination} {
		v, ok, err := e.boolean(field)
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
func mergeLaunchData(base, over launchData) launchData {
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
	out.TagSpecs = append(append([]tagSpec(nil), base.TagSpecs...), over.TagSpecs...)
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
func (s *Server) findTemplate(id, name string) (*launchTemplate, *APIError) {
	switch {
	case id != "":
		if !validID(id, "lt") {
			return nil, badRequest(CodeInvalidLaunchTemplateIDBad, "The specified launch template ID is invalid: %s", id)
		}
		lt := s.templates[id]
		if lt == nil {
			return nil, badRequest(CodeInvalidLaunchTemplateIDNotFound, "The specified launch template, with template ID %s, does not exist.", id)
		}
		return lt, nil
	case name != "":
		lt := s.templates[s.ltByName[name]]
		if lt == nil {
			return nil, badRequest(CodeInvalidLaunchTemplateNameNF, "The specified launch template, with template name %s, does not exist.", name)
		}
		return lt, nil
	}
	return nil, errMissing("LaunchTemplateId or LaunchTemplateName")
}

// templateVersion resolves "", "$Default", "$Latest" or a number.
func templateVersion(lt *launchTemplate, v string) (*launchTemplateVersion, *APIError) {
	var n int64
	switch v {
	case "", "$Default":
		n = lt.DefaultVersion
	case "$Latest":
		n = lt.latest()
	default:
		var err error
		n, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, errInvalidValue("Invalid launch template version %q: expected a number, $Latest or $Default.", v)
		}
	}
	ver := lt.version(n)
	if ver == nil {
		return nil, badRequest(CodeInvalidLaunchTemplateIDVersion, "Could not find launch template version %s for template %s", v, lt.ID)
	}
	return ver, nil
}

func (s *Server) createdBy(caller string) string {
	return fmt.Sprintf("arn:aws:iam::%s:user/%s", s.account, caller)
}

// --- wire shapes ---

type xmlLaunchTemplate struct {
	LaunchTemplateID     string   `xml:"launchTemplateId"`
	LaunchTemplateName   string   `xml:"launchTemplateName"`
	CreateTime           string   `xml:"createTime"`
	CreatedBy            string   `xml:"createdBy"`
	DefaultVersionNumber int64    `xml:"defaultVersionNumber"`
	LatestVersionNumber  int64    `xml:"latestVersionNumber"`
	Tags                 []xmlTag `xml:"tagSet>item"`
}

func wireLaunchTemplate(lt *launchTemplate) *xmlLaunchTemplate {
	return &xmlLaunchTemplate{LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, CreateTime: xmlTime(lt.CreateTime),
		CreatedBy: lt.CreatedBy, DefaultVersionNumber: lt.DefaultVersion, LatestVersionNumber: lt.latest(), Tags: xmlTags(lt.Tags)}
}

type xmlLTEbs struct {
	DeleteOnTermination string `xml:"deleteOnTermination,omitempty"`
	Encrypted           string `xml:"encrypted,omitempty"`
	Iops                int32  `xml:"iops,omitempty"`
	KMSKeyID            string `xml:"kmsKeyId,omitempty"`
	SnapshotID          string `xml:"snapshotId,omitempty"`
	Throughput          int32  `xml:"throughput,omitempty"`
	VolumeSize          int32  `xml:"volumeSize,omitempty"`
	VolumeType          string `xml:"volumeType,omitempty"`
}

type xmlLTBlockDevice struct {
	DeviceName string    `xml:"deviceName"`
	NoDevice   string    `xml:"noDevice,omitempty"`
	Ebs        *xmlLTEbs `xml:"ebs,omitempty"`
}

type xmlLTMetadata struct {
	State                   string `xml:"state,omitempty"`
	HTTPTokens              string `xml:"httpTokens,omitempty"`
	HTTPPutResponseHopLimit int32  `xml:"httpPutResponseHopLimit,omitempty"`
	HTTPEndpoint            string `xml:"httpEndpoint,omitempty"`
	HTTPProtocolIPv6        string `xml:"httpProtocolIpv6,omitempty"`
	InstanceMetadataTags    string `xml:"instanceMetadataTags,omitempty"`
}

type xmlLTTagSpec struct {
	ResourceType string   `xml:"resourceType"`
	Tags         []xmlTag `xml:"tagSet>item"`
}

type xmlLTNetIf struct {
	AssociatePublicIPAddress string   `xml:"associatePublicIpAddress,omitempty"`
	DeleteOnTermination      string   `xml:"deleteOnTermination,omitempty"`
	Description              string   `xml:"description,omitempty"`
	DeviceIndex              *int32   `xml:"deviceIndex,omitempty"`
	Groups                   []string `xml:"groupSet>groupId"`
	InterfaceType            string   `xml:"interfaceType,omitempty"`
	SubnetID                 string   `xml:"subnetId,omitempty"`
}

type xmlLTIam struct {
	Arn  string `xml:"arn,omitempty"`
	Name string `xml:"name,omitempty"`
}

type xmlLTMarket struct {
	MarketType  string `xml:"marketType,omitempty"`
	SpotOptions *struct {
		MaxPrice string `xml:"maxPrice,omitempty"`
	} `xml:"spotOptions,omitempty"`
}

type xmlLTPlacement struct {
	AvailabilityZone string `xml:"availabilityZone,omitempty"`
}

type xmlLTData struct {
	BlockDeviceMappings []xmlLTBlockDevice `xml:"blockDeviceMappingSet>item"`
	EbsOptimized        string             `xml:"ebsOptimized,omitempty"`
	IAMInstanceProfile  *xmlLTIam          `xml:"iamInstanceProfile,omitempty"`
	ImageID             string             `xml:"imageId,omitempty"`
	InstanceMarket      *xmlLTMarket       `xml:"instanceMarketOptions,omitempty"`
	InstanceType        string             `xml:"instanceType,omitempty"`
	KeyName             string             `xml:"keyName,omitempty"`
	MetadataOptions     *xmlLTMetadata     `xml:"metadataOptions,omitempty"`
	Monitoring          *struct {
		Enabled string `xml:"enabled"`
	} `xml:"monitoring,omitempty"`
	NetworkInterfaces []xmlLTNetIf    `xml:"networkInterfaceSet>item"`
	Placement         *xmlLTPlacement `xml:"placement,omitempty"`
	SecurityGroupIDs  []string        `xml:"securityGroupIdSet>item"`
	SecurityGroups    []string        `xml:"securityGroupSet>item"`
	TagSpecifications []xmlLTTagSpec  `xml:"tagSpecificationSet>item"`
	UserData          string          `xml:"userData,omitempty"`
}

func optBool(b *bool) string {
	if b == nil {
		return ""
	}
	return xbool(*b)
}

func optInt(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func wireLaunchData(d launchData) xmlLTData {
	x := xmlLTData{ImageID: d.ImageID, InstanceType: d.InstanceType, KeyName: d.KeyName, UserData: d.UserData,
		SecurityGroupIDs: d.SecurityGroupIDs, SecurityGroups: d.SecurityGroups, EbsOptimized: optBool(d.EbsOptimized)}
	for _, bd := range d.BlockDevices {
		xb := xmlLTBlockDevice{DeviceName: bd.DeviceName}
		if bd.NoDevice {
			xb.NoDevice = ""
		}
		if e := bd.Ebs; e != nil {
			xb.Ebs = &xmlLTEbs{DeleteOnTermination: optBool(e.DeleteOnTermination), Encrypted: optBool(e.Encrypted),
				Iops: optInt(e.Iops), KMSKeyID: e.KMSKeyID, SnapshotID: e.SnapshotID, Throughput: optInt(e.Throughput),
				VolumeSize: optInt(e.VolumeSize), VolumeType: e.VolumeType}
		}
		x.BlockDeviceMappings = append(x.BlockDeviceMappings, xb)
	}
	if d.IAMProfileName != "" || d.IAMProfileArn != "" {
		x.IAMInstanceProfile = &xmlLTIam{Arn: d.IAMProfileArn, Name: d.IAMProfileName}
	}
	if d.MarketType != "" {
		x.InstanceMarket = &xmlLTMarket{MarketType: d.MarketType}
		if d.SpotMaxPrice != "" {
			x.InstanceMarket.SpotOptions = &struct {
				MaxPrice string `xml:"maxPrice,omitempty"`
			}{d.SpotMaxPrice}
		}
	}
	if m := d.Metadata; m != nil {
		x.MetadataOptions = &xmlLTMetadata{State: "applied", HTTPTokens: m.HTTPTokens, HTTPPutResponseHopLimit: m.HTTPPutResponseHopLimit,
			HTTPEndpoint: m.HTTPEndpoint, HTTPProtocolIPv6: m.HTTPProtocolIPv6, InstanceMetadataTags: m.InstanceMetadataTags}
	}
	if d.Monitoring != nil {
		x.Monitoring = &struct {
			Enabled string `xml:"enabled"`
		}{xbool(*d.Monitoring)}
	}
	for _, n := range d.NetworkInterfaces {
		x.NetworkInterfaces = append(x.NetworkInterfaces, xmlLTNetIf{AssociatePublicIPAddress: optBool(n.AssociatePublicIPAddress),
			DeleteOnTermination: optBool(n.DeleteOnTermination), Description: n.Description, DeviceIndex: n.DeviceIndex,
			Groups: n.Groups, InterfaceType: n.InterfaceType, SubnetID: n.SubnetID})
	}
	if d.Zone != "" {
		x.Placement = &xmlLTPlacement{AvailabilityZone: d.Zone}
	}
	for _, ts := range d.TagSpecs {
		x.TagSpecifications = append(x.TagSpecifications, xmlLTTagSpec{ResourceType: ts.ResourceType, Tags: xmlTags(ts.Tags)})
	}
	return x
}

type xmlLTVersion struct {
	LaunchTemplateID   string    `xml:"launchTemplateId"`
	LaunchTemplateName string    `xml:"launchTemplateName"`
	VersionNumber      int64     `xml:"versionNumber"`
	VersionDescription string    `xml:"versionDescription,omitempty"`
	CreateTime         string    `xml:"createTime"`
	CreatedBy          string    `xml:"createdBy"`
	DefaultVersion     bool      `xml:"defaultVersion"`
	LaunchTemplateData xmlLTData `xml:"launchTemplateData"`
}

func wireLTVersion(lt *launchTemplate, v *launchTemplateVersion) xmlLTVersion {
	return xmlLTVersion{LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, VersionNumber: v.Number,
		VersionDescription: v.Description, CreateTime: xmlTime(v.CreateTime), CreatedBy: v.CreatedBy,
		DefaultVersion: v.Number == lt.DefaultVersion, LaunchTemplateData: wireLaunchData(v.Data)}
}

type launchTemplateResponse struct {
	WireHeader
	LaunchTemplate *xmlLaunchTemplate `xml:"launchTemplate"`
}

type launchTemplateVersionResponse struct {
	WireHeader
	Version xmlLTVersion `xml:"launchTemplateVersion"`
}

type describeLaunchTemplatesResponse struct {
	WireHeader
	LaunchTemplates []*xmlLaunchTemplate `xml:"launchTemplates>item"`
	NextToken       string               `xml:"nextToken,omitempty"`
}

type describeLTVersionsResponse struct {
	WireHeader
	Versions  []xmlLTVersion `xml:"launchTemplateVersionSet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

// --- handlers ---

func (s *Server) createLaunchTemplate(c *call) (wireResponse, *APIError) {
	name := c.q.str("LaunchTemplateName")
	if name == "" {
		return nil, errMissing("LaunchTemplateName")
	}
	if !ltNameRE.MatchString(name) {
		return nil, badRequest(CodeInvalidLaunchTemplateNameBad, "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'")
	}
	dq := c.q.get("LaunchTemplateData")
	if dq == nil {
		return nil, errMissing("LaunchTemplateData")
	}
	data, err := parseLaunchData(dq, "LaunchTemplateData.")
	if err != nil {
		return nil, err
	}
	specs, err := c.q.tagSpecs("TagSpecification")
	if err != nil {
		return nil, err
	}
	var tags []Tag
	for _, ts := range specs {
		if ts.ResourceType != "launch-template" {
			return nil, errInvalidValue("'%s' is not a valid taggable resource type for this operation.", ts.ResourceType)
		}
		tags = setTags(tags, ts.Tags)
	}
	resp := &launchTemplateResponse{}
	aerr := s.mutate(c, func() *APIError {
		if _, ok := s.ltByName[name]; ok {
			return badRequest(CodeInvalidLaunchTemplateNameExists, "Launch template name already in use.")
		}
		if e := s.validateTemplateRefs(data); e != nil {
			return e
		}
		if c.dryRun {
			return errDryRun()
		}
		lt := &launchTemplate{Seq: s.nextSeq(), ID: s.newID("lt"), Name: name, CreateTime: c.now,
			CreatedBy: s.createdBy(c.caller), DefaultVersion: 1, Tags: tags,
			Versions: []launchTemplateVersion{{Number: 1, Description: c.q.str("VersionDescription"), CreateTime: c.now,
				CreatedBy: s.createdBy(c.caller), Data: data}}}
		s.templates[lt.ID] = lt
		s.ltByName[name] = lt.ID
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
func (s *Server) validateTemplateRefs(d launchData) *APIError {
	if d.ImageID != "" && s.images[d.ImageID] == nil {
		return badRequest(CodeInvalidAMIIDNotFound, "The image id '[%s]' does not exist", d.ImageID)
	}
	if d.InstanceType != "" && s.types[d.InstanceType] == nil {
		return errInvalidValue("Invalid value '%s' for InstanceType.", d.InstanceType)
	}
	for _, g := range d.SecurityGroupIDs {
		if s.groups[g] == nil {
			return badRequest(CodeInvalidGroupNotFound, "The security group '%s' does not exist", g)
		}
	}
	return nil
}

func (s *Server) createLaunchTemplateVersion(c *call) (wireResponse, *APIError) {
	dq := c.q.get("LaunchTemplateData")
	if dq == nil {
		return nil, errMissing("LaunchTemplateData")
	}
	data, err := parseLaunchData(dq, "LaunchTemplateData.")
	if err != nil {
		return nil, err
	}
	resp := &launchTemplateVersionResponse{}
	aerr := s.mutate(c, func() *APIError {
		lt, e := s.findTemplate(c.q.str("LaunchTemplateId"), c.q.str("LaunchTemplateName"))
		if e != nil {
			return e
		}
		if src := c.q.str("SourceVersion"); src != "" {
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
			return errDryRun()
		}
		v := launchTemplateVersion{Number: lt.latest() + 1, Description: c.q.str("VersionDescription"),
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
func dedupeTagSpecs(specs []tagSpec) []tagSpec {
	var out []tagSpec
	idx := map[string]int{}
	for _, ts := range specs {
		if i, ok := idx[ts.ResourceType]; ok {
			out[i].Tags = setTags(out[i].Tags, ts.Tags)
			continue
		}
		idx[ts.ResourceType] = len(out)
		out = append(out, tagSpec{ResourceType: ts.ResourceType, Tags: setTags(nil, ts.Tags)})
	}
	return out
}

var ltAttrs = attrTable[*launchTemplate]{
	"launch-template-name": func(lt *launchTemplate) []string { return one(lt.Name) },
	"launch-template-id":   func(lt *launchTemplate) []string { return one(lt.ID) },
	"create-time":          func(lt *launchTemplate) []string { return one(xmlTime(lt.CreateTime)) },
}

func (s *Server) describeLaunchTemplates(c *call) (wireResponse, *APIError) {
	req, err := parseDescribe(c, describeSpec[*launchTemplate]{attrs: ltAttrs, tags: func(lt *launchTemplate) []Tag { return lt.Tags },
		min: 1, max: 200, idParam: "LaunchTemplateId", nameParam: "LaunchTemplateName",
		withMax: "The parameter MaxResults cannot be used with LaunchTemplateIds or LaunchTemplateNames.",
		byName: func(n string) (*launchTemplate, *APIError) {
			if lt := s.templates[s.ltByName[n]]; lt != nil {
				return lt, nil
			}
			return nil, badRequest(CodeInvalidLaunchTemplateNameNF, "At least one of the launch templates specified in the request does not exist.")
		},
		seq: func(lt *launchTemplate) uint64 { return lt.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.run(s.templates, func(id string) *APIError {
		_, e := s.findTemplate(id, "")
		return e
	})
	if err != nil {
		return nil, err
	}
	resp := &describeLaunchTemplatesResponse{NextToken: next}
	for _, lt := range page {
		resp.LaunchTemplates = append(resp.LaunchTemplates, wireLaunchTemplate(lt))
	}
	return resp, nil
}

// ltVersionRow is one template version as DescribeLaunchTemplateVersions lists it.
type ltVersionRow struct {
	seq uint64
	lt  *launchTemplate
	v   *launchTemplateVersion
}

var ltVersionAttrs = attrTable[ltVersionRow]{
	"is-default-version": func(x ltVersionRow) []string { return one(xbool(x.v.Number == x.lt.DefaultVersion)) },
	"image-id":           func(x ltVersionRow) []string { return one(x.v.Data.ImageID) },
	"instance-type":      func(x ltVersionRow) []string { return one(x.v.Data.InstanceType) },
	"create-time":        func(x ltVersionRow) []string { return one(xmlTime(x.v.CreateTime)) },
}

func (s *Server) describeLaunchTemplateVersions(c *call) (wireResponse, *APIError) {
	req, err := parseDescribe(c, describeSpec[ltVersionRow]{attrs: ltVersionAttrs, min: 1, max: 200,
		seq: func(x ltVersionRow) uint64 { return x.seq }})
	if err != nil {
		return nil, err
	}
	versions := c.q.strs("LaunchTemplateVersion")
	minV, _, err := c.q.integer("MinVersion")
	if err != nil {
		return nil, err
	}
	maxV, _, err := c.q.integer("MaxVersion")
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var lts []*launchTemplate
	id, name := c.q.str("LaunchTemplateId"), c.q.str("LaunchTemplateName")
	if id != "" || name != "" {
		lt, e := s.findTemplate(id, name)
		if e != nil {
			return nil, e
		}
		lts = []*launchTemplate{lt}
	} else {
		for _, v := range versions {
			if v != "$Latest" && v != "$Default" {
				return nil, errMissing("LaunchTemplateId or LaunchTemplateName")
			}
		}
		if len(versions) == 0 {
			return nil, errMissing("LaunchTemplateId or LaunchTemplateName")
		}
		for _, lt := range s.templates {
			lts = append(lts, lt)
		}
		bySeq(lts, func(lt *launchTemplate) uint64 { return lt.Seq })
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
	page, next := req.list(items)
	resp := &describeLTVersionsResponse{NextToken: next}
	for _, x := range page {
		resp.Versions = append(resp.Versions, wireLTVersion(x.lt, x.v))
	}
	return resp, nil
}

func (s *Server) deleteLaunchTemplate(c *call) (wireResponse, *APIError) {
	resp := &launchTemplateResponse{}
	aerr := s.mutate(c, func() *APIError {
		lt, e := s.findTemplate(c.q.str("LaunchTemplateId"), c.q.str("LaunchTemplateName"))
		if e != nil {
			return e
		}
		if c.dryRun {
			return errDryRun()
		}
		delete(s.templates, lt.ID)
		delete(s.ltByName, lt.Name)
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
