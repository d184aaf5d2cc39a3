package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// The XML shape of DescribeImages and Image, which renders an image in it.

type xmlEbsBlockDevice struct {
	SnapshotID          string `xml:"snapshotId,omitempty"`
	VolumeSize          int32  `xml:"volumeSize,omitempty"`
	DeleteOnTermination string `xml:"deleteOnTermination,omitempty"`
	VolumeType          string `xml:"volumeType,omitempty"`
	Iops                int32  `xml:"iops,omitempty"`
	Throughput          int32  `xml:"throughput,omitempty"`
	Encrypted           string `xml:"encrypted,omitempty"`
	KMSKeyID            string `xml:"kmsKeyId,omitempty"`
}

type xmlBlockDeviceMapping struct {
	DeviceName string             `xml:"deviceName"`
	Ebs        *xmlEbsBlockDevice `xml:"ebs,omitempty"`
}

// ImageItem is an image as DescribeImages answers it.
type ImageItem struct {
	ImageID            string                  `xml:"imageId"`
	ImageLocation      string                  `xml:"imageLocation"`
	ImageState         string                  `xml:"imageState"`
	ImageOwnerID       string                  `xml:"imageOwnerId"`
	CreationDate       string                  `xml:"creationDate"`
	IsPublic           string                  `xml:"isPublic"`
	Architecture       string                  `xml:"architecture"`
	ImageType          string                  `xml:"imageType"`
	PlatformDetails    string                  `xml:"platformDetails"`
	UsageOperation     string                  `xml:"usageOperation"`
	ImageOwnerAlias    string                  `xml:"imageOwnerAlias,omitempty"`
	Name               string                  `xml:"name"`
	Description        string                  `xml:"description"`
	RootDeviceType     string                  `xml:"rootDeviceType"`
	RootDeviceName     string                  `xml:"rootDeviceName"`
	BlockDeviceMapping []xmlBlockDeviceMapping `xml:"blockDeviceMapping>item"`
	VirtualizationType string                  `xml:"virtualizationType"`
	Hypervisor         string                  `xml:"hypervisor"`
	EnaSupport         string                  `xml:"enaSupport"`
	SriovNetSupport    string                  `xml:"sriovNetSupport"`
	BootMode           string                  `xml:"bootMode"`
	ImdsSupport        string                  `xml:"imdsSupport"`
	DeprecationTime    string                  `xml:"deprecationTime,omitempty"`
	Tags               []Tag                   `xml:"tagSet>item"`
}

// DescribeImagesResponse is the body of its action's answer.
type DescribeImagesResponse struct {
	Header
	Images    []ImageItem `xml:"imagesSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

// Image renders im as DescribeImages does: an EBS-backed HVM image whose root device is a
// gp3 volume of its root snapshot.
func Image(im *ec2.Image) ImageItem {
	return ImageItem{
		ImageID: im.ID, ImageLocation: "amazon/" + im.Name, ImageState: "available", ImageOwnerID: im.OwnerID,
		CreationDate: FormatTime(im.CreationDate), IsPublic: "true", Architecture: im.Architecture,
		ImageType: "machine", PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances",
		ImageOwnerAlias: im.OwnerAlias, Name: im.Name, Description: im.Description,
		RootDeviceType: "ebs", RootDeviceName: im.RootDeviceName,
		BlockDeviceMapping: []xmlBlockDeviceMapping{{DeviceName: im.RootDeviceName, Ebs: &xmlEbsBlockDevice{
			SnapshotID: im.RootSnapshotID, VolumeSize: im.RootSizeGiB, DeleteOnTermination: "true",
			VolumeType: "gp3", Iops: 3000, Throughput: 125, Encrypted: "false"}}},
		VirtualizationType: "hvm", Hypervisor: "xen", EnaSupport: "true", SriovNetSupport: "simple",
		BootMode: bootMode(im.Architecture), ImdsSupport: "v2.0",
		DeprecationTime: FormatTime(im.DeprecationTime), Tags: Tags(im.Tags),
	}
}

// bootMode is the boot mode of an image or instance of the architecture.
func bootMode(arch string) string {
	if arch == "arm64" {
		return "uefi"
	}
	return "uefi-preferred"
}
