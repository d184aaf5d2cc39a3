package kubelet

import (
	"math"
	"strconv"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultVMMemoryOverheadPercent is the share of an instance type's nominal memory the kubelet does
// not see (hypervisor and kernel). It is karpenter-provider-aws's default vmMemoryOverheadPercent, so
// a Node reports exactly the memory Karpenter assumed when it chose the instance type.
const DefaultVMMemoryOverheadPercent = 0.075

// DefaultRootVolumeGiB is the root volume size of an AL2023 node when EC2 does not tell us better.
const DefaultRootVolumeGiB = 20

const (
	mi = 1 << 20
	gi = 1 << 30
)

// Extended resources the device plugins would advertise for GPU instance types.
const (
	resourceNvidiaGPU corev1.ResourceName = "nvidia.com/gpu"
	resourceAMDGPU    corev1.ResourceName = "amd.com/gpu"
)

// eniMaxPods is the VPC CNI pod limit of an instance type, the formula of EKS's
// eni-max-pods.txt that nodeadm falls back to when the NodeConfig sets no maxPods:
// ENIs * (IPv4 addresses per ENI - 1) + 2.
func eniMaxPods(it ec2types.InstanceTypeInfo) int32 {
	ni := it.NetworkInfo
	if ni == nil {
		return 110
	}
	enis := int32(0)
	if ni.MaximumNetworkInterfaces != nil {
		enis = *ni.MaximumNetworkInterfaces
	}
	// The VPC CNI only uses the default network card's interfaces.
	if ni.DefaultNetworkCardIndex != nil {
		for _, card := range ni.NetworkCards {
			if card.NetworkCardIndex != nil && *card.NetworkCardIndex == *ni.DefaultNetworkCardIndex && card.MaximumNetworkInterfaces != nil {
				enis = *card.MaximumNetworkInterfaces
			}
		}
	}
	ips := int32(0)
	if ni.Ipv4AddressesPerInterface != nil {
		ips = *ni.Ipv4AddressesPerInterface
	}
	if enis <= 0 || ips <= 0 {
		return 110
	}
	return enis*(ips-1) + 2
}

// nodeResources returns the capacity and allocatable a kubelet on this machine reports:
// capacity from the instance type (memory less the VM overhead), allocatable less the
// kube-reserved and eviction thresholds nodeadm configures on AL2023 (the same figures
// karpenter-provider-aws subtracts in its estimate).
func nodeResources(it ec2types.InstanceTypeInfo, arch string, maxPods int32, rootVolumeGiB int32, vmOverhead float64) (capacity, allocatable corev1.ResourceList) {
	return nodeResourcesReserved(it, arch, maxPods, rootVolumeGiB, vmOverhead, reservations{})
}

// reservations are the user data's kubeReserved, systemReserved and evictionHard: a resource
// or signal set there replaces the AMI's default for it, as in the kubelet's merged config.
type reservations struct {
	Kube, System, EvictionHard map[string]string
}

// nodeResourcesReserved is nodeResources with the user data's reservations applied.
func nodeResourcesReserved(it ec2types.InstanceTypeInfo, arch string, maxPods int32, rootVolumeGiB int32, vmOverhead float64, r reservations) (capacity, allocatable corev1.ResourceList) {
	vcpus := int64(1)
	if it.VCpuInfo != nil && it.VCpuInfo.DefaultVCpus != nil {
		vcpus = int64(*it.VCpuInfo.DefaultVCpus)
	}
	memMiB := int64(0)
	if it.MemoryInfo != nil && it.MemoryInfo.SizeInMiB != nil {
		memMiB = *it.MemoryInfo.SizeInMiB
	}
	if arch == "arm64" {
		memMiB -= 64 // Graviton's CMA reservation
	}
	memMiB -= int64(math.Ceil(float64(memMiB) * vmOverhead))
	if rootVolumeGiB <= 0 {
		rootVolumeGiB = DefaultRootVolumeGiB
	}
	storage := int64(rootVolumeGiB) * gi

	cpuMilli := vcpus * 1000
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memMiB*mi, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(storage, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
	}
	if it.GpuInfo != nil {
		for _, g := range it.GpuInfo.Gpus {
			if g.Count == nil || g.Manufacturer == nil {
				continue
			}
			name := corev1.ResourceName("")
			switch *g.Manufacturer {
			case "NVIDIA":
				name = resourceNvidiaGPU
			case "AMD":
				name = resourceAMDGPU
			default:
				continue
			}
			q := capacity[name]
			q.Add(*resource.NewQuantity(int64(*g.Count), resource.DecimalSI))
			capacity[name] = q
		}
	}

	allocatable = capacity.DeepCopy()
	memBytes := memMiB * mi
	// kube-reserved memory is 11Mi per pod + 255Mi, counting the ENI-limited pods whatever
	// maxPods says (as nodeadm does on AL2023); eviction-hard memory.available is 100Mi.
	// kube-reserved ephemeral-storage 1Gi, eviction-hard nodefs.available 10%.
	cpuReserved := r.quantity(r.Kube, "cpu", kubeReservedCPUMilli(cpuMilli)*1e6, 0) + r.quantity(r.System, "cpu", 0, 0)
	memReserved := r.quantity(r.Kube, "memory", (11*int64(eniMaxPods(it))+255)*mi, 0) + r.quantity(r.System, "memory", 0, 0) +
		r.quantity(r.EvictionHard, "memory.available", 100*mi, memBytes)
	storageReserved := r.quantity(r.Kube, "ephemeral-storage", gi, 0) + r.quantity(r.System, "ephemeral-storage", 0, 0) +
		r.quantity(r.EvictionHard, "nodefs.available", int64(math.Ceil(float64(storage)/100*10)), storage)
	allocatable[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpuMilli-cpuReserved/1e6, resource.DecimalSI)
	allocatable[corev1.ResourceMemory] = *resource.NewQuantity(memBytes-memReserved, resource.BinarySI)
	allocatable[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(storage-storageReserved, resource.BinarySI)
	for name, q := range allocatable {
		if q.Sign() < 0 {
			allocatable[name] = *resource.NewQuantity(0, q.Format)
		}
	}
	return capacity, allocatable
}

// kubeReservedCPUMilli is the kube-reserved CPU of the EKS AMIs: 6% of the first core, 1% of
// the second, 0.5% of the next two and 0.25% of every core above four.
func kubeReservedCPUMilli(cpuMilli int64) int64 {
	var reserved int64
	for _, r := range []struct {
		start, end int64
		share      float64
	}{
		{0, 1000, 0.06},
		{1000, 2000, 0.01},
		{2000, 4000, 0.005},
		{4000, math.MaxInt64, 0.0025},
	} {
		if cpuMilli < r.start {
			break
		}
		span := min(cpuMilli, r.end) - r.start
		reserved += int64(float64(span) * r.share)
	}
	return reserved
}

// quantity returns m[key] in bytes (CPU: nanocores) or def when it is unset or unreadable; a
// percentage (evictionHard) is of total.
func (reservations) quantity(m map[string]string, key string, def, total int64) int64 {
	v, ok := m[key]
	if !ok {
		return def
	}
	if pct, isPct := strings.CutSuffix(v, "%"); isPct {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil || f < 0 || total <= 0 {
			return def
		}
		return int64(math.Ceil(float64(total) * f / 100))
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return def
	}
	if key == "cpu" {
		return q.ScaledValue(resource.Nano)
	}
	return q.Value()
}
