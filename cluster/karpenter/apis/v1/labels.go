package v1

import (
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Karpenter core rejects NodePool requirements on a restricted domain unless the label is
// well known, so the provider's instance labels (the seed's instance-category and
// instance-generation) must be registered before NodePools are validated or scheduled.
func init() {
	karpv1.RestrictedLabelDomains = karpv1.RestrictedLabelDomains.Insert(Group)
	karpv1.WellKnownLabels = karpv1.WellKnownLabels.Insert(
		LabelInstanceHypervisor,
		LabelInstanceEncryptionInTransitSupported,
		LabelInstanceCategory,
		LabelInstanceFamily,
		LabelInstanceGeneration,
		LabelInstanceSize,
		LabelInstanceLocalNVME,
		LabelInstanceCPU,
		LabelInstanceCPUManufacturer,
		LabelInstanceCPUSustainedClockSpeedMhz,
		LabelInstanceMemory,
		LabelInstanceEBSBandwidth,
		LabelInstanceNetworkBandwidth,
		LabelInstanceGPUName,
		LabelInstanceGPUManufacturer,
		LabelInstanceGPUCount,
		LabelInstanceGPUMemory,
		LabelInstanceAcceleratorName,
		LabelInstanceAcceleratorManufacturer,
		LabelInstanceAcceleratorCount,
		LabelTopologyZoneID,
	)
}

// Node labels the AWS provider derives from the instance type, as karpenter-provider-aws
// spells them.
const (
	LabelInstanceHypervisor                   = Group + "/instance-hypervisor"
	LabelInstanceEncryptionInTransitSupported = Group + "/instance-encryption-in-transit-supported"
	LabelInstanceCategory                     = Group + "/instance-category"
	LabelInstanceFamily                       = Group + "/instance-family"
	LabelInstanceGeneration                   = Group + "/instance-generation"
	LabelInstanceLocalNVME                    = Group + "/instance-local-nvme"
	LabelInstanceSize                         = Group + "/instance-size"
	LabelInstanceCPU                          = Group + "/instance-cpu"
	LabelInstanceCPUManufacturer              = Group + "/instance-cpu-manufacturer"
	LabelInstanceCPUSustainedClockSpeedMhz    = Group + "/instance-cpu-sustained-clock-speed-mhz"
	LabelInstanceMemory                       = Group + "/instance-memory"
	LabelInstanceEBSBandwidth                 = Group + "/instance-ebs-bandwidth"
	LabelInstanceNetworkBandwidth             = Group + "/instance-network-bandwidth"
	LabelInstanceGPUName                      = Group + "/instance-gpu-name"
	LabelInstanceGPUManufacturer              = Group + "/instance-gpu-manufacturer"
	LabelInstanceGPUCount                     = Group + "/instance-gpu-count"
	LabelInstanceGPUMemory                    = Group + "/instance-gpu-memory"
	LabelInstanceAcceleratorName              = Group + "/instance-accelerator-name"
	LabelInstanceAcceleratorManufacturer      = Group + "/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount             = Group + "/instance-accelerator-count"
	// LabelNodeClass is also the tag key naming the EC2NodeClass on EC2 resources.
	LabelNodeClass = Group + "/ec2nodeclass"

	LabelTopologyZoneID = "topology.k8s.aws/zone-id"
)

// Annotations and tag keys.
const (
	// AnnotationEC2NodeClassHash holds EC2NodeClass.Hash(); the nodeclass controller keeps
	// it on the EC2NodeClass, the cloud provider copies it to each NodeClaim at launch and
	// reports drift when the two differ (while the hash versions match).
	AnnotationEC2NodeClassHash = Group + "/ec2nodeclass-hash"
	// AnnotationEC2NodeClassHashVersion holds EC2NodeClassHashVersion beside the hash.
	AnnotationEC2NodeClassHashVersion = Group + "/ec2nodeclass-hash-version"

	NodeClaimTagKey      = coreapis.Group + "/nodeclaim"
	NodePoolTagKey       = karpv1.NodePoolLabelKey
	NodeClassTagKey      = LabelNodeClass
	NameTagKey           = "Name"
	EKSClusterNameTagKey = "eks:eks-cluster-name"
)

// AMI families (spec.amiFamily values) and alias families (their lower-case form).
const (
	AMIFamilyAL2          = "AL2"
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyCustom       = "Custom"
)

// AWSToKubeArchitectures maps EC2's image and instance-type architecture names to
// kubernetes.io/arch values.
var AWSToKubeArchitectures = map[string]string{
	"x86_64":                 karpv1.ArchitectureAmd64,
	karpv1.ArchitectureArm64: karpv1.ArchitectureArm64,
}

// KubeToAWSArchitectures is the inverse of AWSToKubeArchitectures.
var KubeToAWSArchitectures = map[string]string{
	karpv1.ArchitectureAmd64: "x86_64",
	karpv1.ArchitectureArm64: karpv1.ArchitectureArm64,
}
