package kubelet

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// EC2API is the part of the aws-sdk-go-v2 EC2 client the kubelet uses; *ec2.Client satisfies it.
type EC2API interface {
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	DescribeInstanceAttribute(ctx context.Context, in *ec2.DescribeInstanceAttributeInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceAttributeOutput, error)
	DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error)
	DescribeVolumes(ctx context.Context, in *ec2.DescribeVolumesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeVolumesOutput, error)
}

var _ EC2API = (*ec2.Client)(nil)

// clusterInstances lists the cluster's pending and running instances.
func clusterInstances(ctx context.Context, api EC2API, cluster string) ([]ec2types.Instance, error) {
	return describeInstances(ctx, api, []ec2types.Filter{
		{Name: aws.String("tag:kubernetes.io/cluster/" + cluster), Values: []string{"owned"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	})
}

// instancesByID describes the given instances with an instance-id filter, which (unlike
// InstanceIds) leaves out unknown IDs instead of failing the whole call.
func instancesByID(ctx context.Context, api EC2API, ids []string) ([]ec2types.Instance, error) {
	var out []ec2types.Instance
	for start := 0; start < len(ids); start += 200 {
		chunk := ids[start:min(start+200, len(ids))]
		got, err := describeInstances(ctx, api, []ec2types.Filter{{Name: aws.String("instance-id"), Values: chunk}})
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

func describeInstances(ctx context.Context, api EC2API, filters []ec2types.Filter) ([]ec2types.Instance, error) {
	var out []ec2types.Instance
	p := ec2.NewDescribeInstancesPaginator(api, &ec2.DescribeInstancesInput{Filters: filters})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instances: %w", err)
		}
		for _, r := range page.Reservations {
			out = append(out, r.Instances...)
		}
	}
	return out, nil
}

// userData returns an instance's decoded user data ("" when it has none).
func userData(ctx context.Context, api EC2API, id string) (string, error) {
	out, err := api.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{
		InstanceId: aws.String(id),
		Attribute:  ec2types.InstanceAttributeNameUserData,
	})
	if err != nil {
		return "", fmt.Errorf("reading the user data of %s: %w", id, err)
	}
	if out.UserData == nil || out.UserData.Value == nil {
		return "", nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(*out.UserData.Value))
	if err != nil {
		return "", errBootstrap("user data is not base64: %v", err)
	}
	return string(raw), nil
}

// rootVolumeGiB returns the size of the instance's root EBS volume, or 0 when EC2 cannot say.
func rootVolumeGiB(ctx context.Context, api EC2API, inst ec2types.Instance) (int32, error) {
	root := deref(inst.RootDeviceName)
	volumeID := ""
	for _, bdm := range inst.BlockDeviceMappings {
		if bdm.Ebs == nil || bdm.Ebs.VolumeId == nil {
			continue
		}
		if volumeID == "" || deref(bdm.DeviceName) == root {
			volumeID = *bdm.Ebs.VolumeId
		}
	}
	if volumeID == "" {
		return 0, nil
	}
	out, err := api.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volumeID}})
	if err != nil {
		return 0, fmt.Errorf("describing root volume %s: %w", volumeID, err)
	}
	if len(out.Volumes) == 0 || out.Volumes[0].Size == nil {
		return 0, nil
	}
	return *out.Volumes[0].Size, nil
}
