package replay

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Catalog is what the lab can represent of AWS: the regions it has data for, their zones,
// and the instance types each offers.
type Catalog interface {
	// Zones are the region's zone names; false when the lab has no data for the region.
	Zones(region string) ([]string, bool)
	// HasInstanceType reports whether the region's catalog holds the type.
	HasInstanceType(region, name string) bool
	// Regions are the regions the lab has data for.
	Regions() []string
}

// Report is what Validate found: the gaps refuse the replay; the notes say what it leaves out.
type Report struct {
	Region string
	Gaps   []string
	Notes  []string
}

// Given is what the command line says for what a bundle may not (a report's pasted
// manifests carry no region label and no karpenter.yaml); empty fields are the bundle's.
type Given struct {
	Region      string
	Zones       []string
	ClusterName string
}

// Validate lists everything in the bundle the lab cannot represent: kinds it does not
// replay, Karpenter objects of another API version, a region it has no data for, zones the
// region lacks, instance types outside its catalog, and images, subnets or security groups a
// NodeClaim uses that its EC2NodeClass does not name.
func Validate(b *Bundle, cat Catalog, given Given) Report {
	var r Report
	left := map[string]int{}
	for _, o := range b.Objects {
		gvk := o.GroupVersionKind()
		switch {
		case replayedKinds[gvk]:
		case (gvk.Group == "karpenter.sh" || gvk.Group == "karpenter.k8s.aws") && gvk.Version != "v1":
			r.Gaps = append(r.Gaps, fmt.Sprintf("%s %s is %s: the lab replays Karpenter's v1 objects only (Karpenter 1.0 or later; migrate with Karpenter's v1 upgrade guide, then capture again)",
				gvk.Kind, o.GetName(), o.GetAPIVersion()))
		case leftOutKinds[gvk.Kind] != "":
			left[gvk.Kind]++
		default:
			r.Gaps = append(r.Gaps, fmt.Sprintf("%s %s (%s) is a kind the lab does not replay: take it out of the bundle", gvk.Kind, name(o), o.GetAPIVersion()))
		}
	}
	for kind, n := range left {
		r.Notes = append(r.Notes, fmt.Sprintf("%d %s left out: %s", n, kind, leftOutKinds[kind]))
	}
	r.Region = validateRegion(b, cat, given.Region, &r)
	sort.Strings(r.Notes)
	return r
}

// validateRegion finds the bundle's region (given, else its nodes' label, else Karpenter's
// AWS_REGION) and checks its zones, instance types and the EC2 resources its NodeClaims use.
func validateRegion(b *Bundle, cat Catalog, given string, r *Report) string {
	regions := map[string]bool{}
	for _, o := range b.ofKind("", "Node") {
		if reg := o.GetLabels()[corev1.LabelTopologyRegion]; reg != "" {
			regions[reg] = true
		}
	}
	named := slices.Sorted(maps.Keys(regions))
	region := given
	switch {
	case len(named) > 1:
		r.Gaps = append(r.Gaps, fmt.Sprintf("the nodes name %d regions %v (label %s): a replay needs one; take the other region's nodes out", len(named), named, corev1.LabelTopologyRegion))
		return ""
	case given != "" && len(named) == 1 && named[0] != given:
		r.Gaps = append(r.Gaps, fmt.Sprintf("--region %s, but the nodes are in %s (label %s): drop --region, or name %s", given, named[0], corev1.LabelTopologyRegion, named[0]))
		return ""
	case region == "" && len(named) == 1:
		region = named[0]
	case region == "":
		region = KarpenterEnv(b)["AWS_REGION"]
	}
	if region == "" {
		r.Gaps = append(r.Gaps, fmt.Sprintf("no region anywhere: no node carries label %s and no karpenter.yaml sets AWS_REGION; name it with --region (the lab has %v)", corev1.LabelTopologyRegion, cat.Regions()))
		return ""
	}
	zones, ok := cat.Zones(region)
	if !ok {
		r.Gaps = append(r.Gaps, fmt.Sprintf("region %s: the lab has no data for it; it has %v", region, cat.Regions()))
		return region
	}
	for _, o := range append(b.ofKind("", "Node"), b.ofKind("karpenter.sh", "NodeClaim")...) {
		l := o.GetLabels()
		if z := l[corev1.LabelTopologyZone]; z != "" && !slices.Contains(zones, z) {
			r.Gaps = append(r.Gaps, fmt.Sprintf("%s %s is in zone %s, which %s does not have (it has %v)", o.GetKind(), o.GetName(), z, region, zones))
		}
		if t := l[corev1.LabelInstanceTypeStable]; t != "" && !cat.HasInstanceType(region, t) {
			r.Gaps = append(r.Gaps, fmt.Sprintf("%s %s is a %s, which the lab's catalog of %s does not hold", o.GetKind(), o.GetName(), t, region))
		}
	}
	r.Gaps = append(r.Gaps, b.unnamedEC2()...)
	return region
}

// unnamedEC2 lists the images, subnets and security groups NodeClaims use that no
// EC2NodeClass's status names: the lab would not know them, and every node would drift.
func (b *Bundle) unnamedEC2() []string {
	classes := map[string]*unstructured.Unstructured{}
	for _, c := range b.ofKind("karpenter.k8s.aws", "EC2NodeClass") {
		classes[c.GetName()] = c
	}
	var gaps []string
	for _, nc := range b.ofKind("karpenter.sh", "NodeClaim") {
		ref, _, _ := unstructured.NestedString(nc.Object, "spec", "nodeClassRef", "name")
		class, ok := classes[ref]
		if !ok {
			gaps = append(gaps, fmt.Sprintf("NodeClaim %s names EC2NodeClass %q, which the bundle lacks", nc.GetName(), ref))
			continue
		}
		image, _, _ := unstructured.NestedString(nc.Object, "status", "imageID")
		if image != "" && !slices.Contains(statusIDs(class, "amis"), image) {
			gaps = append(gaps, fmt.Sprintf("NodeClaim %s runs image %s, which EC2NodeClass %s's status.amis does not name", nc.GetName(), image, ref))
		}
		for _, field := range []string{"subnets", "securityGroups"} {
			if len(statusIDs(class, field)) == 0 {
				gaps = append(gaps, fmt.Sprintf("EC2NodeClass %s has no status.%s: capture it with its status (kubectl get -o yaml keeps it)", ref, field))
			}
		}
	}
	return dedupe(gaps)
}

// statusIDs are the IDs of an EC2NodeClass's status list (amis, subnets, securityGroups).
func statusIDs(class *unstructured.Unstructured, field string) []string {
	list, _, _ := unstructured.NestedSlice(class.Object, "status", field)
	var ids []string
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			if id, ok := m["id"].(string); ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// ofKind are the bundle's objects of a group and kind.
func (b *Bundle) ofKind(group, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range b.Objects {
		if gvk := o.GroupVersionKind(); gvk.Group == group && gvk.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func name(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func dedupe(list []string) []string {
	slices.Sort(list)
	return slices.Compact(list)
}
