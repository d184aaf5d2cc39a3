package ssm

import (
	"fmt"
	"strconv"
	"strings"
)

// EKSImage is one published EKS-optimized AMI.
type EKSImage struct {
	Family          string // "al2023", "al2", "bottlerocket"
	Arch            string // "x86_64", "arm64"
	Variant         string // "standard", "nvidia", "neuron"
	KubernetesMinor string // "1.37"
	// Release is the AMI's version: AL2023/AL2 the build date ("v20261101" or
	// "20261101"), Bottlerocket its OS version ("1.30.0" or "v1.30.0").
	Release string
	ImageID string
}

// eksParam is one parameter an image answers, and how strongly it claims it when two
// images map to one name (AL2's GPU AMI serves nvidia and neuron alike).
type eksParam struct {
	pinned, latest string
	rank           int
}

// EKSParameters returns every parameter name Karpenter (karpenter-provider-aws v1.15.0)
// asks SSM for to resolve an alias over images, with the image ID each answers: the
// pinned name of every release ("al2023@v20261101") and, for the newest release of each
// (family, arch, variant, Kubernetes minor), the "recommended" (AL2023, AL2) or "latest"
// (Bottlerocket) name. Images Karpenter never asks for (AL2 arm64 GPU, an unknown
// family) are left out.
func EKSParameters(images []EKSImage) map[string]string {
	out := map[string]string{}
	type claim struct {
		img  EKSImage
		rank int
	}
	latest := map[string]claim{}
	pinnedRank := map[string]int{}
	for _, img := range images {
		ep, ok := eksNames(img)
		if !ok {
			continue
		}
		if r, seen := pinnedRank[ep.pinned]; !seen || ep.rank < r {
			out[ep.pinned], pinnedRank[ep.pinned] = img.ImageID, ep.rank
		}
		cur, seen := latest[ep.latest]
		if c := compareRelease(img.Release, cur.img.Release); !seen || c > 0 || (c == 0 && ep.rank < cur.rank) {
			latest[ep.latest] = claim{img, ep.rank}
		}
	}
	for name, c := range latest {
		out[name] = c.img.ImageID
	}
	return out
}

// eksNames builds an image's names exactly as the provider does:
//   - AL2023: pkg/providers/amifamily/al2023.go, AL2023.resolvePath (lines 82-89), for
//     x86_64 standard/nvidia/neuron and arm64 standard/nvidia (lines 51-52).
//   - AL2: al2.go, AL2.DescribeImageQuery (lines 45-60): amazon-linux-2 (x86_64),
//     amazon-linux-2-arm64, amazon-linux-2-gpu (x86_64 nvidia and neuron).
//   - Bottlerocket: bottlerocket.go, Bottlerocket.DescribeImageQuery (lines 46-52): the
//     version without its "v"; aws-k8s-K (standard, and neuron on x86_64) and
//     aws-k8s-K-nvidia, each for x86_64 and arm64.
func eksNames(img EKSImage) (eksParam, bool) {
	k, arch, variant := img.KubernetesMinor, img.Arch, img.Variant
	if k == "" || img.ImageID == "" || (arch != "x86_64" && arch != "arm64") {
		return eksParam{}, false
	}
	switch img.Family {
	case "al2023":
		if variant != "standard" && variant != "nvidia" && !(variant == "neuron" && arch == "x86_64") {
			return eksParam{}, false
		}
		rel := "v" + strings.TrimPrefix(img.Release, "v")
		base := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/", k, arch, variant)
		return eksParam{
			pinned: base + fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s/image_id", arch, variant, k, rel),
			latest: base + "recommended/image_id",
		}, true
	case "al2":
		rel := "v" + strings.TrimPrefix(img.Release, "v")
		base := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/", k)
		switch {
		case variant == "standard" && arch == "x86_64":
			return eksParam{pinned: base + fmt.Sprintf("amazon-linux-2/amazon-eks-node-%s-%s/image_id", k, rel),
				latest: base + "amazon-linux-2/recommended/image_id"}, true
		case variant == "standard" && arch == "arm64":
			return eksParam{pinned: base + fmt.Sprintf("amazon-linux-2-arm64/amazon-eks-arm64-node-%s-%s/image_id", k, rel),
				latest: base + "amazon-linux-2-arm64/recommended/image_id"}, true
		case (variant == "nvidia" || variant == "neuron") && arch == "x86_64":
			return eksParam{pinned: base + fmt.Sprintf("amazon-linux-2-gpu/amazon-eks-gpu-node-%s-%s/image_id", k, rel),
				latest: base + "amazon-linux-2-gpu/recommended/image_id", rank: variantRank(variant)}, true
		}
	case "bottlerocket":
		flavor := "aws-k8s-" + k
		switch {
		case variant == "nvidia":
			flavor += "-nvidia"
		case variant == "neuron" && arch != "x86_64", variant != "standard" && variant != "neuron":
			return eksParam{}, false
		}
		base := fmt.Sprintf("/aws/service/bottlerocket/%s/%s/", flavor, arch)
		return eksParam{pinned: base + strings.TrimPrefix(img.Release, "v") + "/image_id",
			latest: base + "latest/image_id", rank: variantRank(variant)}, true
	}
	return eksParam{}, false
}

// variantRank orders images sharing a name: the one built for it first.
func variantRank(v string) int {
	return map[string]int{"standard": 0, "nvidia": 1, "neuron": 2}[v]
}

// compareRelease orders releases by their numeric fields ("v20261101" < "v20261115",
// "1.9.0" < "1.30.0"); "" sorts first.
func compareRelease(a, b string) int {
	fa, fb := releaseFields(a), releaseFields(b)
	for i := 0; i < len(fa) || i < len(fb); i++ {
		var x, y int
		if i < len(fa) {
			x = fa[i]
		}
		if i < len(fb) {
			y = fb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

func releaseFields(r string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(r, func(c rune) bool { return c < '0' || c > '9' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			n = 0
		}
		out = append(out, n)
	}
	return out
}
