package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// instanceStates are the states of an instance that still exists for Karpenter: a terminated
// instance is gone (NodeClaimNotFound).
var instanceStates = []string{"pending", "running", "stopping", "stopped", "shutting-down"}

// instance is an EC2 instance as the provider needs it.
type instance struct {
	ID             string
	Type           string
	Zone           string
	SubnetID       string
	ImageID        string
	State          ec2types.InstanceStateName
	CapacityType   string
	LaunchTime     time.Time
	PrivateDNS     string
	SecurityGroups []string
	Tags           map[string]string
}

func newInstance(i ec2types.Instance) *instance {
	out := &instance{
		ID:           aws.ToString(i.InstanceId),
		Type:         string(i.InstanceType),
		SubnetID:     aws.ToString(i.SubnetId),
		ImageID:      aws.ToString(i.ImageId),
		CapacityType: karpv1.CapacityTypeOnDemand,
		LaunchTime:   aws.ToTime(i.LaunchTime),
		PrivateDNS:   aws.ToString(i.PrivateDnsName),
		Tags:         map[string]string{},
	}
	if i.Placement != nil {
		out.Zone = aws.ToString(i.Placement.AvailabilityZone)
	}
	if i.State != nil {
		out.State = i.State.Name
	}
	if i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot || i.SpotInstanceRequestId != nil {
		out.CapacityType = karpv1.CapacityTypeSpot
	}
	for _, g := range i.SecurityGroups {
		out.SecurityGroups = append(out.SecurityGroups, aws.ToString(g.GroupId))
	}
	for _, t := range i.Tags {
		out.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

// ProviderID is aws:///<zone>/<instance-id>, the Node's spec.providerID.
func (i *instance) ProviderID() string { return fmt.Sprintf("aws:///%s/%s", i.Zone, i.ID) }

// ParseInstanceID returns the instance ID of an aws:///<zone>/<id> provider ID.
func ParseInstanceID(providerID string) (string, error) {
	rest, ok := strings.CutPrefix(providerID, "aws:///")
	if !ok {
		return "", fmt.Errorf("provider ID %q does not start with aws:///", providerID)
	}
	_, id, ok := strings.Cut(rest, "/")
	if !ok || !strings.HasPrefix(id, "i-") {
		return "", fmt.Errorf("provider ID %q is not aws:///<zone>/<instance-id>", providerID)
	}
	return id, nil
}

func (c *CloudProvider) getInstance(ctx context.Context, id string) (*instance, error) {
	out, err := c.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{
		InstanceIds: []string{id},
		Filters:     []ec2types.Filter{{Name: aws.String("instance-state-name"), Values: instanceStates}},
	})
	if IsNotFound(err) {
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s: %w", id, err))
	}
	if err != nil {
		return nil, fmt.Errorf("describing instance %s: %w", id, err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if aws.ToString(i.InstanceId) == id {
				return newInstance(i), nil
			}
		}
	}
	return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s is terminated", id))
}

// listInstances returns this cluster's Karpenter instances that still exist.
func (c *CloudProvider) listInstances(ctx context.Context) ([]*instance, error) {
	pages := ec2.NewDescribeInstancesPaginator(c.ec2, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{
			{Name: aws.String("tag:" + ClusterTagKey(c.opts.ClusterName)), Values: []string{"owned"}},
			{Name: aws.String("tag-key"), Values: []string{karpv1.NodePoolLabelKey}},
			{Name: aws.String("instance-state-name"), Values: instanceStates},
		},
	})
	var out []*instance
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instances: %w", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				out = append(out, newInstance(i))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// launchGroup is the instance types that launch from one launch template: the same AMI and
// the same max-pods value in their user data.
type launchGroup struct {
	imageID       string
	maxPods       int32
	instanceTypes []*cloudprovider.InstanceType
}

// launch runs one CreateFleet (type instant, one instance) over every compatible instance
// type and zone, and returns the launched instance.
func (c *CloudProvider) launch(ctx context.Context, nc *nodeClassView, nodeClaim *karpv1.NodeClaim, instanceTypes []*cloudprovider.InstanceType) (*instance, error) {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(nodeClaim.Spec.Requirements...)
	capacityType := capacityTypeFor(reqs, instanceTypes)

	zonalSubnets := map[string]string{} // zone -> first subnet of that zone in status order
	for _, s := range nc.subnets {
		if _, ok := zonalSubnets[s.Zone]; !ok && reqs.Get(corev1.LabelTopologyZone).Has(s.Zone) {
			zonalSubnets[s.Zone] = s.ID
		}
	}
	if len(zonalSubnets) == 0 {
		return nil, cloudprovider.NewCreateError(fmt.Errorf("no subnet of EC2NodeClass %s is in an allowed zone", nc.name),
			"SubnetResolutionFailed", "Error getting subnets")
	}

	groups, err := c.launchGroups(nc, instanceTypes)
	if err != nil {
		return nil, cloudprovider.NewCreateError(err, "AMIResolutionFailed", "Error resolving AMIs for the instance types")
	}
	reqs[karpv1.CapacityTypeLabelKey] = scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType)

	var configs []ec2types.FleetLaunchTemplateConfigRequest
	for _, g := range groups {
		overrides := fleetOverrides(g, zonalSubnets, reqs)
		if len(overrides) == 0 {
			continue
		}
		lt, err := c.launchTemplateFor(nc, nodeClaim, g, capacityType)
		if err != nil {
			return nil, cloudprovider.NewCreateError(err, "LaunchTemplateResolutionFailed", "Error rendering the launch template")
		}
		name, err := c.launchTemplates.Ensure(ctx, lt)
		if err != nil {
			reason, msg := reasonMessage(err)
			return nil, cloudprovider.NewCreateError(fmt.Errorf("getting launch template: %w", err), reason, "Error getting launch template configs: "+msg)
		}
		configs = append(configs, ec2types.FleetLaunchTemplateConfigRequest{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateName: aws.String(name),
				Version:            aws.String("$Latest"),
			},
			Overrides: overrides,
		})
	}
	if len(configs) == 0 {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("no capacity offerings are currently available given the constraints"))
	}

	tags := c.instanceTags(nc, nodeClaim)
	in := &ec2.CreateFleetInput{
		Type:                  ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: configs,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityType(capacityType),
			TotalTargetCapacity:       aws.Int32(1),
		},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: ec2Tags(tags)},
			{ResourceType: ec2types.ResourceTypeVolume, Tags: ec2Tags(tags)},
			{ResourceType: ec2types.ResourceTypeFleet, Tags: ec2Tags(tags)},
		},
	}
	if capacityType == karpv1.CapacityTypeSpot {
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	} else {
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	out, err := c.ec2.CreateFleet(ctx, in)
	if err != nil {
		if IsNotFound(err) { // a launch template vanished behind our cache: next try recreates it
			for _, cfg := range configs {
				c.launchTemplates.Invalidate(aws.ToString(cfg.LaunchTemplateSpecification.LaunchTemplateName))
			}
		}
		reason, msg := reasonMessage(err)
		if IsUnauthorized(err) {
			// Not the real provider's canned "no identity-based policy allows it": here the
			// denial may be an explicit deny, and the audit trail has the decoded reason.
			msg = "EC2 answered UnauthorizedOperation: the caller may not launch this fleet (the EC2 audit trail has the decoded reason)"
		}
		return nil, cloudprovider.NewCreateError(fmt.Errorf("creating fleet: %w", err), reason, "Error creating fleet request: "+msg)
	}
	for _, e := range out.Errors {
		if isFleetCapacityError(e) && e.LaunchTemplateAndOverrides != nil && e.LaunchTemplateAndOverrides.Overrides != nil {
			o := e.LaunchTemplateAndOverrides.Overrides
			c.unavailable.MarkUnavailable(string(o.InstanceType), aws.ToString(o.AvailabilityZone), capacityType)
		}
	}
	for _, fi := range out.Instances {
		if len(fi.InstanceIds) == 0 {
			continue
		}
		inst := &instance{
			ID:           fi.InstanceIds[0],
			Type:         string(fi.InstanceType),
			CapacityType: capacityType,
			LaunchTime:   c.now(),
			State:        ec2types.InstanceStateNamePending,
			Tags:         tags,
		}
		if fi.LaunchTemplateAndOverrides != nil && fi.LaunchTemplateAndOverrides.Overrides != nil {
			o := fi.LaunchTemplateAndOverrides.Overrides
			inst.Zone = aws.ToString(o.AvailabilityZone)
			inst.SubnetID = aws.ToString(o.SubnetId)
			inst.ImageID = aws.ToString(o.ImageId)
		}
		if fi.Lifecycle == ec2types.InstanceLifecycleSpot {
			inst.CapacityType = karpv1.CapacityTypeSpot
		}
		if inst.Zone == "" { // an answer without overrides: ask EC2 where it went
			described, err := c.getInstance(ctx, inst.ID)
			if err != nil {
				return nil, fmt.Errorf("describing launched instance: %w", err)
			}
			described.CapacityType = inst.CapacityType
			return described, nil
		}
		return inst, nil
	}
	return nil, combineFleetErrors(out.Errors)
}

// capacityTypeFor picks spot when the requirements allow it and some offering offers it,
// as the real provider does; on-demand otherwise.
func capacityTypeFor(reqs scheduling.Requirements, instanceTypes []*cloudprovider.InstanceType) string {
	if reqs.Get(karpv1.CapacityTypeLabelKey).Has(karpv1.CapacityTypeSpot) {
		spot := scheduling.NewRequirements(reqs.Values()...)
		spot[karpv1.CapacityTypeLabelKey] = scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeSpot)
		for _, it := range instanceTypes {
			for _, o := range it.Offerings.Available() {
				if spot.Compatible(o.Requirements, scheduling.AllowUndefinedWellKnownLabels) == nil {
					return karpv1.CapacityTypeSpot
				}
			}
		}
	}
	return karpv1.CapacityTypeOnDemand
}

// fleetOverrides lists every available offering of the group that the requirements allow,
// cheapest first, one override per instance type and zone.
func fleetOverrides(g launchGroup, zonalSubnets map[string]string, reqs scheduling.Requirements) []ec2types.FleetLaunchTemplateOverridesRequest {
	type candidate struct {
		instanceType, zone, subnet string
		price                      float64
	}
	var cands []candidate
	for _, it := range g.instanceTypes {
		for _, o := range it.Offerings.Available() {
			if reqs.Compatible(o.Requirements, scheduling.AllowUndefinedWellKnownLabels) != nil {
				continue
			}
			subnet, ok := zonalSubnets[o.Zone()]
			if !ok {
				continue
			}
			cands = append(cands, candidate{it.Name, o.Zone(), subnet, o.Price})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].price != cands[j].price {
			return cands[i].price < cands[j].price
		}
		if cands[i].instanceType != cands[j].instanceType {
			return cands[i].instanceType < cands[j].instanceType
		}
		return cands[i].zone < cands[j].zone
	})
	out := make([]ec2types.FleetLaunchTemplateOverridesRequest, 0, len(cands))
	for _, c := range cands {
		out = append(out, ec2types.FleetLaunchTemplateOverridesRequest{
			InstanceType: ec2types.InstanceType(c.instanceType),
			SubnetId:     aws.String(c.subnet),
			ImageId:      aws.String(g.imageID),
			// Redundant with the subnet, but it lets an ICE error name its zone.
			AvailabilityZone: aws.String(c.zone),
		})
	}
	return out
}

// combineFleetErrors turns the Errors of a CreateFleet that launched nothing into the error
// Karpenter understands: InsufficientCapacity if every error was about capacity.
func combineFleetErrors(fleetErrs []ec2types.CreateFleetError) error {
	if len(fleetErrs) == 0 {
		return cloudprovider.NewCreateError(fmt.Errorf("creating fleet: no instance launched and no error returned"), "LaunchFailed", "Instance launch failed")
	}
	unique := sets.New[string]()
	ice := 0
	for _, e := range fleetErrs {
		unique.Insert(fmt.Sprintf("%s: %s", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)))
		if isFleetCapacityError(e) {
			ice++
		}
	}
	err := errors.New(strings.Join(sets.List(unique), "; "))
	if ice == len(fleetErrs) {
		return cloudprovider.NewInsufficientCapacityError(fmt.Errorf("with fleet error(s), %w", err))
	}
	reason, msg := reasonMessage(err)
	return cloudprovider.NewCreateError(fmt.Errorf("creating fleet: %w", err), reason, msg)
}
