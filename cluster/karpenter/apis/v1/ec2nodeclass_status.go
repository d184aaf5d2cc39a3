package v1

import (
	"slices"

	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
)

// Condition types of an EC2NodeClass. Ready (status.ConditionReady) is the root: it is
// True only when all of these are True for the current generation.
const (
	ConditionTypeSubnetsReady         = "SubnetsReady"
	ConditionTypeSecurityGroupsReady  = "SecurityGroupsReady"
	ConditionTypeAMIsReady            = "AMIsReady"
	ConditionTypeInstanceProfileReady = "InstanceProfileReady"
)

// Subnet is a resolved subnet that nodes can be launched into.
type Subnet struct {
	// ID of the subnet
	// +required
	ID string `json:"id"`
	// The associated availability zone
	// +required
	Zone string `json:"zone"`
	// The associated availability zone ID
	// +optional
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroup is a resolved security group attached to the nodes.
type SecurityGroup struct {
	// ID of the security group
	// +required
	ID string `json:"id"`
	// Name of the security group
	// +optional
	Name string `json:"name,omitempty"`
}

// AMI is a resolved image and the instance types it can run on.
type AMI struct {
	// ID of the AMI
	// +required
	ID string `json:"id"`
	// Deprecation status of the AMI
	// +optional
	Deprecated bool `json:"deprecated,omitempty"`
	// Name of the AMI
	// +optional
	Name string `json:"name,omitempty"`
	// Requirements of the AMI to be utilized on an instance type (kubernetes.io/arch)
	// +required
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// EC2NodeClassStatus contains the resolved state of the EC2NodeClass.
type EC2NodeClassStatus struct {
	// Subnets contains the current subnet values that are available to the
	// cluster under the subnet selectors.
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
	// SecurityGroups contains the current security group values that are available to the
	// cluster under the SecurityGroups selectors.
	// +optional
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	// AMIs contains the current AMI values that are available to the
	// cluster under the AMI selectors.
	// +optional
	AMIs []AMI `json:"amis,omitempty"`
	// InstanceProfile contains the resolved instance profile for the role
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`
	// Conditions contains signals for health and readiness
	// +optional
	Conditions []status.Condition `json:"conditions,omitempty"`
}

// Karpenter core's GetSupportedNodeClasses and NodePool readiness need a status.Object.
var _ status.Object = (*EC2NodeClass)(nil)

// StatusConditions implements status.Object: Ready depends on the four resolution
// conditions. Karpenter core only launches for a NodeClass whose Ready is True.
func (in *EC2NodeClass) StatusConditions(opts ...status.ForOption) status.ConditionSet {
	return status.NewReadyConditions(
		ConditionTypeAMIsReady,
		ConditionTypeSubnetsReady,
		ConditionTypeSecurityGroupsReady,
		ConditionTypeInstanceProfileReady,
	).For(in, opts...)
}

// GetConditions implements status.Object.
func (in *EC2NodeClass) GetConditions() []status.Condition {
	return in.Status.Conditions
}

// SetConditions implements status.Object.
func (in *EC2NodeClass) SetConditions(conditions []status.Condition) {
	in.Status.Conditions = conditions
}

// Zones lists the zones of the resolved subnets, in status order.
func (in *EC2NodeClass) Zones() []string {
	zones := make([]string, 0, len(in.Status.Subnets))
	seen := map[string]bool{}
	for _, s := range in.Status.Subnets {
		if !seen[s.Zone] {
			seen[s.Zone] = true
			zones = append(zones, s.Zone)
		}
	}
	return zones
}

// ZoneIDMap maps each resolved subnet's zone name to its zone ID.
func (in *EC2NodeClass) ZoneIDMap() map[string]string {
	m := make(map[string]string, len(in.Status.Subnets))
	for _, s := range in.Status.Subnets {
		m[s.Zone] = s.ZoneID
	}
	return m
}

// AMIFor returns the first resolved AMI whose requirements admit the given
// kubernetes.io/arch value ("amd64", "arm64"): the image to launch an instance type of
// that architecture with.
func (in *EC2NodeClass) AMIFor(arch string) (AMI, bool) {
	for _, ami := range in.Status.AMIs {
		if amiAdmitsArch(ami, arch) {
			return ami, true
		}
	}
	return AMI{}, false
}

func amiAdmitsArch(ami AMI, arch string) bool {
	for _, r := range ami.Requirements {
		if r.Key != corev1.LabelArchStable {
			continue
		}
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			if !slices.Contains(r.Values, arch) {
				return false
			}
		case corev1.NodeSelectorOpNotIn:
			if slices.Contains(r.Values, arch) {
				return false
			}
		case corev1.NodeSelectorOpDoesNotExist:
			return false
		}
	}
	return true
}
