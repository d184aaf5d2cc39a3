package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The AWS side of a bundle: the aws CLI's JSON of each call, under aws/.
const (
	InstancesFile      = "instances.json"
	SubnetsFile        = "subnets.json"
	SecurityGroupsFile = "security-groups.json"
	ImagesFile         = "images.json"
	OfferingsFile      = "offerings.json"
	SpotPricesFile     = "spot-prices.json"
	EKSClusterFile     = "cluster.json"
)

// awsIDs are the EC2 resources the captured objects name.
type awsIDs struct {
	instances, subnets, groups, images, types []string
}

func (a *awsIDs) add(list *[]string, ids ...string) {
	for _, id := range ids {
		if id != "" && !slices.Contains(*list, id) {
			*list = append(*list, id)
		}
	}
}

// idsOf reads what the objects name: the nodes' instances and types, and the images,
// subnets and security groups the EC2NodeClasses resolved and the NodeClaims run.
func idsOf(objs []*unstructured.Unstructured) *awsIDs {
	a := &awsIDs{}
	for _, o := range objs {
		switch o.GetKind() {
		case "Node":
			pid, _, _ := unstructured.NestedString(o.Object, "spec", "providerID")
			if i := strings.LastIndex(pid, "/"); strings.HasPrefix(pid, "aws://") && i >= 0 {
				a.add(&a.instances, pid[i+1:])
			}
			a.add(&a.types, o.GetLabels()[corev1.LabelInstanceTypeStable])
		case "NodeClaim":
			image, _, _ := unstructured.NestedString(o.Object, "status", "imageID")
			a.add(&a.images, image)
		case "EC2NodeClass":
			a.add(&a.images, statusIDs(o, "amis")...)
			a.add(&a.subnets, statusIDs(o, "subnets")...)
			a.add(&a.groups, statusIDs(o, "securityGroups")...)
		}
	}
	return a
}

// readAWS reads the AWS side of the bundle through the SDK with cfg's credentials:
// read-only Describe calls for what the objects name, and for every instance Karpenter
// tagged (the ones no Node knows too). It returns each file's content by name.
func readAWS(ctx context.Context, cfg aws.Config, objs []*unstructured.Unstructured, now time.Time) (map[string]any, error) {
	c := ec2.NewFromConfig(cfg)
	ids := idsOf(objs)
	var reservations []ec2types.Reservation
	seen := map[string]bool{}
	collect := func(in *ec2.DescribeInstancesInput) error {
		p := ec2.NewDescribeInstancesPaginator(c, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return denied("ec2:DescribeInstances", err)
			}
			for _, r := range page.Reservations {
				if !seen[aws.ToString(r.ReservationId)] {
					seen[aws.ToString(r.ReservationId)] = true
					reservations = append(reservations, r)
				}
			}
		}
		return nil
	}
	if err := collect(&ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"karpenter.sh/nodepool"}}}}); err != nil {
		return nil, err
	}
	if len(ids.instances) > 0 {
		if err := collect(&ec2.DescribeInstancesInput{InstanceIds: ids.instances}); err != nil {
			return nil, err
		}
	}
	cluster := ""
	for _, r := range reservations {
		for _, in := range r.Instances {
			ids.add(&ids.subnets, aws.ToString(in.SubnetId))
			ids.add(&ids.images, aws.ToString(in.ImageId))
			ids.add(&ids.types, string(in.InstanceType))
			for _, g := range in.SecurityGroups {
				ids.add(&ids.groups, aws.ToString(g.GroupId))
			}
			for _, t := range in.Tags {
				if aws.ToString(t.Key) == "eks:eks-cluster-name" && cluster == "" {
					cluster = aws.ToString(t.Value)
				}
			}
		}
	}
	files := map[string]any{InstancesFile: map[string]any{"Reservations": reservations}}
	if len(ids.subnets) > 0 {
		out, err := c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: ids.subnets})
		if err != nil {
			return nil, denied("ec2:DescribeSubnets", err)
		}
		files[SubnetsFile] = map[string]any{"Subnets": out.Subnets}
	}
	if len(ids.groups) > 0 {
		out, err := c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: ids.groups})
		if err != nil {
			return nil, denied("ec2:DescribeSecurityGroups", err)
		}
		files[SecurityGroupsFile] = map[string]any{"SecurityGroups": out.SecurityGroups}
	}
	if len(ids.images) > 0 {
		out, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: ids.images})
		if err != nil {
			return nil, denied("ec2:DescribeImages", err)
		}
		files[ImagesFile] = map[string]any{"Images": out.Images}
	}
	if len(ids.types) > 0 {
		var offerings []ec2types.InstanceTypeOffering
		p := ec2.NewDescribeInstanceTypeOfferingsPaginator(c, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone,
			Filters: []ec2types.Filter{{Name: aws.String("instance-type"), Values: ids.types}}})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, denied("ec2:DescribeInstanceTypeOfferings", err)
			}
			offerings = append(offerings, page.InstanceTypeOfferings...)
		}
		files[OfferingsFile] = map[string]any{"InstanceTypeOfferings": offerings}
		var prices []ec2types.SpotPrice
		sp := ec2.NewDescribeSpotPriceHistoryPaginator(c, &ec2.DescribeSpotPriceHistoryInput{InstanceTypes: typesOf(ids.types),
			StartTime: aws.Time(now.Add(-24 * time.Hour)), ProductDescriptions: []string{"Linux/UNIX"}})
		for sp.HasMorePages() {
			page, err := sp.NextPage(ctx)
			if err != nil {
				return nil, denied("ec2:DescribeSpotPriceHistory", err)
			}
			prices = append(prices, page.SpotPriceHistory...)
		}
		files[SpotPricesFile] = map[string]any{"SpotPriceHistory": prices}
	}
	if cluster != "" {
		out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(cluster)})
		if err != nil {
			return nil, denied("eks:DescribeCluster", err)
		}
		// Its name, version and network only: not its endpoint or certificate authority.
		files[EKSClusterFile] = map[string]any{"cluster": map[string]any{"name": out.Cluster.Name, "version": out.Cluster.Version,
			"kubernetesNetworkConfig": out.Cluster.KubernetesNetworkConfig, "arn": out.Cluster.Arn}}
	}
	return files, nil
}

// writeAWS writes the AWS side's files under dir/aws, redacted.
func writeAWS(dir string, files map[string]any, red *Redactor) error {
	if err := os.MkdirAll(filepath.Join(dir, AWSDir), 0o755); err != nil {
		return err
	}
	for name, v := range files {
		if err := writeAWSJSON(filepath.Join(dir, AWSDir, name), v, red); err != nil {
			return err
		}
	}
	return nil
}

func typesOf(names []string) []ec2types.InstanceType {
	out := make([]ec2types.InstanceType, len(names))
	for i, n := range names {
		out[i] = ec2types.InstanceType(n)
	}
	return out
}

// denied names the call a capture's credentials may not make.
func denied(action string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) && (strings.Contains(api.ErrorCode(), "Unauthorized") || strings.Contains(api.ErrorCode(), "AccessDenied")) {
		return fmt.Errorf("%w: the AWS credentials may not call %s (%s); a capture needs read-only access: AmazonEC2ReadOnlyAccess and eks:DescribeCluster", ErrForbidden, action, api.ErrorCode())
	}
	return fmt.Errorf("calling %s: %w", action, err)
}

// writeAWSJSON writes v as the aws CLI prints it (no empty fields), redacted: account IDs
// in ARNs and owner fields pseudonymised, key pair names taken out.
func writeAWSJSON(path string, v any, red *Redactor) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return err
	}
	generic = redactAWS(pruneNulls(generic), red)
	b, err = json.MarshalIndent(generic, "", "    ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// pruneNulls drops nulls, as the CLI leaves out what AWS did not send.
func pruneNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil {
				delete(v, k)
			} else {
				v[k] = pruneNulls(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = pruneNulls(x)
		}
	}
	return v
}

func redactAWS(v any, red *Redactor) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "OwnerId", "RequesterId", "ImageOwnerAlias":
				if s, ok := x.(string); ok && len(s) == 12 && strings.Trim(s, "0123456789") == "" {
					v[k] = red.Account(s)
					continue
				}
			case "KeyName":
				v[k] = Redacted
				continue
			}
			v[k] = redactAWS(x, red)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = redactAWS(x, red)
		}
		return v
	case string:
		return red.String(v)
	}
	return v
}
