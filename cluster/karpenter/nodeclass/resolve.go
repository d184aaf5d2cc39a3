package nodeclass

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	v1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// EC2API is the part of *ec2.Client the resolver calls.
type EC2API interface {
	DescribeSubnets(context.Context, *ec2.DescribeSubnetsInput, ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeSecurityGroups(context.Context, *ec2.DescribeSecurityGroupsInput, ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
	DescribeImages(context.Context, *ec2.DescribeImagesInput, ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
}

var _ EC2API = (*ec2.Client)(nil)

// Condition reasons and messages, spelled as karpenter-provider-aws spells them where it
// has them.
const (
	ReasonSubnetsNotFound        = "SubnetsNotFound"
	ReasonSecurityGroupsNotFound = "SecurityGroupsNotFound"
	ReasonAMINotFound            = "AMINotFound"
	// ReasonResolutionFailed is the reason of a condition whose EC2 call failed.
	ReasonResolutionFailed = "ResolutionFailed"

	MessageSubnetsNotFound        = "SubnetSelector did not match any Subnets"
	MessageSecurityGroupsNotFound = "SecurityGroupSelector did not match any SecurityGroups"
	MessageAMINotFound            = "AMISelector did not match any AMIs"
)

// ResolverOptions configure a Resolver.
type ResolverOptions struct {
	// ClusterName and Region name the instance profile of role-based node classes.
	ClusterName string
	Region      string
	// KubernetesVersion ("1.34") narrows alias AMIs to that Kubernetes minor, as EKS's
	// SSM parameters do. Empty selects the newest image of any version.
	KubernetesVersion string
	// Clock stamps condition transitions and decides AMI deprecation; default real.
	Clock clock.Clock
}

// Resolver resolves EC2NodeClass selectors against EC2. It holds no cache: every call
// asks EC2, so the result is as fresh as the emulator's state.
type Resolver struct {
	ec2  EC2API
	opts ResolverOptions
}

// NewResolver returns a Resolver calling api.
func NewResolver(api EC2API, opts ResolverOptions) *Resolver {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Resolver{ec2: api, opts: opts}
}

// Resolve sets nc.Status (subnets, security groups, AMIs, instance profile) and its
// conditions from EC2. A selector that matches nothing sets its condition False with the
// provider's message. A failed EC2 call leaves that part of the status as it was (its
// condition False when EC2 refused the caller, e.g. UnauthorizedOperation, so the reason
// shows; otherwise unchanged, or Unknown if never resolved) and is returned, joined with
// any other failure, so that the caller retries.
func (r *Resolver) Resolve(ctx context.Context, nc *v1.EC2NodeClass) error {
	conds := nc.StatusConditions(status.WithClock(r.opts.Clock))
	var errs []error

	subnets, err := r.Subnets(ctx, nc)
	switch {
	case err != nil:
		errs = append(errs, r.failed(nc, v1.ConditionTypeSubnetsReady, err))
	case len(subnets) == 0:
		nc.Status.Subnets = nil
		conds.SetFalse(v1.ConditionTypeSubnetsReady, ReasonSubnetsNotFound, MessageSubnetsNotFound)
	default:
		nc.Status.Subnets = subnets
		conds.SetTrue(v1.ConditionTypeSubnetsReady)
	}

	groups, err := r.SecurityGroups(ctx, nc)
	switch {
	case err != nil:
		errs = append(errs, r.failed(nc, v1.ConditionTypeSecurityGroupsReady, err))
	case len(groups) == 0:
		nc.Status.SecurityGroups = nil
		conds.SetFalse(v1.ConditionTypeSecurityGroupsReady, ReasonSecurityGroupsNotFound, MessageSecurityGroupsNotFound)
	default:
		nc.Status.SecurityGroups = groups
		conds.SetTrue(v1.ConditionTypeSecurityGroupsReady)
	}

	amis, err := r.AMIs(ctx, nc)
	var unsupported *UnsupportedAliasError
	switch {
	case errors.As(err, &unsupported):
		// Not a failure to retry: the spec asks for something the lab does not have.
		nc.Status.AMIs = nil
		conds.SetFalse(v1.ConditionTypeAMIsReady, ReasonAMINotFound, unsupported.Error())
	case err != nil:
		errs = append(errs, r.failed(nc, v1.ConditionTypeAMIsReady, err))
	case len(amis) == 0:
		nc.Status.AMIs = nil
		conds.SetFalse(v1.ConditionTypeAMIsReady, ReasonAMINotFound, MessageAMINotFound)
	default:
		nc.Status.AMIs = amis
		conds.SetTrue(v1.ConditionTypeAMIsReady)
	}

	nc.Status.InstanceProfile = r.InstanceProfile(nc)
	conds.SetTrue(v1.ConditionTypeInstanceProfileReady)
	return errors.Join(errs...)
}

// failed records a failed EC2 call on condition t and returns the error to retry.
func (r *Resolver) failed(nc *v1.EC2NodeClass, t string, err error) error {
	conds := nc.StatusConditions(status.WithClock(r.opts.Clock))
	var apiErr smithy.APIError
	switch {
	case errors.As(err, &apiErr) && isAuthError(apiErr.ErrorCode()):
		conds.SetFalse(t, ReasonResolutionFailed, err.Error())
	case conds.Get(t).IsUnknown():
		conds.SetUnknownWithReason(t, ReasonResolutionFailed, err.Error())
	}
	return err
}

func isAuthError(code string) bool {
	switch code {
	case "UnauthorizedOperation", "AccessDenied", "AccessDeniedException", "AuthFailure", "Blocked", "OptInRequired":
		return true
	}
	return false
}

// InstanceProfile is spec.instanceProfile, or for a role the name
// EC2NodeClass.InstanceProfileName gives. There is no IAM in the lab (the EC2 emulator
// serves EC2 alone), so nothing is created or checked.
func (r *Resolver) InstanceProfile(nc *v1.EC2NodeClass) string {
	if nc.Spec.InstanceProfile != nil {
		return *nc.Spec.InstanceProfile
	}
	return nc.InstanceProfileName(r.opts.ClusterName, r.opts.Region)
}

// TagFilters turns selector tags into EC2 filters: tag:KEY=VALUE, or tag-key=KEY for the
// value "*". Keys are sorted so requests are reproducible.
func TagFilters(tags map[string]string) []ec2types.Filter {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var fs []ec2types.Filter
	for _, k := range keys {
		if v := tags[k]; v == "*" {
			fs = append(fs, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
		} else {
			fs = append(fs, ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
		}
	}
	return fs
}

// SubnetFilters are the DescribeSubnets filters of one selector term.
func SubnetFilters(term v1.SubnetSelectorTerm) []ec2types.Filter {
	fs := TagFilters(term.Tags)
	if term.ID != "" {
		fs = append(fs, ec2types.Filter{Name: aws.String("subnet-id"), Values: []string{term.ID}})
	}
	return fs
}

// SecurityGroupFilters are the DescribeSecurityGroups filters of one selector term.
func SecurityGroupFilters(term v1.SecurityGroupSelectorTerm) []ec2types.Filter {
	fs := TagFilters(term.Tags)
	if term.ID != "" {
		fs = append(fs, ec2types.Filter{Name: aws.String("group-id"), Values: []string{term.ID}})
	}
	if term.Name != "" {
		fs = append(fs, ec2types.Filter{Name: aws.String("group-name"), Values: []string{term.Name}})
	}
	return fs
}

// Subnets returns the subnets any term selects, ordered by zone, then most free
// addresses first, then ID: within a zone, earlier is the better choice.
func (r *Resolver) Subnets(ctx context.Context, nc *v1.EC2NodeClass) ([]v1.Subnet, error) {
	type found struct {
		v1.Subnet
		free int32
	}
	byID := map[string]found{}
	for _, term := range nc.Spec.SubnetSelectorTerms {
		p := ec2.NewDescribeSubnetsPaginator(r.ec2, &ec2.DescribeSubnetsInput{Filters: SubnetFilters(term)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing subnets: %w", err)
			}
			for _, s := range out.Subnets {
				id := aws.ToString(s.SubnetId)
				byID[id] = found{
					Subnet: v1.Subnet{ID: id, Zone: aws.ToString(s.AvailabilityZone), ZoneID: aws.ToString(s.AvailabilityZoneId)},
					free:   aws.ToInt32(s.AvailableIpAddressCount),
				}
			}
		}
	}
	all := make([]found, 0, len(byID))
	for _, f := range byID {
		all = append(all, f)
	}
	slices.SortFunc(all, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(b.free, a.free), cmp.Compare(a.ID, b.ID))
	})
	subnets := make([]v1.Subnet, len(all))
	for i, f := range all {
		subnets[i] = f.Subnet
	}
	return subnets, nil
}

// SecurityGroups returns the security groups any term selects, ordered by ID.
func (r *Resolver) SecurityGroups(ctx context.Context, nc *v1.EC2NodeClass) ([]v1.SecurityGroup, error) {
	byID := map[string]v1.SecurityGroup{}
	for _, term := range nc.Spec.SecurityGroupSelectorTerms {
		p := ec2.NewDescribeSecurityGroupsPaginator(r.ec2, &ec2.DescribeSecurityGroupsInput{Filters: SecurityGroupFilters(term)})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing security groups: %w", err)
			}
			for _, g := range out.SecurityGroups {
				id := aws.ToString(g.GroupId)
				byID[id] = v1.SecurityGroup{ID: id, Name: aws.ToString(g.GroupName)}
			}
		}
	}
	groups := make([]v1.SecurityGroup, 0, len(byID))
	for _, g := range byID {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b v1.SecurityGroup) int { return cmp.Compare(a.ID, b.ID) })
	return groups, nil
}

// UnsupportedAliasError is returned for an alias whose family the lab cannot resolve
// (Windows: there are no Windows images).
type UnsupportedAliasError struct{ Alias string }

func (e *UnsupportedAliasError) Error() string {
	return fmt.Sprintf("AMI alias %q is not supported in the lab: it serves the al2023, al2 and bottlerocket families", e.Alias)
}

// ImageQuery is one DescribeImages request of an AMI selector.
type ImageQuery struct {
	Owners  []string
	Filters []ec2types.Filter
}

// aliasNamePatterns gives, per EC2 architecture, the name filter of an EKS-optimized image
// family; %[1]s is the Kubernetes version, %[2]s the release. The lab has no SSM, so the
// image names EKS publishes stand in for its parameters.
var aliasNamePatterns = map[string]map[string]string{
	v1.AMIFamilyAL2023: {
		"x86_64": "amazon-eks-node-al2023-x86_64-standard-%[1]s-%[2]s",
		"arm64":  "amazon-eks-node-al2023-arm64-standard-%[1]s-%[2]s",
	},
	v1.AMIFamilyAL2: {
		"x86_64": "amazon-eks-node-%[1]s-%[2]s",
		"arm64":  "amazon-eks-arm64-node-%[1]s-%[2]s",
	},
	v1.AMIFamilyBottlerocket: {
		"x86_64": "bottlerocket-aws-k8s-%[1]s-x86_64-%[2]s-*",
		"arm64":  "bottlerocket-aws-k8s-%[1]s-aarch64-%[2]s-*",
	},
}

// AliasImageQuery is the DescribeImages request that finds the images of an alias:
// owner amazon, names of both architectures. kubernetesVersion "" matches any 1.x.
// For "latest" the newest match per architecture wins (see AMIs).
func AliasImageQuery(alias v1.Alias, kubernetesVersion string) (ImageQuery, error) {
	patterns, ok := aliasNamePatterns[alias.Family]
	if !ok {
		return ImageQuery{}, &UnsupportedAliasError{Alias: alias.String()}
	}
	k8s := kubernetesVersion
	if k8s == "" {
		k8s = "1.*" // not "*": AL2's "amazon-eks-node-*" would also match AL2023 names
	}
	release := alias.Version
	if release == v1.AliasVersionLatest {
		release = "v*"
	}
	var names []string
	for _, arch := range []string{"x86_64", "arm64"} {
		names = append(names, fmt.Sprintf(patterns[arch], k8s, release))
	}
	return ImageQuery{
		Owners:  []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: names}},
	}, nil
}

// TermImageQuery is the DescribeImages request of a non-alias AMI selector term. A name
// without an owner is looked up among "self" and "amazon" images only, so that a
// public look-alike is never picked, as the real provider does.
func TermImageQuery(term v1.AMISelectorTerm) ImageQuery {
	var q ImageQuery
	if term.ID != "" {
		q.Filters = append(q.Filters, ec2types.Filter{Name: aws.String("image-id"), Values: []string{term.ID}})
		return q
	}
	if term.Owner != "" {
		q.Owners = []string{term.Owner}
	}
	if term.Name != "" {
		q.Filters = append(q.Filters, ec2types.Filter{Name: aws.String("name"), Values: []string{term.Name}})
		if len(q.Owners) == 0 {
			q.Owners = []string{"self", "amazon"}
		}
	}
	q.Filters = append(q.Filters, TagFilters(term.Tags)...)
	return q
}

// ImageQueries are the DescribeImages requests of nc's AMI selector terms.
func ImageQueries(nc *v1.EC2NodeClass, kubernetesVersion string) ([]ImageQuery, error) {
	var qs []ImageQuery
	for _, term := range nc.Spec.AMISelectorTerms {
		if term.Alias == "" {
			qs = append(qs, TermImageQuery(term))
			continue
		}
		alias, err := v1.ParseAlias(term.Alias)
		if err != nil {
			return nil, err
		}
		q, err := AliasImageQuery(alias, kubernetesVersion)
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// AMIs returns, for each architecture, the newest image the terms select (a deprecated
// image only when no other exists), with its kubernetes.io/arch requirement. The result
// is ordered by architecture (amd64 first).
func (r *Resolver) AMIs(ctx context.Context, nc *v1.EC2NodeClass) ([]v1.AMI, error) {
	queries, err := ImageQueries(nc, r.opts.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	var images []ec2types.Image
	for _, q := range queries {
		p := ec2.NewDescribeImagesPaginator(r.ec2, &ec2.DescribeImagesInput{
			Owners: q.Owners, Filters: q.Filters, IncludeDeprecated: aws.Bool(true),
		})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing images: %w", err)
			}
			images = append(images, out.Images...)
		}
	}
	return NewestPerArch(images, r.opts.Clock.Now()), nil
}

// NewestPerArch picks, per kubernetes.io/arch, the best image: not deprecated at now,
// then newest CreationDate, then greatest name (1.34 over 1.33 for one release), then
// smallest ID. Images of other architectures (i386, x86_64_mac) are left out.
func NewestPerArch(images []ec2types.Image, now time.Time) []v1.AMI {
	type cand struct {
		ami     v1.AMI
		arch    string
		created time.Time
	}
	better := func(a, b cand) bool {
		if a.ami.Deprecated != b.ami.Deprecated {
			return !a.ami.Deprecated
		}
		if !a.created.Equal(b.created) {
			return a.created.After(b.created)
		}
		if a.ami.Name != b.ami.Name {
			return a.ami.Name > b.ami.Name
		}
		return a.ami.ID < b.ami.ID
	}
	best := map[string]cand{}
	for _, im := range images {
		arch, ok := v1.AWSToKubeArchitectures[string(im.Architecture)]
		if !ok {
			continue
		}
		created, _ := time.Parse(time.RFC3339, aws.ToString(im.CreationDate))
		deprecated := false
		if dt := aws.ToString(im.DeprecationTime); dt != "" {
			if t, err := time.Parse(time.RFC3339, dt); err == nil && !t.After(now) {
				deprecated = true
			}
		}
		c := cand{
			ami: v1.AMI{
				ID: aws.ToString(im.ImageId), Name: aws.ToString(im.Name), Deprecated: deprecated,
				Requirements: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch},
				}},
			},
			arch: arch, created: created,
		}
		if cur, ok := best[arch]; !ok || better(c, cur) {
			best[arch] = c
		}
	}
	archs := make([]string, 0, len(best))
	for a := range best {
		archs = append(archs, a)
	}
	slices.Sort(archs)
	amis := make([]v1.AMI, 0, len(archs))
	for _, a := range archs {
		amis = append(amis, best[a].ami)
	}
	return amis
}
