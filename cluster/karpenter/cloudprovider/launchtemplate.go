package cloudprovider

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/mitchellh/hashstructure/v2"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// launchTemplateCacheTTL is how long a launch template known to exist is used without
// asking EC2 again (the real provider keeps them 5 minutes too).
const launchTemplateCacheTTL = 5 * time.Minute

// launchTemplate is everything that goes into one EC2 launch template. Its hash names the
// template (karpenter.k8s.aws/<hash>), so one template serves every launch with the same
// configuration and a changed configuration gets a new template, as in the real provider.
type launchTemplate struct {
	ClusterName         string
	ImageID             string
	UserData            string
	SecurityGroupIDs    []string
	InstanceProfile     string
	BlockDeviceMappings []*apisv1.BlockDeviceMapping
	MetadataOptions     *apisv1.MetadataOptions
	AssociatePublicIP   *bool
	DetailedMonitoring  *bool
	CapacityType        string
	// Tags go on the template and, through it, on the network interface.
	Tags map[string]string
}

// Name is karpenter.k8s.aws/<hash of the configuration>.
func (lt *launchTemplate) Name() string {
	h, err := hashstructure.Hash(lt, hashstructure.FormatV2, &hashstructure.HashOptions{SlicesAsSets: true})
	if err != nil {
		panic(fmt.Sprintf("hashing launch template: %v", err)) // only plain data is hashed
	}
	return fmt.Sprintf("%s/%d", launchTemplatePrefix, h)
}

type launchTemplateProvider struct {
	ec2 EC2API
	now func() time.Time

	mu    sync.Mutex
	known map[string]time.Time   // name -> when it was last seen to exist
	locks map[string]*sync.Mutex // one creation at a time per name
}

func newLaunchTemplateProvider(api EC2API, now func() time.Time) *launchTemplateProvider {
	return &launchTemplateProvider{ec2: api, now: now, known: map[string]time.Time{}, locks: map[string]*sync.Mutex{}}
}

// Ensure makes sure a template for lt exists in EC2 and returns its name: it looks in its
// cache, then DescribeLaunchTemplates by name, then CreateLaunchTemplate.
func (p *launchTemplateProvider) Ensure(ctx context.Context, lt *launchTemplate) (string, error) {
	name := lt.Name()
	p.mu.Lock()
	if seen, ok := p.known[name]; ok && p.now().Sub(seen) < launchTemplateCacheTTL {
		p.mu.Unlock()
		return name, nil
	}
	lock, ok := p.locks[name]
	if !ok {
		lock = &sync.Mutex{}
		p.locks[name] = lock
	}
	p.mu.Unlock()

	lock.Lock()
	defer lock.Unlock()
	p.mu.Lock()
	if seen, ok := p.known[name]; ok && p.now().Sub(seen) < launchTemplateCacheTTL {
		p.mu.Unlock()
		return name, nil
	}
	p.mu.Unlock()

	_, err := p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	switch {
	case err == nil:
	case IsNotFound(err):
		if err := p.create(ctx, name, lt); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("describing launch template %s: %w", name, err)
	}
	p.mu.Lock()
	p.known[name] = p.now()
	p.mu.Unlock()
	return name, nil
}

// Invalidate forgets a template, e.g. after CreateFleet said it does not exist.
func (p *launchTemplateProvider) Invalidate(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.known, name)
}

func (p *launchTemplateProvider) create(ctx context.Context, name string, lt *launchTemplate) error {
	data := &ec2types.RequestLaunchTemplateData{
		ImageId:             aws.String(lt.ImageID),
		UserData:            aws.String(base64.StdEncoding.EncodeToString([]byte(lt.UserData))),
		BlockDeviceMappings: blockDeviceMappings(lt.BlockDeviceMappings),
		MetadataOptions:     metadataOptions(lt.MetadataOptions),
		Monitoring:          &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(aws.ToBool(lt.DetailedMonitoring))},
		TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{
			// CreateFleet cannot tag network interfaces; the launch template does (as the
			// real provider does it).
			{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: ec2Tags(lt.Tags)},
		},
	}
	if lt.InstanceProfile != "" {
		data.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(lt.InstanceProfile)}
	}
	if lt.CapacityType == karpv1.CapacityTypeSpot {
		data.TagSpecifications = append(data.TagSpecifications, ec2types.LaunchTemplateTagSpecificationRequest{
			ResourceType: ec2types.ResourceTypeSpotInstancesRequest, Tags: ec2Tags(lt.Tags),
		})
	}
	if lt.AssociatePublicIP != nil {
		// Security groups then belong to the interface, not the instance.
		data.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			AssociatePublicIpAddress: lt.AssociatePublicIP,
			DeviceIndex:              aws.Int32(0),
			Groups:                   lt.SecurityGroupIDs,
		}}
	} else {
		data.SecurityGroupIds = lt.SecurityGroupIDs
	}
	tags := map[string]string{TagLaunchTemplateCluster: lt.ClusterName}
	for k, v := range lt.Tags {
		tags[k] = v
	}
	_, err := p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: data,
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: ec2Tags(tags)},
		},
	})
	if err != nil && errorCode(err) != codeLaunchTemplateExists { // another process won the race
		return fmt.Errorf("creating launch template %s: %w", name, err)
	}
	return nil
}

func blockDeviceMappings(bdms []*apisv1.BlockDeviceMapping) []ec2types.LaunchTemplateBlockDeviceMappingRequest {
	var out []ec2types.LaunchTemplateBlockDeviceMappingRequest
	for _, b := range bdms {
		if b == nil || b.EBS == nil {
			continue
		}
		req := ec2types.LaunchTemplateBlockDeviceMappingRequest{
			DeviceName: b.DeviceName,
			Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{
				DeleteOnTermination: b.EBS.DeleteOnTermination,
				Encrypted:           b.EBS.Encrypted,
				Iops:                int32Ptr(b.EBS.IOPS),
				KmsKeyId:            b.EBS.KMSKeyID,
				SnapshotId:          b.EBS.SnapshotID,
				Throughput:          int32Ptr(b.EBS.Throughput),
				VolumeType:          ec2types.VolumeType(aws.ToString(b.EBS.VolumeType)),
			},
		}
		if b.EBS.VolumeSize != nil {
			// EC2 sizes volumes in GiB. "80Gi" is 80 GiB here; the real provider passes
			// ScaledValue(Giga), which would make it 86.
			gib := (b.EBS.VolumeSize.Value() + (1<<30 - 1)) >> 30
			req.Ebs.VolumeSize = aws.Int32(int32(gib))
		}
		out = append(out, req)
	}
	return out
}

func metadataOptions(m *apisv1.MetadataOptions) *ec2types.LaunchTemplateInstanceMetadataOptionsRequest {
	// The CRD defaults these; an object that did not pass the API server gets the same.
	out := &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
		HttpEndpoint:            ec2types.LaunchTemplateInstanceMetadataEndpointStateEnabled,
		HttpProtocolIpv6:        ec2types.LaunchTemplateInstanceMetadataProtocolIpv6Disabled,
		HttpPutResponseHopLimit: aws.Int32(1),
		HttpTokens:              ec2types.LaunchTemplateHttpTokensStateRequired,
	}
	if m == nil {
		return out
	}
	if m.HTTPEndpoint != nil {
		out.HttpEndpoint = ec2types.LaunchTemplateInstanceMetadataEndpointState(*m.HTTPEndpoint)
	}
	if m.HTTPProtocolIPv6 != nil {
		out.HttpProtocolIpv6 = ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(*m.HTTPProtocolIPv6)
	}
	if m.HTTPPutResponseHopLimit != nil {
		out.HttpPutResponseHopLimit = aws.Int32(int32(*m.HTTPPutResponseHopLimit))
	}
	if m.HTTPTokens != nil {
		out.HttpTokens = ec2types.LaunchTemplateHttpTokensState(*m.HTTPTokens)
	}
	return out
}

func int32Ptr(p *int64) *int32 {
	if p == nil {
		return nil
	}
	return aws.Int32(int32(*p))
}

// ec2Tags turns a map into EC2 tags, sorted by key so requests are stable.
func ec2Tags(m map[string]string) []ec2types.Tag {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ec2types.Tag, 0, len(keys))
	for _, k := range keys {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}
