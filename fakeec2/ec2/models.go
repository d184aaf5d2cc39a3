package ec2

import (
	"sort"
	"time"
)

// EKSImageOwner is the account that owns the EKS-optimized AMIs (alias "amazon").
const EKSImageOwner = "602401143452"

// The resource records below are the store's model: plain Go values, persisted as JSON.
// They never see form values or XML; fakeec2's wire layer converts.

// Tag is a resource tag.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// TagsMap returns tags as a map (for the ledger and the admin API).
func TagsMap(tags []Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

// TagValue is the value of the tag key, and whether tags has it.
func TagValue(tags []Tag, key string) (string, bool) {
	for _, t := range tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return "", false
}

// SetTags returns tags with add applied (a key present is overwritten in place).
func SetTags(tags []Tag, add []Tag) []Tag {
	out := append([]Tag(nil), tags...)
	for _, a := range add {
		found := false
		for i := range out {
			if out[i].Key == a.Key {
				out[i].Value = a.Value
				found = true
				break
			}
		}
		if !found {
			out = append(out, a)
		}
	}
	return out
}

// DeleteTags removes tags by key, and by value too when hasValue.
func DeleteTags(tags []Tag, del []TagDeletion) []Tag {
	out := tags[:0:0]
	for _, t := range tags {
		keep := true
		for _, d := range del {
			if d.Key == t.Key && (!d.HasValue || d.Value == t.Value) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, t)
		}
	}
	return out
}

// TagSpec is one TagSpecification.N: tags to put on resources of one type at creation.
type TagSpec struct {
	ResourceType string
	Tags         []Tag
}

// TagDeletion is one tag DeleteTags removes: by key, or by key and value when HasValue.
type TagDeletion struct {
	Key      string
	Value    string
	HasValue bool
}

type MetadataOptions struct {
	HTTPEndpoint            string `json:"httpEndpoint,omitempty"`
	HTTPTokens              string `json:"httpTokens,omitempty"`
	HTTPProtocolIPv6        string `json:"httpProtocolIpv6,omitempty"`
	HTTPPutResponseHopLimit int32  `json:"httpPutResponseHopLimit,omitempty"`
	InstanceMetadataTags    string `json:"instanceMetadataTags,omitempty"`
}

type AttachedVolume struct {
	DeviceName          string    `json:"deviceName"`
	VolumeID            string    `json:"volumeId"`
	DeleteOnTermination bool      `json:"deleteOnTermination"`
	AttachTime          time.Time `json:"attachTime"`
}

type Instance struct {
	Seq                   uint64           `json:"seq"`
	ID                    string           `json:"id"`
	ReservationID         string           `json:"reservationId"`
	OwnerID               string           `json:"ownerId"`
	Caller                string           `json:"caller"`
	ImageID               string           `json:"imageId"`
	InstanceType          string           `json:"instanceType"`
	Architecture          string           `json:"architecture"`
	Zone                  string           `json:"zone"`
	ZoneID                string           `json:"zoneId"`
	SubnetID              string           `json:"subnetId"`
	VpcID                 string           `json:"vpcId"`
	PrivateIP             string           `json:"privateIp"`
	PrivateDNS            string           `json:"privateDns"`
	ENIID                 string           `json:"eniId"`
	SecurityGroups        []string         `json:"securityGroups"`
	Volumes               []AttachedVolume `json:"volumes"`
	RootDeviceName        string           `json:"rootDeviceName"`
	KeyName               string           `json:"keyName,omitempty"`
	IAMProfileArn         string           `json:"iamProfileArn,omitempty"`
	IAMProfileID          string           `json:"iamProfileId,omitempty"`
	Metadata              MetadataOptions  `json:"metadata"`
	UserData              string           `json:"userData,omitempty"` // base64, as sent
	CapacityType          string           `json:"capacityType"`       // "on-demand" or "spot"
	SpotRequestID         string           `json:"spotRequestId,omitempty"`
	LaunchTemplateID      string           `json:"launchTemplateId,omitempty"`
	LaunchTemplateName    string           `json:"launchTemplateName,omitempty"`
	LaunchTemplateVersion string           `json:"launchTemplateVersion,omitempty"`
	FleetID               string           `json:"fleetId,omitempty"`
	ClientToken           string           `json:"clientToken,omitempty"`
	LaunchIndex           int              `json:"launchIndex"`
	Tags                  []Tag            `json:"tags"`
	State                 string           `json:"state"`
	LaunchTime            time.Time        `json:"launchTime"`
	RunningAt             time.Time        `json:"runningAt"` // pending ends here
	TerminateRequestedAt  time.Time        `json:"terminateRequestedAt,omitempty"`
	TerminatedAt          time.Time        `json:"terminatedAt,omitempty"` // shutting-down ends here
	// ReclaimAt is when EC2 takes a warned spot instance back (zero: not being reclaimed).
	ReclaimAt   time.Time `json:"reclaimAt,omitempty"`
	StateReason string    `json:"stateReason,omitempty"`
	// StateReasonCode is set when something other than a user stopped the instance
	// (Server.SpotInstanceTermination); empty means Client.UserInitiatedShutdown.
	StateReasonCode  string  `json:"stateReasonCode,omitempty"`
	TransitionReason string  `json:"transitionReason,omitempty"`
	PricePerHour     float64 `json:"pricePerHour"`
	// Stop/start (stopstart.go): StoppedAt ends stopping; SecondaryENIs are the
	// interfaces AttachNetworkInterface added; MetadataAppliedAt ends a
	// ModifyInstanceMetadataOptions' pending state; ConsoleExtra is appended console text.
	StoppedAt         time.Time `json:"stoppedAt,omitempty"`
	SecondaryENIs     []string  `json:"secondaryEnis,omitempty"`
	MetadataAppliedAt time.Time `json:"metadataAppliedAt,omitempty"`
	ConsoleExtra      string    `json:"consoleExtra,omitempty"`
	// DisableAPITermination and DisableAPIStop are the instance's termination and stop
	// protection (RunInstances, a template, ModifyInstanceAttribute).
	DisableAPITermination bool `json:"disableApiTermination,omitempty"`
	DisableAPIStop        bool `json:"disableApiStop,omitempty"`
}

type Volume struct {
	Seq                 uint64    `json:"seq"`
	ID                  string    `json:"id"`
	Zone                string    `json:"zone"`
	ZoneID              string    `json:"zoneId"`
	Type                string    `json:"type"`
	SizeGiB             int32     `json:"sizeGiB"`
	Iops                int32     `json:"iops,omitempty"`
	Throughput          int32     `json:"throughput,omitempty"`
	Encrypted           bool      `json:"encrypted"`
	KMSKeyID            string    `json:"kmsKeyId,omitempty"`
	SnapshotID          string    `json:"snapshotId,omitempty"`
	State               string    `json:"state"` // in-use, available
	CreateTime          time.Time `json:"createTime"`
	InstanceID          string    `json:"instanceId,omitempty"`
	Device              string    `json:"device,omitempty"`
	DeleteOnTermination bool      `json:"deleteOnTermination"`
	AttachTime          time.Time `json:"attachTime,omitempty"`
	Tags                []Tag     `json:"tags"`
	// AttachState is the attachment's status (attaching, attached, detaching); Until ends
	// the current transition (creating, attaching, detaching, deleting).
	AttachState string              `json:"attachState,omitempty"`
	Until       time.Time           `json:"until,omitempty"`
	Caller      string              `json:"caller,omitempty"`
	Mod         *VolumeModification `json:"mod,omitempty"`
}

// VolumeModification is a volume's latest ModifyVolume (DescribeVolumesModifications).
type VolumeModification struct {
	OrigSize, TargetSize             int32     `json:",omitempty"`
	OrigType, TargetType             string    `json:",omitempty"`
	OrigIops, TargetIops             int32     `json:",omitempty"`
	OrigThroughput, TargetThroughput int32     `json:",omitempty"`
	Start, End                       time.Time `json:",omitempty"`
}

// Snapshot is an EBS snapshot the account made (the images' root snapshots are AWS's
// and are derived from the images, not stored).
type Snapshot struct {
	Seq         uint64    `json:"seq"`
	ID          string    `json:"id"`
	VolumeID    string    `json:"volumeId"`
	SizeGiB     int32     `json:"sizeGiB"`
	Encrypted   bool      `json:"encrypted"`
	KMSKeyID    string    `json:"kmsKeyId,omitempty"`
	Description string    `json:"description,omitempty"`
	State       string    `json:"state"` // pending, completed
	StartTime   time.Time `json:"startTime"`
	CompletedAt time.Time `json:"completedAt"`
	Tags        []Tag     `json:"tags"`
}

type NetworkInterface struct {
	Seq                 uint64    `json:"seq"`
	ID                  string    `json:"id"`
	SubnetID            string    `json:"subnetId"`
	VpcID               string    `json:"vpcId"`
	Zone                string    `json:"zone"`
	ZoneID              string    `json:"zoneId"`
	PrivateIP           string    `json:"privateIp"`
	PrivateDNS          string    `json:"privateDns"`
	MAC                 string    `json:"mac"`
	Description         string    `json:"description,omitempty"`
	Groups              []string  `json:"groups"`
	Status              string    `json:"status"` // in-use, available
	InstanceID          string    `json:"instanceId,omitempty"`
	AttachmentID        string    `json:"attachmentId,omitempty"`
	DeviceIndex         int       `json:"deviceIndex"`
	DeleteOnTermination bool      `json:"deleteOnTermination"`
	AttachTime          time.Time `json:"attachTime,omitempty"`
	InterfaceType       string    `json:"interfaceType"`
	Tags                []Tag     `json:"tags"`
}

type VPC struct {
	Seq       uint64 `json:"seq"`
	ID        string `json:"id"`
	CIDR      string `json:"cidr"`
	IsDefault bool   `json:"isDefault"`
	Tags      []Tag  `json:"tags"`
}

type Subnet struct {
	Seq       uint64 `json:"seq"`
	ID        string `json:"id"`
	VpcID     string `json:"vpcId"`
	Zone      string `json:"zone"`
	ZoneID    string `json:"zoneId"`
	CIDR      string `json:"cidr"`
	IsDefault bool   `json:"isDefault"`
	Tags      []Tag  `json:"tags"`
}

type SecurityGroup struct {
	Seq         uint64 `json:"seq"`
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	VpcID       string `json:"vpcId"`
	Tags        []Tag  `json:"tags"`
}

type Image struct {
	Seq             uint64    `json:"seq"`
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	Description     string    `json:"description"`
	Architecture    string    `json:"architecture"`
	OwnerID         string    `json:"ownerId"`
	OwnerAlias      string    `json:"ownerAlias"`
	CreationDate    time.Time `json:"creationDate"`
	RootDeviceName  string    `json:"rootDeviceName"`
	RootSnapshotID  string    `json:"rootSnapshotId"`
	RootSizeGiB     int32     `json:"rootSizeGiB"`
	DeprecationTime time.Time `json:"deprecationTime,omitempty"`
	Tags            []Tag     `json:"tags"`
	// Published marks an image PublishRelease added (Reset removes it).
	Published bool `json:"published,omitempty"`
}

// EBSSpec is an EBS block device as requested (pointer fields: set or not).
type EBSSpec struct {
	VolumeSize          *int32 `json:"volumeSize,omitempty"`
	VolumeType          string `json:"volumeType,omitempty"`
	Encrypted           *bool  `json:"encrypted,omitempty"`
	DeleteOnTermination *bool  `json:"deleteOnTermination,omitempty"`
	Iops                *int32 `json:"iops,omitempty"`
	Throughput          *int32 `json:"throughput,omitempty"`
	KMSKeyID            string `json:"kmsKeyId,omitempty"`
	SnapshotID          string `json:"snapshotId,omitempty"`
}

type BlockDeviceSpec struct {
	DeviceName string   `json:"deviceName"`
	NoDevice   bool     `json:"noDevice,omitempty"`
	Ebs        *EBSSpec `json:"ebs,omitempty"`
}

type NetworkInterfaceSpec struct {
	DeviceIndex              *int32   `json:"deviceIndex,omitempty"`
	SubnetID                 string   `json:"subnetId,omitempty"`
	Groups                   []string `json:"groups,omitempty"`
	AssociatePublicIPAddress *bool    `json:"associatePublicIpAddress,omitempty"`
	DeleteOnTermination      *bool    `json:"deleteOnTermination,omitempty"`
	Description              string   `json:"description,omitempty"`
	InterfaceType            string   `json:"interfaceType,omitempty"`
}

// LaunchData is what a launch template version (or a RunInstances call) says about the
// instances to launch; unset fields are empty.
type LaunchData struct {
	ImageID           string                 `json:"imageId,omitempty"`
	InstanceType      string                 `json:"instanceType,omitempty"`
	KeyName           string                 `json:"keyName,omitempty"`
	UserData          string                 `json:"userData,omitempty"`
	IAMProfileName    string                 `json:"iamProfileName,omitempty"`
	IAMProfileArn     string                 `json:"iamProfileArn,omitempty"`
	SecurityGroupIDs  []string               `json:"securityGroupIds,omitempty"`
	SecurityGroups    []string               `json:"securityGroups,omitempty"`
	BlockDevices      []BlockDeviceSpec      `json:"blockDevices,omitempty"`
	Metadata          *MetadataOptions       `json:"metadata,omitempty"`
	TagSpecs          []TagSpec              `json:"tagSpecs,omitempty"`
	NetworkInterfaces []NetworkInterfaceSpec `json:"networkInterfaces,omitempty"`
	MarketType        string                 `json:"marketType,omitempty"`
	SpotMaxPrice      string                 `json:"spotMaxPrice,omitempty"`
	Zone              string                 `json:"zone,omitempty"`
	Monitoring        *bool                  `json:"monitoring,omitempty"`
	EbsOptimized      *bool                  `json:"ebsOptimized,omitempty"`
	DisableAPITerm    *bool                  `json:"disableApiTermination,omitempty"`
	DisableAPIStop    *bool                  `json:"disableApiStop,omitempty"`
}

type LaunchTemplateVersion struct {
	Number      int64      `json:"number"`
	Description string     `json:"description,omitempty"`
	CreateTime  time.Time  `json:"createTime"`
	CreatedBy   string     `json:"createdBy"`
	Data        LaunchData `json:"data"`
}

type LaunchTemplate struct {
	Seq            uint64                  `json:"seq"`
	ID             string                  `json:"id"`
	Name           string                  `json:"name"`
	CreateTime     time.Time               `json:"createTime"`
	CreatedBy      string                  `json:"createdBy"`
	DefaultVersion int64                   `json:"defaultVersion"`
	Versions       []LaunchTemplateVersion `json:"versions"`
	Tags           []Tag                   `json:"tags"`
}

// Latest is the number of the template's newest version.
func (lt *LaunchTemplate) Latest() int64 { return lt.Versions[len(lt.Versions)-1].Number }

// Version is the template's version n (nil when it has none).
func (lt *LaunchTemplate) Version(n int64) *LaunchTemplateVersion {
	for i := range lt.Versions {
		if lt.Versions[i].Number == n {
			return &lt.Versions[i]
		}
	}
	return nil
}

type Fleet struct {
	Seq        uint64    `json:"seq"`
	ID         string    `json:"id"`
	CreateTime time.Time `json:"createTime"`
	Instances  []string  `json:"instances"`
	Tags       []Tag     `json:"tags"`
	// What DescribeFleets reports back (service/fleetrecords.go); State "" is active.
	State          string        `json:"state,omitempty"`
	TotalTarget    int64         `json:"totalTarget,omitempty"`
	OnDemandTarget int64         `json:"onDemandTarget,omitempty"`
	SpotTarget     int64         `json:"spotTarget,omitempty"`
	DefaultCapType string        `json:"defaultCapType,omitempty"`
	Configs        []FleetConfig `json:"configs,omitempty"`
	Errors         []FleetError  `json:"errors,omitempty"`
	ClientToken    string        `json:"clientToken,omitempty"`
}

// BySeq sorts records of any kind by creation order.
func BySeq[T any](items []T, seq func(T) uint64) {
	sort.Slice(items, func(i, j int) bool { return seq(items[i]) < seq(items[j]) })
}

// Tagged is a record whose tags CreateTags, DeleteTags and DescribeTags see.
type Tagged interface {
	// TagRef returns the record's ID, its sequence number and its tags, to change in place.
	TagRef() (id string, seq uint64, tags *[]Tag)
}

func (r *Instance) TagRef() (string, uint64, *[]Tag)         { return r.ID, r.Seq, &r.Tags }
func (r *Volume) TagRef() (string, uint64, *[]Tag)           { return r.ID, r.Seq, &r.Tags }
func (r *Snapshot) TagRef() (string, uint64, *[]Tag)         { return r.ID, r.Seq, &r.Tags }
func (r *NetworkInterface) TagRef() (string, uint64, *[]Tag) { return r.ID, r.Seq, &r.Tags }
func (r *VPC) TagRef() (string, uint64, *[]Tag)              { return r.ID, r.Seq, &r.Tags }
func (r *Subnet) TagRef() (string, uint64, *[]Tag)           { return r.ID, r.Seq, &r.Tags }
func (r *SecurityGroup) TagRef() (string, uint64, *[]Tag)    { return r.ID, r.Seq, &r.Tags }
func (r *Image) TagRef() (string, uint64, *[]Tag)            { return r.ID, r.Seq, &r.Tags }
func (r *LaunchTemplate) TagRef() (string, uint64, *[]Tag)   { return r.ID, r.Seq, &r.Tags }
func (r *Fleet) TagRef() (string, uint64, *[]Tag)            { return r.ID, r.Seq, &r.Tags }
