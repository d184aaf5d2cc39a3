package cloudprovider

import (
	"context"
	stderrors "errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"

	"github.com/karplab/karplab/cluster/bootstrap"
	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// maxInstanceTypes bounds the overrides of one CreateFleet, as in the real provider.
const maxInstanceTypes = 60

// Options configure the provider.
type Options struct {
	// ClusterName tags every resource kubernetes.io/cluster/<name>=owned; default "karplab".
	ClusterName string
	// ClusterEndpoint and ClusterCA are what nodes are told to join (user data).
	ClusterEndpoint string
	ClusterCA       []byte
	// ClusterDNS is the kubelet's clusterDNS unless the EC2NodeClass sets its own.
	ClusterDNS []string
	// Region labels instance types topology.kubernetes.io/region; default eu-west-2.
	Region string
	// OnDemandPrice returns the on-demand price of an instance type in USD per hour. EC2
	// has no price API (the real provider reads the AWS Pricing API and ships a generated
	// table); without a price an instance type has no on-demand offering.
	OnDemandPrice func(instanceType string) (float64, bool)
	// CatalogTTL is how long EC2's instance-type answers are reused; default CatalogTTL.
	CatalogTTL time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// CloudProvider implements Karpenter's cloudprovider.CloudProvider on EC2.
type CloudProvider struct {
	kube            client.Client
	ec2             EC2API
	opts            Options
	now             func() time.Time
	unavailable     *unavailableOfferings
	instanceTypes   *instanceTypeProvider
	launchTemplates *launchTemplateProvider
	driftInstances  instanceSnapshot
}

var _ cloudprovider.CloudProvider = (*CloudProvider)(nil)

// New returns the provider. kube reads EC2NodeClasses and NodePools (Karpenter's cached
// client); api is the EC2 client.
func New(kube client.Client, api EC2API, opts Options) *CloudProvider {
	if opts.ClusterName == "" {
		opts.ClusterName = "karplab"
	}
	if opts.Region == "" {
		opts.Region = "eu-west-2"
	}
	if opts.CatalogTTL == 0 {
		opts.CatalogTTL = CatalogTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OnDemandPrice == nil {
		opts.OnDemandPrice = func(string) (float64, bool) { return 0, false }
	}
	unavailable := newUnavailableOfferings(opts.Now, UnavailableOfferingsTTL)
	return &CloudProvider{
		kube:        kube,
		ec2:         api,
		opts:        opts,
		now:         opts.Now,
		unavailable: unavailable,
		instanceTypes: &instanceTypeProvider{
			ec2: api, region: opts.Region, prices: opts.OnDemandPrice, unavailable: unavailable,
			ttl: opts.CatalogTTL, now: opts.Now, built: map[string][]*cloudprovider.InstanceType{},
		},
		launchTemplates: newLaunchTemplateProvider(api, opts.Now),
	}
}

// Name is "aws": NodeClaims and metrics name the provider as the real one does.
func (c *CloudProvider) Name() string { return "aws" }

// GetSupportedNodeClasses returns EC2NodeClass, the only NodeClass this provider launches for.
func (c *CloudProvider) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&apisv1.EC2NodeClass{}}
}

// nodeClassView is what one launch needs from an EC2NodeClass, read once.
type nodeClassView struct {
	name            string
	obj             *apisv1.EC2NodeClass
	subnets         []apisv1.Subnet
	securityGroups  []string
	amis            []apisv1.AMI
	instanceProfile string
}

func (c *CloudProvider) nodeClass(ctx context.Context, name string) (*apisv1.EC2NodeClass, error) {
	nc := &apisv1.EC2NodeClass{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: name}, nc); err != nil {
		return nil, err
	}
	// A NodeClass being deleted launches nothing, as if it were gone.
	if !nc.DeletionTimestamp.IsZero() {
		return nil, errors.NewNotFound(apisv1.GroupVersion.WithResource("ec2nodeclasses").GroupResource(), name)
	}
	return nc, nil
}

func view(nc *apisv1.EC2NodeClass) *nodeClassView {
	v := &nodeClassView{name: nc.Name, obj: nc, subnets: nc.Status.Subnets, amis: nc.Status.AMIs, instanceProfile: nc.Status.InstanceProfile}
	for _, sg := range nc.Status.SecurityGroups {
		v.securityGroups = append(v.securityGroups, sg.ID)
	}
	if nc.Spec.InstanceProfile != nil && v.instanceProfile == "" {
		v.instanceProfile = *nc.Spec.InstanceProfile
	}
	return v
}

// typeConfigFor is the part of an EC2NodeClass that shapes instance types.
func typeConfigFor(nc *apisv1.EC2NodeClass) typeConfig {
	cfg := typeConfig{}
	for _, s := range nc.Status.Subnets {
		cfg.Zones = append(cfg.Zones, subnetZone{Name: s.Zone, ID: s.ZoneID})
	}
	if k := nc.Spec.Kubelet; k != nil {
		cfg.Node.MaxPods = k.MaxPods
		cfg.Node.PodsPerCore = k.PodsPerCore
		cfg.Node.KubeReserved = k.KubeReserved
		cfg.Node.SystemReserved = k.SystemReserved
		cfg.Node.EvictionHard = k.EvictionHard
	}
	cfg.Node.RootVolumeSize = rootVolumeSize(nc.Spec.BlockDeviceMappings)
	return cfg
}

// rootVolumeSize is the volume flagged rootVolume, else AL2023's root device /dev/xvda.
func rootVolumeSize(bdms []*apisv1.BlockDeviceMapping) *resource.Quantity {
	for _, b := range bdms {
		if b != nil && b.RootVolume && b.EBS != nil && b.EBS.VolumeSize != nil {
			return b.EBS.VolumeSize
		}
	}
	for _, b := range bdms {
		if b != nil && b.DeviceName != nil && *b.DeviceName == "/dev/xvda" && b.EBS != nil && b.EBS.VolumeSize != nil {
			return b.EBS.VolumeSize
		}
	}
	return nil
}

// GetInstanceTypes returns every instance type EC2 describes, with offerings in the zones
// of the NodePool's EC2NodeClass subnets. An EC2NodeClass that does not exist is an error
// (the NodePool is then skipped, with the reason logged).
func (c *CloudProvider) GetInstanceTypes(ctx context.Context, nodePool *karpv1.NodePool) ([]*cloudprovider.InstanceType, error) {
	if nodePool == nil || nodePool.Spec.Template.Spec.NodeClassRef == nil {
		return c.instanceTypes.List(ctx, typeConfig{})
	}
	nc, err := c.nodeClass(ctx, nodePool.Spec.Template.Spec.NodeClassRef.Name)
	if err != nil {
		return nil, fmt.Errorf("resolving EC2NodeClass of NodePool %s: %w", nodePool.Name, err)
	}
	return c.instanceTypes.List(ctx, typeConfigFor(nc))
}

// Create launches one instance for the NodeClaim with CreateFleet and returns the NodeClaim
// hydrated with its provider ID, labels and resources. A missing EC2NodeClass or one
// whose offerings are all out of capacity is an InsufficientCapacityError (Karpenter deletes
// the NodeClaim and tries again with what is left); a NodeClass not Ready is a
// NodeClassNotReadyError; an EC2 refusal is a CreateError whose reason Karpenter puts on
// the NodeClaim's Launched condition.
func (c *CloudProvider) Create(ctx context.Context, nodeClaim *karpv1.NodeClaim) (*karpv1.NodeClaim, error) {
	if nodeClaim.Spec.NodeClassRef == nil {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("nodeclaim %s has no nodeClassRef", nodeClaim.Name))
	}
	obj, err := c.nodeClass(ctx, nodeClaim.Spec.NodeClassRef.Name)
	if err != nil {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("resolving EC2NodeClass: %w", err))
	}
	ready := obj.StatusConditions().Get(status.ConditionReady)
	switch {
	case ready == nil || ready.IsUnknown():
		msg := ""
		if ready != nil {
			msg = ready.Message
		}
		return nil, cloudprovider.NewCreateError(fmt.Errorf("EC2NodeClass %s is Ready=Unknown: %s", obj.Name, msg),
			"NodeClassReadinessUnknown", "NodeClass is in Ready=Unknown")
	case ready.IsFalse():
		return nil, cloudprovider.NewNodeClassNotReadyError(stderrors.New(ready.Message))
	}
	nc := view(obj)
	its, err := c.instanceTypes.List(ctx, typeConfigFor(obj))
	if err != nil {
		return nil, fmt.Errorf("getting instance types: %w", err)
	}
	its = compatibleInstanceTypes(nodeClaim, its)
	if len(its) == 0 {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("all requested instance types were unavailable during launch"))
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(nodeClaim.Spec.Requirements...)
	if !reqs.HasMinValues() {
		its = filterUnwantedSpot(reqs, its)
	}
	its, err = cloudprovider.InstanceTypes(its).Truncate(ctx, reqs, maxInstanceTypes)
	if err != nil {
		return nil, cloudprovider.NewCreateError(fmt.Errorf("truncating instance types: %w", err),
			"InstanceTypeResolutionFailed", "Error truncating instance types based on the passed-in requirements")
	}
	inst, err := c.launch(ctx, nc, nodeClaim, its)
	if err != nil {
		return nil, err
	}
	var it *cloudprovider.InstanceType
	for _, candidate := range its {
		if candidate.Name == inst.Type {
			it = candidate
		}
	}
	out := c.instanceToNodeClaim(inst, it)
	out.Annotations[apisv1.AnnotationEC2NodeClassHash] = obj.Hash()
	out.Annotations[apisv1.AnnotationEC2NodeClassHashVersion] = apisv1.EC2NodeClassHashVersion
	return out, nil
}

// compatibleInstanceTypes keeps the types the NodeClaim allows, with an available offering
// it allows, that fit its requests.
func compatibleInstanceTypes(nodeClaim *karpv1.NodeClaim, its []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(nodeClaim.Spec.Requirements...)
	var out []*cloudprovider.InstanceType
	for _, it := range its {
		if reqs.Compatible(it.Requirements, scheduling.AllowUndefinedWellKnownLabels) != nil {
			continue
		}
		if len(it.Offerings.Compatible(reqs).Available()) == 0 {
			continue
		}
		if !resources.Fits(nodeClaim.Spec.Resources.Requests, it.Allocatable()) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// filterUnwantedSpot drops, when both spot and on-demand could launch, the types whose
// cheapest offering costs more than the cheapest on-demand one (the real provider's rule,
// so spot never buys a bigger machine than on-demand would).
func filterUnwantedSpot(reqs scheduling.Requirements, its []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
	ct := reqs.Get(karpv1.CapacityTypeLabelKey)
	if !ct.Has(karpv1.CapacityTypeSpot) || !ct.Has(karpv1.CapacityTypeOnDemand) {
		return its
	}
	cheapestOD, hasSpot := -1.0, false
	for _, it := range its {
		for _, o := range it.Offerings.Available().Compatible(reqs) {
			switch o.CapacityType() {
			case karpv1.CapacityTypeOnDemand:
				if cheapestOD < 0 || o.Price < cheapestOD {
					cheapestOD = o.Price
				}
			case karpv1.CapacityTypeSpot:
				hasSpot = true
			}
		}
	}
	if cheapestOD < 0 || !hasSpot {
		return its
	}
	var out []*cloudprovider.InstanceType
	for _, it := range its {
		avail := it.Offerings.Available().Compatible(reqs)
		if len(avail) > 0 && avail.Cheapest().Price <= cheapestOD {
			out = append(out, it)
		}
	}
	return out
}

// launchGroups splits instance types by the AMI that runs them (first AMI in status order
// whose requirements, e.g. kubernetes.io/arch, they satisfy) and by max-pods, which the
// user data carries: one launch template per group.
func (c *CloudProvider) launchGroups(nc *nodeClassView, its []*cloudprovider.InstanceType) ([]launchGroup, error) {
	if len(nc.amis) == 0 {
		return nil, fmt.Errorf("EC2NodeClass %s has no resolved AMIs", nc.name)
	}
	type key struct {
		image   string
		maxPods int32
	}
	index := map[key]int{}
	var groups []launchGroup
	for _, it := range its {
		image := ""
		for _, ami := range nc.amis {
			if ami.Deprecated && image != "" {
				continue
			}
			if scheduling.NewNodeSelectorRequirements(ami.Requirements...).Compatible(it.Requirements, scheduling.AllowUndefinedWellKnownLabels) == nil {
				image = ami.ID
				break
			}
		}
		if image == "" {
			continue
		}
		k := key{image, int32(it.Capacity.Pods().Value())}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, launchGroup{imageID: k.image, maxPods: k.maxPods})
		}
		groups[i].instanceTypes = append(groups[i].instanceTypes, it)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no AMI of EC2NodeClass %s is compatible with the requested instance types", nc.name)
	}
	return groups, nil
}

// baseTags are on every resource a launch creates and on its launch template.
func (c *CloudProvider) baseTags(nc *nodeClassView, nodeClaim *karpv1.NodeClaim) map[string]string {
	tags := map[string]string{}
	for k, v := range nc.obj.Spec.Tags {
		tags[k] = v
	}
	tags[ClusterTagKey(c.opts.ClusterName)] = "owned"
	tags[apisv1.NodePoolTagKey] = nodeClaim.Labels[karpv1.NodePoolLabelKey]
	tags[apisv1.EKSClusterNameTagKey] = c.opts.ClusterName
	tags[apisv1.NodeClassTagKey] = nc.name
	return tags
}

// instanceTags adds the NodeClaim's name for the instance, volumes and fleet. (The Name tag,
// the Node's name, follows once the Node registers: see the tagging controller.)
func (c *CloudProvider) instanceTags(nc *nodeClassView, nodeClaim *karpv1.NodeClaim) map[string]string {
	tags := c.baseTags(nc, nodeClaim)
	tags[apisv1.NodeClaimTagKey] = nodeClaim.Name
	return tags
}

func (c *CloudProvider) launchTemplateFor(nc *nodeClassView, nodeClaim *karpv1.NodeClaim, g launchGroup, capacityType string) (*launchTemplate, error) {
	labels := map[string]string{}
	for k, v := range nodeClaim.Labels {
		// The kubelet may not set labels of these domains on itself (NodeRestriction).
		if d := karpv1.GetLabelDomain(k); strings.HasSuffix(d, corev1.LabelNamespaceNodeRestriction) || strings.HasSuffix(d, "kops.k8s.io") {
			continue
		}
		labels[k] = v
	}
	labels[karpv1.CapacityTypeLabelKey] = capacityType
	taints := append(append([]corev1.Taint{}, nodeClaim.Spec.Taints...), nodeClaim.Spec.StartupTaints...)
	taints = append(taints, karpv1.UnregisteredNoExecuteTaint)
	clusterDNS := c.opts.ClusterDNS
	if k := nc.obj.Spec.Kubelet; k != nil && len(k.ClusterDNS) > 0 {
		clusterDNS = k.ClusterDNS
	}
	maxPods := g.maxPods
	custom := ""
	if nc.obj.Spec.UserData != nil {
		custom = *nc.obj.Spec.UserData
	}
	userData, err := bootstrap.Render(bootstrap.Node{
		ClusterName:          c.opts.ClusterName,
		APIServerEndpoint:    c.opts.ClusterEndpoint,
		CertificateAuthority: c.opts.ClusterCA,
		ClusterDNS:           clusterDNS,
		MaxPods:              &maxPods,
		Labels:               labels,
		Taints:               taints,
	}, custom)
	if err != nil {
		return nil, fmt.Errorf("rendering user data: %w", err)
	}
	return &launchTemplate{
		ClusterName:         c.opts.ClusterName,
		ImageID:             g.imageID,
		UserData:            userData,
		SecurityGroupIDs:    nc.securityGroups,
		InstanceProfile:     nc.instanceProfile,
		BlockDeviceMappings: nc.obj.Spec.BlockDeviceMappings,
		MetadataOptions:     nc.obj.Spec.MetadataOptions,
		AssociatePublicIP:   nc.obj.Spec.AssociatePublicIPAddress,
		DetailedMonitoring:  nc.obj.Spec.DetailedMonitoring,
		CapacityType:        capacityType,
		Tags:                c.baseTags(nc, nodeClaim),
	}, nil
}

// instanceToNodeClaim is the NodeClaim Karpenter learns from the instance: provider ID,
// the instance type's single-valued labels, zone and capacity type, and its resources.
func (c *CloudProvider) instanceToNodeClaim(i *instance, it *cloudprovider.InstanceType) *karpv1.NodeClaim {
	nc := &karpv1.NodeClaim{}
	labels := map[string]string{}
	if it != nil {
		for key, req := range it.Requirements {
			if req.Len() == 1 && req.Operator() == corev1.NodeSelectorOpIn {
				labels[key] = req.Values()[0]
			}
		}
		nc.Status.Capacity = nonZero(it.Capacity)
		nc.Status.Allocatable = nonZero(it.Allocatable())
	}
	labels[corev1.LabelInstanceTypeStable] = i.Type
	labels[corev1.LabelTopologyZone] = i.Zone
	labels[karpv1.CapacityTypeLabelKey] = i.CapacityType
	if v, ok := i.Tags[apisv1.NodePoolTagKey]; ok {
		labels[karpv1.NodePoolLabelKey] = v
	}
	nc.Labels = labels
	nc.Annotations = map[string]string{}
	nc.CreationTimestamp = metav1.Time{Time: i.LaunchTime}
	if i.State == "shutting-down" || i.State == "terminated" {
		nc.DeletionTimestamp = &metav1.Time{Time: c.now()}
	}
	nc.Status.ProviderID = i.ProviderID()
	nc.Status.ImageID = i.ImageID
	return nc
}

func nonZero(rl corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range rl {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// Get returns the NodeClaim view of the instance behind providerID, or a
// NodeClaimNotFoundError once it is terminated or unknown.
func (c *CloudProvider) Get(ctx context.Context, providerID string) (*karpv1.NodeClaim, error) {
	id, err := ParseInstanceID(providerID)
	if err != nil {
		return nil, fmt.Errorf("getting instance ID: %w", err)
	}
	inst, err := c.getInstance(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.instanceToNodeClaim(inst, c.resolveInstanceType(ctx, inst)), nil
}

// List returns every instance of this cluster launched by Karpenter (tagged
// kubernetes.io/cluster/<name>=owned and karpenter.sh/nodepool) that is not terminated.
// The garbage collection controllers compare it with the cluster's NodeClaims.
func (c *CloudProvider) List(ctx context.Context) ([]*karpv1.NodeClaim, error) {
	insts, err := c.listInstances(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*karpv1.NodeClaim, 0, len(insts))
	for _, inst := range insts {
		out = append(out, c.instanceToNodeClaim(inst, c.resolveInstanceType(ctx, inst)))
	}
	return out, nil
}

// resolveInstanceType finds the instance's type in its NodePool's catalog; nil (no
// resources on the NodeClaim) when the NodePool or its NodeClass is gone.
func (c *CloudProvider) resolveInstanceType(ctx context.Context, inst *instance) *cloudprovider.InstanceType {
	np := &karpv1.NodePool{}
	name, ok := inst.Tags[apisv1.NodePoolTagKey]
	if !ok || c.kube.Get(ctx, types.NamespacedName{Name: name}, np) != nil {
		return nil
	}
	its, err := c.GetInstanceTypes(ctx, np)
	if err != nil {
		return nil
	}
	for _, it := range its {
		if it.Name == inst.Type {
			return it
		}
	}
	return nil
}

// Delete terminates the NodeClaim's instance. It returns nil while termination is under way
// (Karpenter calls again) and NodeClaimNotFoundError once the instance is terminated or gone.
func (c *CloudProvider) Delete(ctx context.Context, nodeClaim *karpv1.NodeClaim) error {
	id, err := ParseInstanceID(nodeClaim.Status.ProviderID)
	if err != nil {
		return fmt.Errorf("getting instance ID: %w", err)
	}
	inst, err := c.getInstance(ctx, id)
	if err != nil {
		return err
	}
	if inst.State == "shutting-down" {
		return nil
	}
	if _, err := c.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		if IsNotFound(err) {
			return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("terminating instance %s: %w", id, err))
		}
		return fmt.Errorf("terminating instance %s: %w", id, err)
	}
	return nil
}

// IsDrifted reports why the NodeClaim no longer matches its EC2NodeClass: the spec hash
// changed (NodeClassDrift), its AMI is no longer resolved (AMIDrift), or its instance's
// subnet or security groups are no longer selected (SubnetDrift, SecurityGroupDrift).
func (c *CloudProvider) IsDrifted(ctx context.Context, nodeClaim *karpv1.NodeClaim) (cloudprovider.DriftReason, error) {
	if nodeClaim.Spec.NodeClassRef == nil {
		return "", nil
	}
	obj, err := c.nodeClass(ctx, nodeClaim.Spec.NodeClassRef.Name)
	if err != nil {
		return "", client.IgnoreNotFound(fmt.Errorf("resolving EC2NodeClass: %w", err))
	}
	if reason := staticDrift(obj, nodeClaim); reason != "" {
		return reason, nil
	}
	if nodeClaim.Status.ProviderID == "" {
		return "", nil
	}
	id, err := ParseInstanceID(nodeClaim.Status.ProviderID)
	if err != nil {
		return "", nil
	}
	inst, err := c.driftInstances.get(ctx, c, id)
	if err != nil {
		return "", cloudprovider.IgnoreNodeClaimNotFoundError(err)
	}
	return instanceDrift(obj, inst), nil
}

// driftCacheTTL is how stale the instance descriptions drift is judged on may be. Karpenter
// asks IsDrifted of every NodeClaim whenever its pods or Node change; one DescribeInstances
// each would be hundreds of calls a minute during a scale-up (the real provider batches them).
const driftCacheTTL = 30 * time.Second

// instanceSnapshot is one listing of the cluster's instances, shared by drift checks.
type instanceSnapshot struct {
	mu      sync.Mutex
	fetched time.Time
	byID    map[string]*instance
}

func (s *instanceSnapshot) get(ctx context.Context, c *CloudProvider, id string) (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil || c.now().Sub(s.fetched) > driftCacheTTL {
		insts, err := c.listInstances(ctx)
		if err != nil {
			return nil, err
		}
		s.byID = map[string]*instance{}
		for _, i := range insts {
			s.byID[i.ID] = i
		}
		s.fetched = c.now()
	}
	if inst, ok := s.byID[id]; ok {
		return inst, nil
	}
	// Launched after the listing (or gone): ask for it alone.
	inst, err := c.getInstance(ctx, id)
	if err != nil {
		return nil, err
	}
	s.byID[id] = inst
	return inst, nil
}

func staticDrift(obj *apisv1.EC2NodeClass, nodeClaim *karpv1.NodeClaim) cloudprovider.DriftReason {
	// Compare hashes only when both were made by the same hash function.
	if obj.Annotations[apisv1.AnnotationEC2NodeClassHashVersion] == nodeClaim.Annotations[apisv1.AnnotationEC2NodeClassHashVersion] {
		if h, ok := nodeClaim.Annotations[apisv1.AnnotationEC2NodeClassHash]; ok && h != obj.Hash() {
			return "NodeClassDrift"
		}
	}
	if len(obj.Status.AMIs) > 0 && nodeClaim.Status.ImageID != "" {
		found := false
		for _, ami := range obj.Status.AMIs {
			found = found || ami.ID == nodeClaim.Status.ImageID
		}
		if !found {
			return "AMIDrift"
		}
	}
	return ""
}

func instanceDrift(obj *apisv1.EC2NodeClass, inst *instance) cloudprovider.DriftReason {
	if len(obj.Status.Subnets) > 0 && inst.SubnetID != "" {
		found := false
		for _, s := range obj.Status.Subnets {
			found = found || s.ID == inst.SubnetID
		}
		if !found {
			return "SubnetDrift"
		}
	}
	if len(obj.Status.SecurityGroups) > 0 && len(inst.SecurityGroups) > 0 {
		want := map[string]bool{}
		for _, sg := range obj.Status.SecurityGroups {
			want[sg.ID] = true
		}
		if len(want) != len(inst.SecurityGroups) {
			return "SecurityGroupDrift"
		}
		for _, sg := range inst.SecurityGroups {
			if !want[sg] {
				return "SecurityGroupDrift"
			}
		}
	}
	return ""
}

// Reboot is not offered: a reboot is observed through a new Node boot ID, which only the
// simulated kubelet could report, and it does not model reboots.
func (c *CloudProvider) Reboot(context.Context, *karpv1.NodeClaim, string) error {
	return cloudprovider.NewNodeRebootNotImplementedError()
}

// RepairPolicies replaces nodes whose kubelet reports NotReady or stops reporting for 30
// minutes, as the real provider does for the kubelet's Ready condition. (The real one also
// watches the EKS node monitoring agent's conditions, which the lab's kubelet does not set.)
func (c *CloudProvider) RepairPolicies() []cloudprovider.RepairPolicy {
	return []cloudprovider.RepairPolicy{
		{
			ConditionType:      corev1.NodeReady,
			ConditionStatus:    corev1.ConditionFalse,
			TolerationDuration: 30 * time.Minute,
			Action:             cloudprovider.ReplaceNode,
		},
		{
			ConditionType:      corev1.NodeReady,
			ConditionStatus:    corev1.ConditionUnknown,
			ReasonRegex:        ".*",
			TolerationDuration: 30 * time.Minute,
			Action:             cloudprovider.ReplaceNode,
		},
	}
}
