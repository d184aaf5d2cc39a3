package fakeec2

import (
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// The wire form of launch templates: the XML shapes EC2 answers the launch template
// actions with, wireLaunchTemplate, wireLTVersion and wireLaunchData that render a template
// and its versions in them, and the Describe handlers (DescribeLaunchTemplates,
// DescribeLaunchTemplateVersions), which only read the model (launchtemplates.go) and
// answer it.

// --- wire shapes ---

type xmlLaunchTemplate struct {
	LaunchTemplateID     string     `xml:"launchTemplateId"`
	LaunchTemplateName   string     `xml:"launchTemplateName"`
	CreateTime           string     `xml:"createTime"`
	CreatedBy            string     `xml:"createdBy"`
	DefaultVersionNumber int64      `xml:"defaultVersionNumber"`
	LatestVersionNumber  int64      `xml:"latestVersionNumber"`
	Tags                 []wire.Tag `xml:"tagSet>item"`
}

func wireLaunchTemplate(lt *ec2.LaunchTemplate) *xmlLaunchTemplate {
	return &xmlLaunchTemplate{LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, CreateTime: wire.FormatTime(lt.CreateTime),
		CreatedBy: lt.CreatedBy, DefaultVersionNumber: lt.DefaultVersion, LatestVersionNumber: lt.Latest(), Tags: wire.Tags(lt.Tags)}
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
	ResourceType string     `xml:"resourceType"`
	Tags         []wire.Tag `xml:"tagSet>item"`
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
	return wire.FormatBool(*b)
}

func optInt(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func wireLaunchData(d ec2.LaunchData) xmlLTData {
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
		}{wire.FormatBool(*d.Monitoring)}
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
		x.TagSpecifications = append(x.TagSpecifications, xmlLTTagSpec{ResourceType: ts.ResourceType, Tags: wire.Tags(ts.Tags)})
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

func wireLTVersion(lt *ec2.LaunchTemplate, v *ec2.LaunchTemplateVersion) xmlLTVersion {
	return xmlLTVersion{LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, VersionNumber: v.Number,
		VersionDescription: v.Description, CreateTime: wire.FormatTime(v.CreateTime), CreatedBy: v.CreatedBy,
		DefaultVersion: v.Number == lt.DefaultVersion, LaunchTemplateData: wireLaunchData(v.Data)}
}

type launchTemplateResponse struct {
	wire.Header
	LaunchTemplate *xmlLaunchTemplate `xml:"launchTemplate"`
}

type launchTemplateVersionResponse struct {
	wire.Header
	Version xmlLTVersion `xml:"launchTemplateVersion"`
}

type describeLaunchTemplatesResponse struct {
	wire.Header
	LaunchTemplates []*xmlLaunchTemplate `xml:"launchTemplates>item"`
	NextToken       string               `xml:"nextToken,omitempty"`
}

type describeLTVersionsResponse struct {
	wire.Header
	Versions  []xmlLTVersion `xml:"launchTemplateVersionSet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

// --- Describe handlers ---

var ltAttrs = wire.AttrTable[*ec2.LaunchTemplate]{
	"launch-template-name": func(lt *ec2.LaunchTemplate) []string { return wire.One(lt.Name) },
	"launch-template-id":   func(lt *ec2.LaunchTemplate) []string { return wire.One(lt.ID) },
	"create-time":          func(lt *ec2.LaunchTemplate) []string { return wire.One(wire.FormatTime(lt.CreateTime)) },
}

func (s *Server) describeLaunchTemplates(c *call) (wire.Response, *wire.Error) {
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
	resp := &describeLaunchTemplatesResponse{NextToken: next}
	for _, lt := range page {
		resp.LaunchTemplates = append(resp.LaunchTemplates, wireLaunchTemplate(lt))
	}
	return resp, nil
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

func (s *Server) describeLaunchTemplateVersions(c *call) (wire.Response, *wire.Error) {
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
	resp := &describeLTVersionsResponse{NextToken: next}
	for _, x := range page {
		resp.Versions = append(resp.Versions, wireLTVersion(x.lt, x.v))
	}
	return resp, nil
}
