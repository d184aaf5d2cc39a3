package cloudprovider

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// The node-size arithmetic of karpenter-provider-aws for AL2023 nodes, so Karpenter's
// prediction and the simulated kubelet's registered Node agree.
const (
	// vmMemoryOverheadPercent is the share of an instance's memory the hypervisor and kernel
	// keep (the real provider's --vm-memory-overhead-percent default).
	vmMemoryOverheadPercent = 0.075
	// defaultEphemeralStorage is the AL2023 root volume size when the EC2NodeClass sets none.
	defaultEphemeralStorage = "20Gi"
	memoryAvailable         = "memory.available"
	nodeFSAvailable         = "nodefs.available"
)

// nodeConfig is what shapes a node beyond its instance type: the EC2NodeClass kubelet
// settings and root volume size. The zero value means AL2023 defaults.
type nodeConfig struct {
	MaxPods        *int32
	PodsPerCore    *int32
	KubeReserved   map[string]string
	SystemReserved map[string]string
	EvictionHard   map[string]string
	// RootVolumeSize is the root EBS volume (ephemeral storage); nil means 20Gi.
	RootVolumeSize *resource.Quantity
}

// nodeResources returns the capacity a kubelet on this instance type reports and the
// overhead it keeps back (allocatable = capacity - overhead). cluster/kubelet computes the
// same figures for the Nodes it registers.
func nodeResources(info ec2types.InstanceTypeInfo, cfg nodeConfig) (corev1.ResourceList, *cloudprovider.InstanceTypeOverhead) {
	cpus := cpuQuantity(info)
	mem := memoryQuantity(info)
	storage := ephemeralStorage(cfg.RootVolumeSize)
	pods := podsQuantity(info, cfg.MaxPods, cfg.PodsPerCore)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *cpus,
		corev1.ResourceMemory:           *mem,
		corev1.ResourceEphemeralStorage: *storage,
		corev1.ResourcePods:             *pods,
	}
	overhead := &cloudprovider.InstanceTypeOverhead{
		// AL2023 sizes kube-reserved memory from the ENI-limited pod count, not maxPods.
		KubeReserved:      kubeReserved(cpus, ENILimitedPods(info), cfg.KubeReserved),
		SystemReserved:    parseResourceMap(cfg.SystemReserved),
		EvictionThreshold: evictionThreshold(mem, storage, cfg.EvictionHard),
	}
	return capacity, overhead
}

func cpuQuantity(info ec2types.InstanceTypeInfo) *resource.Quantity {
	return resource.NewQuantity(int64(derefInt32(vcpus(info))), resource.DecimalSI)
}

func vcpus(info ec2types.InstanceTypeInfo) *int32 {
	if info.VCpuInfo == nil {
		return nil
	}
	return info.VCpuInfo.DefaultVCpus
}

func memoryMiB(info ec2types.InstanceTypeInfo) int64 {
	if info.MemoryInfo == nil || info.MemoryInfo.SizeInMiB == nil {
		return 0
	}
	return *info.MemoryInfo.SizeInMiB
}

func memoryQuantity(info ec2types.InstanceTypeInfo) *resource.Quantity {
	mib := memoryMiB(info)
	// Graviton keeps 64 MiB of CMA memory the kernel cannot hand out.
	if arch(info) == "arm64" {
		mib -= 64
	}
	overhead := int64(math.Ceil(float64(mib) * vmMemoryOverheadPercent))
	return resource.NewQuantity((mib-overhead)*1024*1024, resource.BinarySI)
}

func ephemeralStorage(root *resource.Quantity) *resource.Quantity {
	if root != nil {
		q := root.DeepCopy()
		return &q
	}
	q := resource.MustParse(defaultEphemeralStorage)
	return &q
}

// ENILimitedPods is EKS's max-pods: ENIs x (IPv4 addresses per ENI - 1) + 2.
func ENILimitedPods(info ec2types.InstanceTypeInfo) *resource.Quantity {
	var enis, ips int32
	if n := info.NetworkInfo; n != nil {
		enis = derefInt32(n.MaximumNetworkInterfaces)
		if len(n.NetworkCards) > 0 {
			idx := derefInt32(n.DefaultNetworkCardIndex)
			if int(idx) < len(n.NetworkCards) && n.NetworkCards[idx].MaximumNetworkInterfaces != nil {
				enis = *n.NetworkCards[idx].MaximumNetworkInterfaces
			}
		}
		ips = derefInt32(n.Ipv4AddressesPerInterface)
	}
	if enis <= 0 || ips <= 0 {
		return resource.NewQuantity(0, resource.DecimalSI)
	}
	return resource.NewQuantity(int64(enis)*int64(ips-1)+2, resource.DecimalSI)
}

func podsQuantity(info ec2types.InstanceTypeInfo, maxPods, podsPerCore *int32) *resource.Quantity {
	count := ENILimitedPods(info).Value()
	if maxPods != nil {
		count = int64(*maxPods)
	}
	if podsPerCore != nil && *podsPerCore > 0 {
		count = min(count, int64(*podsPerCore)*int64(derefInt32(vcpus(info))))
	}
	return resource.NewQuantity(count, resource.DecimalSI)
}

// kubeReserved is the EKS AMI's formula: memory 11Mi per pod + 255Mi, 1Gi of disk, and a
// sliding share of CPU (6% of the first core, 1% of the second, 0.5% of the next two,
// 0.25% of the rest).
func kubeReserved(cpus, pods *resource.Quantity, override map[string]string) corev1.ResourceList {
	out := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse(fmt.Sprintf("%dMi", 11*pods.Value()+255)),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
	}
	var milli int64
	for _, r := range []struct {
		start, end int64
		share      float64
	}{{0, 1000, 0.06}, {1000, 2000, 0.01}, {2000, 4000, 0.005}, {4000, 1 << 31, 0.0025}} {
		c := cpus.MilliValue()
		if c < r.start {
			continue
		}
		span := r.end - r.start
		if c < r.end {
			span = c - r.start
		}
		milli += int64(float64(span) * r.share)
	}
	out[corev1.ResourceCPU] = *resource.NewMilliQuantity(milli, resource.DecimalSI)
	for k, v := range parseResourceMap(override) {
		out[k] = v
	}
	return out
}

func evictionThreshold(mem, storage *resource.Quantity, hard map[string]string) corev1.ResourceList {
	out := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("100Mi"),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(math.Ceil(float64(storage.Value())/100*10)), resource.DecimalSI),
	}
	if v, ok := hard[memoryAvailable]; ok {
		out[corev1.ResourceMemory] = evictionSignal(mem, v)
	}
	if v, ok := hard[nodeFSAvailable]; ok {
		out[corev1.ResourceEphemeralStorage] = evictionSignal(storage, v)
	}
	return out
}

func evictionSignal(capacity *resource.Quantity, v string) resource.Quantity {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		pct, err := strconv.ParseFloat(p, 64)
		if err != nil || pct >= 100 {
			pct = 0 // 100% disables the threshold; the API server validated the format
		}
		return *resource.NewQuantity(int64(math.Ceil(capacity.AsApproximateFloat64()/100*pct)), resource.DecimalSI)
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

func parseResourceMap(m map[string]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range m {
		if q, err := resource.ParseQuantity(v); err == nil {
			out[corev1.ResourceName(k)] = q
		}
	}
	return out
}

func derefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// arch maps EC2's architecture names to Kubernetes' (x86_64 -> amd64).
func arch(info ec2types.InstanceTypeInfo) string {
	if info.ProcessorInfo == nil {
		return ""
	}
	for _, a := range info.ProcessorInfo.SupportedArchitectures {
		switch a {
		case ec2types.ArchitectureTypeX8664:
			return "amd64"
		case ec2types.ArchitectureTypeArm64:
			return "arm64"
		}
	}
	return ""
}
