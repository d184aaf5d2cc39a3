package kubelet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karplab/karplab/cluster/bootstrap"
)

// What the simulated machines run: an AL2023 EKS AMI of the lab's Kubernetes version.
const (
	KubeletVersion          = "v1.37.2"
	ContainerRuntimeVersion = "containerd://2.1.4"
	OSImage                 = "Amazon Linux 2023.9.20251014"
	kernelRelease           = "6.12.46-66.121.amzn2023"
	kubeletPort             = 10250

	// What an EC2NodeClass selecting amiFamily AL2 or Bottlerocket boots instead.
	OSImageAL2                          = "Amazon Linux 2"
	kernelReleaseAL2                    = "5.10.244-240.965.amzn2"
	ContainerRuntimeVersionAL2          = "containerd://1.7.27"
	OSImageBottlerocket                 = "Bottlerocket OS 1.49.0 (aws-k8s-1.37)"
	kernelReleaseBottlerocket           = "6.12.46"
	ContainerRuntimeVersionBottlerocket = "containerd://2.1.4+bottlerocket"
)

// Labels and annotations the node's software sets besides the user data's --node-labels.
const (
	// LabelZoneID is the zone ID label the AWS cloud provider sets.
	LabelZoneID = "topology.k8s.aws/zone-id"
	// LabelCloudProviderAWS is the label the AWS cloud provider puts on every Node it
	// initialises; the lab's value is a hash of the cluster name.
	LabelCloudProviderAWS = "k8s.io/cloud-provider-aws"

	annotationProvidedNodeIP = "alpha.kubernetes.io/provided-node-ip"
	annotationControllerAD   = "volumes.kubernetes.io/controller-managed-attach-detach"
)

// machine is what a booting node knows about itself: its EC2 description (IMDS on a real
// machine), its user data and its instance type.
type machine struct {
	Instance      ec2types.Instance
	UserData      *bootstrap.UserData
	InstanceType  ec2types.InstanceTypeInfo
	RootVolumeGiB int32 // 0: DefaultRootVolumeGiB
}

// nodeSettings are the fleet-wide inputs of buildNode.
type nodeSettings struct {
	ClusterName             string
	Region                  string
	VMMemoryOverheadPercent float64
}

// buildNode returns the Node the kubelet registers for m. It folds in what the AWS
// cloud-controller-manager would add on initialisation (instance type and topology labels,
// addresses), since the lab has no CCM.
func buildNode(m machine, s nodeSettings) (*corev1.Node, error) {
	inst := m.Instance
	p, err := placeOf(inst, s.Region)
	if err != nil {
		return nil, err
	}
	name := nodeName(inst, p.region)
	arch := nodeArch(inst, m.InstanceType)
	boot := bootConfigOf(m)
	labels := boot.labels
	// Set last: the kubelet's and the cloud provider's own labels win over --node-labels.
	for k, v := range ownLabels(name, arch, string(inst.InstanceType), p, s.ClusterName) {
		labels[k] = v
	}
	capacity, allocatable := nodeResourcesReserved(m.InstanceType, arch, boot.maxPods, m.RootVolumeGiB, s.VMMemoryOverheadPercent, boot.reserved)
	node := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: labels,
			Annotations: map[string]string{
				annotationProvidedNodeIP: p.ip,
				annotationControllerAD:   "true",
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: providerID(p.zone, p.id),
			Taints:     boot.taints,
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: p.ip},
				{Type: corev1.NodeInternalDNS, Address: name},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort}},
			NodeInfo:        systemInfo(inst, p.id, arch, boot),
		},
	}
	return node, nil
}

// placement is where an instance runs, as its Node's labels, provider ID and addresses
// name it.
type placement struct {
	id, zone, zoneID, region, ip string
}

// placeOf reads inst's placement, failing on what a Node cannot be registered without (an
// ID, a zone, a private IPv4 address). region is the lab's; "" takes the zone's.
func placeOf(inst ec2types.Instance, region string) (placement, error) {
	p := placement{id: deref(inst.InstanceId)}
	if p.id == "" {
		return p, fmt.Errorf("instance has no ID")
	}
	if inst.Placement != nil {
		p.zone = deref(inst.Placement.AvailabilityZone)
		p.zoneID = deref(inst.Placement.AvailabilityZoneId)
	}
	if p.zone == "" {
		return p, fmt.Errorf("instance %s has no availability zone", p.id)
	}
	p.ip = deref(inst.PrivateIpAddress)
	if _, err := netip.ParseAddr(p.ip); err != nil {
		return p, fmt.Errorf("instance %s has no private IPv4 address (%q)", p.id, p.ip)
	}
	p.region = region
	if p.region == "" {
		p.region = regionOf(p.zone)
	}
	return p, nil
}

// bootConfig is what the node's user data sets (nodeadm's NodeConfig, or the AL2 and
// Bottlerocket equivalents), over the AMI's defaults.
type bootConfig struct {
	labels                   map[string]string // --node-labels; never nil
	taints                   []corev1.Taint
	reserved                 reservations
	maxPods                  int32
	osImage, kernel, runtime string
}

// bootConfigOf reads m's user data; without any, the node boots the lab's default AMI with
// the ENI-limited max pods and nothing reserved beyond the defaults.
func bootConfigOf(m machine) bootConfig {
	c := bootConfig{maxPods: eniMaxPods(m.InstanceType), osImage: OSImage, kernel: kernelRelease, runtime: ContainerRuntimeVersion}
	if m.UserData == nil {
		c.labels = map[string]string{}
		return c
	}
	n := m.UserData.Node
	c.reserved = reservations{Kube: n.KubeReserved, System: n.SystemReserved, EvictionHard: n.EvictionHard}
	c.osImage, c.kernel, c.runtime = osOf(m.UserData.Format)
	if n.MaxPods != nil {
		c.maxPods = *n.MaxPods
	}
	// A copy: the Node's labels get the kubelet's own added.
	c.labels = make(map[string]string, len(n.Labels)+16)
	for k, v := range n.Labels {
		c.labels[k] = v
	}
	c.taints = append(c.taints, n.Taints...)
	return c
}

// ownLabels are the labels the kubelet and the AWS cloud provider set themselves: host,
// OS and architecture, instance type, topology (stable and beta keys, as both set them),
// and the zone ID when the instance has one.
func ownLabels(name, arch, instanceType string, p placement, clusterName string) map[string]string {
	labels := map[string]string{
		corev1.LabelHostname:                name,
		corev1.LabelOSStable:                "linux",
		corev1.LabelArchStable:              arch,
		"beta.kubernetes.io/os":             "linux",
		"beta.kubernetes.io/arch":           arch,
		corev1.LabelInstanceTypeStable:      instanceType,
		corev1.LabelInstanceType:            instanceType,
		corev1.LabelTopologyZone:            p.zone,
		corev1.LabelTopologyRegion:          p.region,
		corev1.LabelFailureDomainBetaZone:   p.zone,
		corev1.LabelFailureDomainBetaRegion: p.region,
		LabelCloudProviderAWS:               shortHash("cluster/" + clusterName),
	}
	if p.zoneID != "" {
		labels[LabelZoneID] = p.zoneID
	}
	return labels
}

// systemInfo is what the node reports of its machine and software. The IDs derive from
// the instance ID (the boot ID from its launch time too): every build of one boot's Node
// reports the same.
func systemInfo(inst ec2types.Instance, id, arch string, boot bootConfig) corev1.NodeSystemInfo {
	kernelArch := "x86_64"
	if arch == "arm64" {
		kernelArch = "aarch64"
	}
	launch := ""
	if inst.LaunchTime != nil {
		launch = inst.LaunchTime.UTC().Format("20060102T150405.000000000")
	}
	return corev1.NodeSystemInfo{
		MachineID:               shortHash("machine-id/" + id),
		SystemUUID:              ec2SystemUUID(id),
		BootID:                  uuidFrom("boot/" + id + "/" + launch),
		KernelVersion:           boot.kernel + "." + kernelArch,
		OSImage:                 boot.osImage,
		ContainerRuntimeVersion: boot.runtime,
		KubeletVersion:          KubeletVersion,
		OperatingSystem:         "linux",
		Architecture:            arch,
	}
}

// osOf is the OS image, kernel release and container runtime of the AMI family that reads
// user data of format f; AL2023 (the lab's default) for anything else.
func osOf(f bootstrap.Format) (osImage, kernel, runtime string) {
	switch f {
	case bootstrap.FormatAL2:
		return OSImageAL2, kernelReleaseAL2, ContainerRuntimeVersionAL2
	case bootstrap.FormatBottlerocket:
		return OSImageBottlerocket, kernelReleaseBottlerocket, ContainerRuntimeVersionBottlerocket
	}
	return OSImage, kernelRelease, ContainerRuntimeVersion
}

// providerID is the Kubernetes provider ID of an EC2 instance.
func providerID(zone, instanceID string) string {
	return "aws:///" + zone + "/" + instanceID
}

// instanceIDFromProviderID returns the instance ID of an aws:///zone/i-... provider ID.
func instanceIDFromProviderID(pid string) (string, bool) {
	rest, ok := strings.CutPrefix(pid, "aws:///")
	if !ok {
		return "", false
	}
	_, id, ok := strings.Cut(rest, "/")
	if !ok || !strings.HasPrefix(id, "i-") {
		return "", false
	}
	return id, true
}

// nodeName is the instance's private DNS name, which the kubelet uses as hostname on EKS.
func nodeName(inst ec2types.Instance, region string) string {
	if dns := strings.ToLower(deref(inst.PrivateDnsName)); dns != "" {
		return dns
	}
	domain := region + ".compute.internal"
	if region == "us-east-1" {
		domain = "ec2.internal"
	}
	return "ip-" + strings.ReplaceAll(deref(inst.PrivateIpAddress), ".", "-") + "." + domain
}

// nodeArch is the Kubernetes architecture (amd64, arm64) of the instance.
func nodeArch(inst ec2types.Instance, it ec2types.InstanceTypeInfo) string {
	arch := string(inst.Architecture)
	if arch == "" && it.ProcessorInfo != nil && len(it.ProcessorInfo.SupportedArchitectures) > 0 {
		arch = string(it.ProcessorInfo.SupportedArchitectures[0])
	}
	switch arch {
	case "arm64", "arm64_mac":
		return "arm64"
	default:
		return "amd64"
	}
}

// regionOf turns an availability zone name (eu-west-2a) into its region.
func regionOf(zone string) string {
	if n := len(zone); n > 0 && zone[n-1] >= 'a' && zone[n-1] <= 'z' {
		return zone[:n-1]
	}
	return zone
}

// podCIDR is the range kwok hands pod IPs out of for the node with this private IP: a /26 of
// 100.64.0.0/10 (the range VPC CNI custom networking uses for pods), picked by the low 16 bits
// of the node's IP so nodes of one VPC never share a range.
func podCIDR(privateIP string) string {
	a, err := netip.ParseAddr(privateIP)
	if err != nil || !a.Is4() {
		return "100.64.0.0/26"
	}
	b := a.As4()
	block := uint32(b[2])<<8 | uint32(b[3])
	base := (uint32(100)<<24 | uint32(64)<<16) + block<<6
	return netip.AddrFrom4([4]byte{byte(base >> 24), byte(base >> 16), byte(base >> 8), byte(base)}).String() + "/26"
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// uuidFrom formats a stable UUID-shaped string derived from s.
func uuidFrom(s string) string {
	h := shortHash(s)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ec2SystemUUID looks like an EC2 instance's DMI system UUID, which starts with "ec2".
func ec2SystemUUID(instanceID string) string {
	return "ec2" + uuidFrom("system-uuid/" + instanceID)[3:]
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
