package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// The XML shapes of the launch template actions (CreateLaunchTemplate, ...Version,
// DeleteLaunchTemplate, DescribeLaunchTemplates, DescribeLaunchTemplateVersions) and the
// conversions that render a template, a version and its launch data in them.

// LaunchTemplateItem is a launch template as the launch template actions answer it.
type LaunchTemplateItem struct {
	LaunchTemplateID     string `xml:"launchTemplateId"`
	LaunchTemplateName   string `xml:"launchTemplateName"`
	CreateTime           string `xml:"createTime"`
	CreatedBy            string `xml:"createdBy"`
	DefaultVersionNumber int64  `xml:"defaultVersionNumber"`
	LatestVersionNumber  int64  `xml:"latestVersionNumber"`
	Tags                 []Tag  `xml:"tagSet>item"`
}

// LaunchTemplate renders lt as DescribeLaunchTemplates does.
func LaunchTemplate(lt *ec2.LaunchTemplate) *LaunchTemplateItem {
	return &LaunchTemplateItem{LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, CreateTime: FormatTime(lt.CreateTime),
		CreatedBy: lt.CreatedBy, DefaultVersionNumber: lt.DefaultVersion, LatestVersionNumber: lt.Latest(), Tags: Tags(lt.Tags)}
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
	ResourceType string `xml:"resourceType"`
	Tags         []Tag  `xml:"tagSet>item"`
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
	return FormatBool(*b)
}

func optInt(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// launchData renders a version's launch data: only what it sets.
func launchData(d ec2.LaunchData) xmlLTData {
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
		}{FormatBool(*d.Monitoring)}
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
		x.TagSpecifications = append(x.TagSpecifications, xmlLTTagSpec{ResourceType: ts.ResourceType, Tags: Tags(ts.Tags)})
	}
	return x
}

// LaunchTemplateVersionItem is one version of a template, with its launch data.
type LaunchTemplateVersionItem struct {
	LaunchTemplateID   string    `xml:"launchTemplateId"`
	LaunchTemplateName string    `xml:"launchTemplateName"`
	VersionNumber      int64     `xml:"versionNumber"`
	VersionDescription string    `xml:"versionDescription,omitempty"`
	CreateTime         string    `xml:"createTime"`
	CreatedBy          string    `xml:"createdBy"`
	DefaultVersion     bool      `xml:"defaultVersion"`
	LaunchTemplateData xmlLTData `xml:"launchTemplateData"`
}

// LaunchTemplateVersion renders version v of lt as DescribeLaunchTemplateVersions does.
func LaunchTemplateVersion(lt *ec2.LaunchTemplate, v *ec2.LaunchTemplateVersion) LaunchTemplateVersionItem {
	return LaunchTemplateVersionItem{LaunchTemplateID: lt.ID, LaunchTemplateName: lt.Name, VersionNumber: v.Number,
		VersionDescription: v.Description, CreateTime: FormatTime(v.CreateTime), CreatedBy: v.CreatedBy,
		DefaultVersion: v.Number == lt.DefaultVersion, LaunchTemplateData: launchData(v.Data)}
}

// LaunchTemplateResponse is the body of CreateLaunchTemplate's and DeleteLaunchTemplate's answers.
type LaunchTemplateResponse struct {
	Header
	LaunchTemplate *LaunchTemplateItem `xml:"launchTemplate"`
}

// LaunchTemplateVersionResponse is the body of CreateLaunchTemplateVersion's answer.
type LaunchTemplateVersionResponse struct {
	Header
	Version LaunchTemplateVersionItem `xml:"launchTemplateVersion"`
}

// DescribeLaunchTemplatesResponse is the body of its action's answer.
type DescribeLaunchTemplatesResponse struct {
	Header
	LaunchTemplates []*LaunchTemplateItem `xml:"launchTemplates>item"`
	NextToken       string                `xml:"nextToken,omitempty"`
}

// DescribeLaunchTemplateVersionsResponse is the body of its action's answer.
type DescribeLaunchTemplateVersionsResponse struct {
	Header
	Versions  []LaunchTemplateVersionItem `xml:"launchTemplateVersionSet>item"`
	NextToken string                      `xml:"nextToken,omitempty"`
}
