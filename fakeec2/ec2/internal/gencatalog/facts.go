package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// typeFacts mirrors ec2.InstanceTypeInfo's facts (the generator cannot import the package
// it writes); derived names what was derived rather than read.
type typeFacts struct {
	Name                 string
	Arch                 string
	VCPUs                int64
	MemoryMiB            int64
	MaxENIs, IPv4PerENI  int64
	NetworkCards         []int64
	DefaultNetworkCard   int64
	NetworkPerformance   string
	NetworkMbps, EBSMbps int64
	ClockSpeedGHz        float64
	Manufacturer         string
	PhysicalProcessor    string
	Family               string
	Hypervisor           string
	BareMetal            bool
	PreviousGeneration   bool
	Burstable            bool
	EncryptionInTransit  bool
	EFAs                 int64
	GPUName, GPUMaker    string
	GPUCount, GPUMiB     int64
	AccelName, AccelMkr  string
	AccelCount, Cores    int64
	Neuron               bool
	LocalNVMeGB          int64

	derived []string
}

func (f *typeFacts) category() string {
	fam := family(f.Name)
	if i := strings.IndexAny(fam, "0123456789"); i >= 0 {
		return fam[:i]
	}
	return fam
}

const labelPrefix = "karpenter.k8s.aws/instance-"

func atoi(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// factsFromLabels turns Karpenter's labels and resources back into DescribeInstanceTypes'
// facts (Karpenter derives each label from one field; types.go computeRequirements).
func factsFromLabels(name string, t karpenterType, lim vpcLimits, bandwidth map[string]int64) typeFacts {
	l := func(k string) string { return t.Labels[labelPrefix+k] }
	f := typeFacts{
		Name: name, Arch: map[string]string{"amd64": "x86_64", "arm64": "arm64"}[t.Labels["kubernetes.io/arch"]],
		VCPUs: atoi(l("cpu")), MemoryMiB: atoi(l("memory")),
		ClockSpeedGHz: float64(atoi(l("cpu-sustained-clock-speed-mhz"))) / 1000,
		Manufacturer:  processorMaker[l("cpu-manufacturer")],
		NetworkMbps:   atoi(l("network-bandwidth")), EBSMbps: atoi(l("ebs-bandwidth")),
		Hypervisor: l("hypervisor"), EncryptionInTransit: l("encryption-in-transit-supported") == "true",
		EFAs: atoi(t.Resources["vpc.amazonaws.com/efa"]), LocalNVMeGB: atoi(l("local-nvme")),
	}
	if f.NetworkMbps == 0 {
		f.NetworkMbps = bandwidth[name]
	}
	setLimits(&f, lim)
	f.Burstable = f.category() == "t"
	if n := atoi(l("gpu-count")); n > 0 {
		f.GPUCount, f.GPUMiB = n, atoi(l("gpu-memory"))
		f.GPUName, f.GPUMaker = apiName(l("gpu-name")), acceleratorMaker(l("gpu-manufacturer"))
		f.derived = append(f.derived, "GPU name's case")
	}
	if n := atoi(l("accelerator-count")); n > 0 {
		f.AccelCount, f.AccelName, f.AccelMkr = n, apiName(l("accelerator-name")), acceleratorMaker(l("accelerator-manufacturer"))
		if neuron := atoi(t.Resources["aws.amazon.com/neuron"]); neuron > 0 {
			f.Neuron, f.Cores = true, atoi(t.Resources["aws.amazon.com/neuroncore"])/neuron
		}
		f.derived = append(f.derived, "accelerator name's case")
	}
	if f.LocalNVMeGB > 0 {
		f.derived = append(f.derived, "instance store as one disk")
	}
	return f
}

func setLimits(f *typeFacts, lim vpcLimits) {
	f.MaxENIs, f.IPv4PerENI, f.DefaultNetworkCard = lim.Interface, lim.IPv4PerInterface, lim.DefaultCard
	if len(lim.Cards) > 1 || (len(lim.Cards) == 1 && lim.Cards[0] != lim.Interface) {
		f.NetworkCards = lim.Cards
	}
	f.BareMetal = lim.BareMetal || strings.HasPrefix(f.Name[strings.Index(f.Name, ".")+1:], "metal")
	if f.BareMetal {
		f.Hypervisor = ""
	} else if f.Hypervisor == "" {
		f.Hypervisor = lim.Hypervisor
	}
}

var (
	gibRe = regexp.MustCompile(`^([0-9.]+) GiB$`)
	ghzRe = regexp.MustCompile(`([0-9.]+) GHz`)
	ebsRe = regexp.MustCompile(`^([0-9]+) Mbps$`)
	// olderGPUs are the GPUs of the older types the reference no longer lists (AWS's P3
	// page: NVIDIA V100 with 16 GiB each).
	olderGPUs = map[string][2]string{"p3": {"V100", "16384"}}
)

// factsFromPriceList builds a type the reference does not list from its Price List
// attributes and ENI limits.
func factsFromPriceList(name string, a map[string]string, lim vpcLimits, bandwidth map[string]int64) (typeFacts, bool) {
	mem := gibRe.FindStringSubmatch(a["memory"])
	if mem == nil || a["vcpu"] == "" {
		return typeFacts{}, false
	}
	gib, _ := strconv.ParseFloat(mem[1], 64)
	f := typeFacts{Name: name, Arch: "x86_64", VCPUs: atoi(a["vcpu"]), MemoryMiB: int64(math.Round(gib * 1024)),
		NetworkMbps: bandwidth[name]}
	proc := a["physicalProcessor"]
	f.Manufacturer, _, _ = strings.Cut(proc, " ")
	if strings.Contains(proc, "Graviton") {
		f.Arch, f.Manufacturer = "arm64", "AWS"
	}
	if m := ghzRe.FindStringSubmatch(a["clockSpeed"]); m != nil {
		f.ClockSpeedGHz, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := ebsRe.FindStringSubmatch(a["dedicatedEbsThroughput"]); m != nil {
		f.EBSMbps = atoi(m[1])
	}
	setLimits(&f, lim)
	if g, ok := olderGPUs[family(name)]; ok && atoi(a["gpu"]) > 0 {
		f.GPUCount, f.GPUName, f.GPUMaker, f.GPUMiB = atoi(a["gpu"]), g[0], "NVIDIA", atoi(g[1])
	}
	f.EncryptionInTransit = false
	f.derived = append(f.derived, "not in Karpenter's reference: facts from the Price List attributes")
	return f, true
}

var processorMaker = map[string]string{"aws": "AWS", "intel": "Intel", "amd": "AMD", "apple": "Apple"}

func acceleratorMaker(label string) string {
	switch label {
	case "nvidia", "amd", "aws":
		return strings.ToUpper(label)
	}
	return apiName(label)
}

// apiName undoes Karpenter's lowerKabobCase: "radeon-pro-v520" -> "Radeon Pro V520",
// "a10g" -> "A10G" (words with digits upper-cased; AWS's own case is not recorded).
func apiName(label string) string {
	words := strings.Split(label, "-")
	for i, w := range words {
		if strings.ContainsAny(w, "0123456789") {
			words[i] = strings.ToUpper(w)
		} else if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// derivedNetworkPerformance words a baseline bandwidth as DescribeInstanceTypes does.
func derivedNetworkPerformance(mbps int64) string {
	switch {
	case mbps >= 1000:
		return strconv.FormatFloat(float64(mbps)/1000, 'f', -1, 64) + " Gigabit"
	case mbps > 0:
		return fmt.Sprintf("%d Megabit", mbps)
	}
	return "Moderate"
}

// familyOfCategory is the Price List's instanceFamily of a category, for types the dump
// does not describe.
func familyOfCategory(cat string) string {
	switch cat {
	case "c", "hpc":
		return "Compute optimized"
	case "r", "x", "z", "u-", "u":
		return "Memory optimized"
	case "i", "d", "h", "im", "is":
		return "Storage optimized"
	case "p", "g", "gr":
		return "GPU instance"
	case "inf", "trn", "dl":
		return "Machine Learning ASIC Instances"
	case "f", "vt":
		return "FPGA Instances"
	}
	return "General purpose"
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
