package ssm_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/account/accounttest"
	"github.com/karplab/karplab/fakeec2/ssm"
)

// The provider's amifamily package cannot be imported here: it pulls in k8s.io and
// sigs.k8s.io (over a thousand packages) and modules this go.sum lacks. So the paths
// karpenter-provider-aws v1.15.0 asks SSM for are rebuilt below with its own format
// strings, from pkg/providers/amifamily in the module cache.

// al2023Paths is AL2023.DescribeImageQuery's loop (al2023.go:50-53) over resolvePath
// (al2023.go:82-89).
func al2023Paths(k8s, ver string) []string {
	var out []string
	for arch, variants := range map[string][]string{
		"x86_64": {"standard", "nvidia", "neuron"},
		"arm64":  {"standard", "nvidia"},
	} {
		for _, variant := range variants {
			name := "recommended"
			if ver != "latest" {
				name = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, variant, k8s, ver)
			}
			out = append(out, fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k8s, arch, variant, name))
		}
	}
	return out
}

// al2Paths is AL2.DescribeImageQuery's map (al2.go:45-60).
func al2Paths(k8s, ver string) []string {
	pick := func(pinned string) string {
		if ver == "latest" {
			return "recommended"
		}
		return pinned
	}
	return []string{
		fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2/%s/image_id", k8s, pick(fmt.Sprintf("amazon-eks-node-%s-%s", k8s, ver))),
		fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2-arm64/%s/image_id", k8s, pick(fmt.Sprintf("amazon-eks-arm64-node-%s-%s", k8s, ver))),
		fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2-gpu/%s/image_id", k8s, pick(fmt.Sprintf("amazon-eks-gpu-node-%s-%s", k8s, ver))),
	}
}

// bottlerocketPaths is Bottlerocket.DescribeImageQuery's map (bottlerocket.go:46-52).
func bottlerocketPaths(k8s, ver string) []string {
	v := strings.TrimLeft(ver, "v")
	return []string{
		fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/x86_64/%s/image_id", k8s, v),
		fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/arm64/%s/image_id", k8s, v),
		fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/x86_64/%s/image_id", k8s, v),
		fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/arm64/%s/image_id", k8s, v),
	}
}

func eksImages() []ssm.EKSImage {
	img := func(family, arch, variant, k8s, release, id string) ssm.EKSImage {
		return ssm.EKSImage{Family: family, Arch: arch, Variant: variant, KubernetesMinor: k8s, Release: release, ImageID: id}
	}
	return []ssm.EKSImage{
		img("al2023", "x86_64", "standard", "1.37", "v20261101", "ami-a1"),
		img("al2023", "x86_64", "standard", "1.37", "v20261115", "ami-a2"),
		img("al2023", "x86_64", "nvidia", "1.37", "v20261101", "ami-a3"),
		img("al2023", "x86_64", "neuron", "1.37", "20261101", "ami-a4"), // fakeec2 spells the date without "v"
		img("al2023", "arm64", "standard", "1.37", "v20261101", "ami-a5"),
		img("al2023", "arm64", "nvidia", "1.37", "v20261115", "ami-a6"),
		img("al2023", "x86_64", "standard", "1.36", "v20261101", "ami-a7"),
		img("al2", "x86_64", "standard", "1.32", "v20261101", "ami-b1"),
		img("al2", "arm64", "standard", "1.32", "v20261101", "ami-b2"),
		img("al2", "x86_64", "nvidia", "1.32", "v20261101", "ami-b3"),
		img("al2", "x86_64", "neuron", "1.32", "v20261101", "ami-b4"), // the same GPU AMI parameter: nvidia's wins
		img("bottlerocket", "x86_64", "standard", "1.37", "1.30.0", "ami-c1"),
		img("bottlerocket", "x86_64", "standard", "1.37", "1.9.0", "ami-c0"), // older, though "1.9" > "1.30" as text
		img("bottlerocket", "x86_64", "nvidia", "1.37", "1.30.0", "ami-c2"),
		img("bottlerocket", "arm64", "standard", "1.37", "v1.30.0", "ami-c3"),
		img("bottlerocket", "arm64", "nvidia", "1.37", "1.30.0", "ami-c4"),
		img("bottlerocket", "x86_64", "neuron", "1.37", "1.30.0", "ami-c5"), // shares standard's parameter
	}
}

// TestEKSParametersAnswerTheProvider resolves each alias as the provider does, through
// the SDK, and checks every path it asks for answers the right image; then that the
// service publishes no name the provider never asks for.
func TestEKSParametersAnswerTheProvider(t *testing.T) {
	svc, c := start(t, fixedHost())
	if err := svc.SetEKSImages(eksImages()); err != nil {
		t.Fatalf("SetEKSImages: %v", err)
	}
	tests := []struct {
		name  string
		paths []string
		want  map[string]string // path -> image ID; the other paths must be ParameterNotFound
	}{
		{name: "al2023@latest 1.37", paths: al2023Paths("1.37", "latest"), want: map[string]string{
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id": "ami-a2",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/nvidia/recommended/image_id":   "ami-a3",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/neuron/recommended/image_id":   "ami-a4",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/standard/recommended/image_id":  "ami-a5",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/nvidia/recommended/image_id":    "ami-a6",
		}},
		{name: "al2023@v20261101 1.37", paths: al2023Paths("1.37", "v20261101"), want: map[string]string{
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20261101/image_id": "ami-a1",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/nvidia/amazon-eks-node-al2023-x86_64-nvidia-1.37-v20261101/image_id":     "ami-a3",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/neuron/amazon-eks-node-al2023-x86_64-neuron-1.37-v20261101/image_id":     "ami-a4",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.37-v20261101/image_id":   "ami-a5",
		}},
		{name: "al2023@v20261115 1.37", paths: al2023Paths("1.37", "v20261115"), want: map[string]string{
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20261115/image_id": "ami-a2",
			"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.37-v20261115/image_id":       "ami-a6",
		}},
		{name: "al2023@latest 1.36", paths: al2023Paths("1.36", "latest"), want: map[string]string{
			"/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/recommended/image_id": "ami-a7",
		}},
		{name: "al2023@v20261101 1.36", paths: al2023Paths("1.36", "v20261101"), want: map[string]string{
			"/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.36-v20261101/image_id": "ami-a7",
		}},
		{name: "al2@latest 1.32", paths: al2Paths("1.32", "latest"), want: map[string]string{
			"/aws/service/eks/optimized-ami/1.32/amazon-linux-2/recommended/image_id":       "ami-b1",
			"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/recommended/image_id": "ami-b2",
			"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/recommended/image_id":   "ami-b3",
		}},
		{name: "al2@v20261101 1.32", paths: al2Paths("1.32", "v20261101"), want: map[string]string{
			"/aws/service/eks/optimized-ami/1.32/amazon-linux-2/amazon-eks-node-1.32-v20261101/image_id":             "ami-b1",
			"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/amazon-eks-arm64-node-1.32-v20261101/image_id": "ami-b2",
			"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/amazon-eks-gpu-node-1.32-v20261101/image_id":     "ami-b3",
		}},
		{name: "bottlerocket@latest 1.37", paths: bottlerocketPaths("1.37", "latest"), want: map[string]string{
			"/aws/service/bottlerocket/aws-k8s-1.37/x86_64/latest/image_id":        "ami-c1",
			"/aws/service/bottlerocket/aws-k8s-1.37/arm64/latest/image_id":         "ami-c3",
			"/aws/service/bottlerocket/aws-k8s-1.37-nvidia/x86_64/latest/image_id": "ami-c2",
			"/aws/service/bottlerocket/aws-k8s-1.37-nvidia/arm64/latest/image_id":  "ami-c4",
		}},
		{name: "bottlerocket@v1.30.0 1.37", paths: bottlerocketPaths("1.37", "v1.30.0"), want: map[string]string{
			"/aws/service/bottlerocket/aws-k8s-1.37/x86_64/1.30.0/image_id":        "ami-c1",
			"/aws/service/bottlerocket/aws-k8s-1.37/arm64/1.30.0/image_id":         "ami-c3",
			"/aws/service/bottlerocket/aws-k8s-1.37-nvidia/x86_64/1.30.0/image_id": "ami-c2",
			"/aws/service/bottlerocket/aws-k8s-1.37-nvidia/arm64/1.30.0/image_id":  "ami-c4",
		}},
		{name: "bottlerocket@1.9.0 1.37", paths: bottlerocketPaths("1.37", "1.9.0"), want: map[string]string{
			"/aws/service/bottlerocket/aws-k8s-1.37/x86_64/1.9.0/image_id": "ami-c0",
		}},
		{name: "bottlerocket@latest 1.36", paths: bottlerocketPaths("1.36", "latest"), want: map[string]string{}},
	}
	asked := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, p := range tt.paths {
				asked[p] = true
				v, err := get(t, c, p)
				if err != nil {
					if code, _ := accounttest.APIError(t, err); code != "ParameterNotFound" {
						t.Errorf("%s: %v, want ParameterNotFound", p, err)
					}
					continue
				}
				got[p] = v
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
		})
	}
	var extra []string
	for _, n := range svc.PublicNames() {
		if !asked[n] {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		t.Errorf("published names the provider never asks for: %q", extra)
	}
}

func TestPublishRelease(t *testing.T) {
	ctx := context.Background()
	svc, c := start(t, fixedHost())
	const rec = "/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/recommended/image_id"
	first := []ssm.EKSImage{{Family: "al2023", Arch: "x86_64", Variant: "standard", KubernetesMinor: "1.37", Release: "v20261101", ImageID: "ami-a1"}}
	if err := svc.SetEKSImages(first); err != nil {
		t.Fatalf("SetEKSImages: %v", err)
	}
	if err := svc.SetEKSImages(first); err != nil { // unchanged: no new version
		t.Fatalf("SetEKSImages again: %v", err)
	}
	second := append(first, ssm.EKSImage{Family: "al2023", Arch: "x86_64", Variant: "standard", KubernetesMinor: "1.37", Release: "v20261115", ImageID: "ami-a2"})
	if err := svc.SetEKSImages(second); err != nil {
		t.Fatalf("SetEKSImages release: %v", err)
	}
	out, err := c.GetParameter(ctx, &sdk.GetParameterInput{Name: aws.String(rec)})
	if err != nil {
		t.Fatalf("GetParameter: %v", err)
	}
	p := out.Parameter
	got := fmt.Sprintf("%s %s v%d %s %s %s", aws.ToString(p.Value), p.Type, p.Version, aws.ToString(p.ARN), aws.ToString(p.DataType), aws.ToTime(p.LastModifiedDate).UTC())
	want := "ami-a2 String v2 arn:aws:ssm:eu-west-2::parameter" + rec + " text " + t0.String()
	if got != want {
		t.Errorf("recommended =\n %s\nwant\n %s", got, want)
	}
	if v, err := get(t, c, rec+":1"); err != nil || v != "ami-a1" {
		t.Errorf("%s:1 = %q, %v; want ami-a1", rec, v, err)
	}
	var names []string
	pg := sdk.NewGetParametersByPathPaginator(c, &sdk.GetParametersByPathInput{
		Path: aws.String("/aws/service/eks/optimized-ami/1.37"), Recursive: aws.Bool(true), MaxResults: aws.Int32(1)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			t.Fatalf("GetParametersByPath: %v", err)
		}
		for _, p := range page.Parameters {
			names = append(names, aws.ToString(p.Name))
		}
	}
	wantNames := []string{
		"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20261101/image_id",
		"/aws/service/eks/optimized-ami/1.37/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.37-v20261115/image_id",
		rec,
	}
	sort.Strings(wantNames)
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("by path (-want +got):\n%s", diff)
	}
	// The account's own tree never lists AWS's.
	root, err := c.GetParametersByPath(ctx, &sdk.GetParametersByPathInput{Path: aws.String("/"), Recursive: aws.Bool(true)})
	if err != nil || len(root.Parameters) != 0 {
		t.Errorf("GetParametersByPath / = %d parameters, %v; want none", len(root.Parameters), err)
	}
	if err := svc.SetPublicParameters([]ssm.PublicParameter{{Name: "/mine/x", Value: "y"}}); err == nil {
		t.Errorf("SetPublicParameters accepted a name outside /aws/")
	}
}
