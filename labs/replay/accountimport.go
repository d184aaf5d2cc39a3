package replay

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karplab/karplab/fakeec2"
	model "github.com/karplab/karplab/fakeec2/ec2"
)

// AccountImport is what the lab's account must hold for the bundle's nodes to be adopted: the
// captured network, images and running instances with their real IDs. It takes them from the
// bundle's aws/*.json where the capture has them; otherwise it derives them from what the
// EC2NodeClasses resolved (their status) and what the Nodes say (provider ID, type, zone,
// address, capacity type), tagging each Karpenter instance as Karpenter would have. cluster
// is the EKS cluster's name the tags carry.
func AccountImport(b *Bundle, cluster string) (fakeec2.Import, error) {
	a := &importer{b: b, cluster: cluster, subnets: map[string]*model.Subnet{}, groups: map[string]*model.SecurityGroup{},
		images: map[string]*model.Image{}, vpcs: map[string]*model.VPC{}, ips: map[string][]netip.Addr{}}
	a.fromAWS()
	a.fromClasses()
	claims := map[string]*unstructured.Unstructured{}
	for _, nc := range b.ofKind("karpenter.sh", "NodeClaim") {
		if pid, _, _ := unstructured.NestedString(nc.Object, "status", "providerID"); pid != "" {
			claims[pid] = nc
		}
	}
	captured := map[string]ec2types.Instance{}
	for _, in := range b.AWS.Instances {
		if in.State != nil && (in.State.Name == ec2types.InstanceStateNameRunning || in.State.Name == ec2types.InstanceStateNamePending) {
			captured[aws.ToString(in.InstanceId)] = in
		}
	}
	var imp fakeec2.Import
	var errs []error
	seen := map[string]bool{}
	for _, n := range b.ofKind("", "Node") {
		pid, _, _ := unstructured.NestedString(n.Object, "spec", "providerID")
		id := instanceIDOf(pid)
		if id == "" {
			continue // not an EC2 node (Fargate, a kind node): nothing for the account to hold
		}
		in, err := a.instance(id, n, claims[pid], captured)
		if err != nil {
			errs = append(errs, err) // every node's problem, not the first's
			continue
		}
		seen[id] = true
		imp.Instances = append(imp.Instances, in)
	}
	// The account's instances no node knows belong to the incident too (a leak, a launch
	// still booting).
	for id, in := range captured {
		if !seen[id] {
			imp.Instances = append(imp.Instances, a.fromCaptured(in))
		}
	}
	sort.Slice(imp.Instances, func(i, j int) bool { return imp.Instances[i].ID < imp.Instances[j].ID })
	a.fillCIDRs()
	for _, v := range a.vpcs {
		imp.VPCs = append(imp.VPCs, *v)
	}
	for _, sn := range a.subnets {
		imp.Subnets = append(imp.Subnets, *sn)
	}
	for _, g := range a.groups {
		imp.SecurityGroups = append(imp.SecurityGroups, *g)
	}
	for _, im := range a.images {
		imp.Images = append(imp.Images, *im)
	}
	sort.Slice(imp.VPCs, func(i, j int) bool { return imp.VPCs[i].ID < imp.VPCs[j].ID })
	sort.Slice(imp.Subnets, func(i, j int) bool { return imp.Subnets[i].ID < imp.Subnets[j].ID })
	sort.Slice(imp.SecurityGroups, func(i, j int) bool { return imp.SecurityGroups[i].ID < imp.SecurityGroups[j].ID })
	sort.Slice(imp.Images, func(i, j int) bool { return imp.Images[i].ID < imp.Images[j].ID })
	return imp, errors.Join(errs...)
}

type importer struct {
	b       *Bundle
	cluster string
	vpcs    map[string]*model.VPC
	subnets map[string]*model.Subnet
	groups  map[string]*model.SecurityGroup
	images  map[string]*model.Image
	ips     map[string][]netip.Addr // subnet -> addresses its instances hold, for a derived CIDR
}

func tagsOf(tags []ec2types.Tag) []model.Tag {
	out := make([]model.Tag, 0, len(tags))
	for _, t := range tags {
		out = append(out, model.Tag{Key: aws.ToString(t.Key), Value: aws.ToString(t.Value)})
	}
	return out
}

// fromAWS takes the captured network and images.
func (a *importer) fromAWS() {
	for _, sn := range a.b.AWS.Subnets {
		vpc := aws.ToString(sn.VpcId)
		a.vpc(vpc)
		a.subnets[aws.ToString(sn.SubnetId)] = &model.Subnet{ID: aws.ToString(sn.SubnetId), VpcID: vpc, Zone: aws.ToString(sn.AvailabilityZone),
			CIDR: aws.ToString(sn.CidrBlock), Tags: tagsOf(sn.Tags)}
	}
	for _, g := range a.b.AWS.SecurityGroups {
		a.vpc(aws.ToString(g.VpcId))
		a.groups[aws.ToString(g.GroupId)] = &model.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName),
			Description: aws.ToString(g.Description), VpcID: aws.ToString(g.VpcId), Tags: tagsOf(g.Tags)}
	}
	for _, im := range a.b.AWS.Images {
		created, _ := time.Parse(time.RFC3339, aws.ToString(im.CreationDate))
		var size int32 = 20
		for _, d := range im.BlockDeviceMappings {
			if d.Ebs != nil && aws.ToString(d.DeviceName) == aws.ToString(im.RootDeviceName) {
				size = aws.ToInt32(d.Ebs.VolumeSize)
			}
		}
		a.images[aws.ToString(im.ImageId)] = &model.Image{ID: aws.ToString(im.ImageId), Name: aws.ToString(im.Name), Description: aws.ToString(im.Description),
			Architecture: string(im.Architecture), OwnerID: aws.ToString(im.OwnerId), OwnerAlias: aws.ToString(im.ImageOwnerAlias), CreationDate: created,
			RootDeviceName: orDefault(aws.ToString(im.RootDeviceName), "/dev/xvda"), RootSizeGiB: size, Tags: tagsOf(im.Tags)}
	}
}

// fromClasses adds what the EC2NodeClasses resolved that the AWS side lacks.
func (a *importer) fromClasses() {
	for _, c := range a.b.ofKind("karpenter.k8s.aws", "EC2NodeClass") {
		// What the class resolved, derived, carries the tags it selects by: in the lab its
		// selector must find them again, or every node drifts.
		for _, m := range statusList(c, "subnets") {
			if id := str(m["id"]); id != "" && a.subnets[id] == nil {
				a.subnets[id] = &model.Subnet{ID: id, VpcID: a.vpc(""), Zone: str(m["zone"]), Tags: selectorTags(c, "subnetSelectorTerms")}
			}
		}
		for _, m := range statusList(c, "securityGroups") {
			if id := str(m["id"]); id != "" && a.groups[id] == nil {
				a.groups[id] = &model.SecurityGroup{ID: id, Name: orDefault(str(m["name"]), id), VpcID: a.vpc(""), Tags: selectorTags(c, "securityGroupSelectorTerms")}
			}
		}
		alias := hasAliasTerm(c)
		for _, m := range statusList(c, "amis") {
			id := str(m["id"])
			if id != "" && a.images[id] == nil {
				a.images[id] = derivedImage(id, str(m["name"]))
			}
			if im := a.images[id]; im != nil && alias {
				// An alias resolves through SSM's public parameters to Amazon's images: the
				// account must name these again, or every node drifts.
				im.OwnerID = model.EKSImageOwner
			}
		}
	}
}

// vpc registers a VPC by ID; "" is the one a derived network is put in.
func (a *importer) vpc(id string) string {
	if id == "" {
		for _, v := range a.vpcs {
			return v.ID // the captured one: derived subnets join it
		}
		sum := sha256.Sum256([]byte(a.cluster))
		id = fmt.Sprintf("vpc-%x", sum[:9])[:21]
	}
	if a.vpcs[id] == nil {
		a.vpcs[id] = &model.VPC{ID: id}
	}
	return id
}

// selectorTags are the tags an EC2NodeClass's selector terms (spec.<field>) ask for; a
// wildcard value becomes "*"'s stand-in "owned".
func selectorTags(c *unstructured.Unstructured, field string) []model.Tag {
	terms, _, _ := unstructured.NestedSlice(c.Object, "spec", field)
	var out []model.Tag
	for _, t := range terms {
		m, _ := t.(map[string]any)
		tags, _ := m["tags"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			v := str(tags[k])
			if v == "*" {
				v = "owned"
			}
			out = append(out, model.Tag{Key: k, Value: v})
		}
	}
	return out
}

// hasAliasTerm reports whether an EC2NodeClass selects its AMIs by alias (al2023@latest).
func hasAliasTerm(c *unstructured.Unstructured) bool {
	terms, _, _ := unstructured.NestedSlice(c.Object, "spec", "amiSelectorTerms")
	for _, t := range terms {
		if m, ok := t.(map[string]any); ok && str(m["alias"]) != "" {
			return true
		}
	}
	return false
}

func derivedImage(id, name string) *model.Image {
	arch := "x86_64"
	if strings.Contains(name, "arm64") || strings.Contains(name, "aarch64") {
		arch = "arm64"
	}
	return &model.Image{ID: id, Name: orDefault(name, id), Architecture: arch, RootDeviceName: "/dev/xvda", RootSizeGiB: 20}
}

// instance is one node's instance: as captured, or derived from the node and its NodeClaim.
func (a *importer) instance(id string, n, claim *unstructured.Unstructured, captured map[string]ec2types.Instance) (fakeec2.ImportedInstance, error) {
	if in, ok := captured[id]; ok {
		return a.fromCaptured(in), nil
	}
	l := n.GetLabels()
	in := fakeec2.ImportedInstance{ID: id, InstanceType: l[corev1.LabelInstanceTypeStable], Zone: l[corev1.LabelTopologyZone],
		CapacityType: "on-demand", LaunchTime: n.GetCreationTimestamp().UTC()}
	if l["karpenter.sh/capacity-type"] == "spot" {
		in.CapacityType = "spot"
	}
	addrs, _, _ := unstructured.NestedSlice(n.Object, "status", "addresses")
	for _, x := range addrs {
		if m, ok := x.(map[string]any); ok && m["type"] == string(corev1.NodeInternalIP) {
			in.PrivateIP = str(m["address"])
		}
		if m, ok := x.(map[string]any); ok && m["type"] == string(corev1.NodeInternalDNS) {
			in.PrivateDNS = str(m["address"])
		}
	}
	if in.PrivateDNS == "" {
		in.PrivateDNS = n.GetName() // the lab's kubelet names a node by its instance's private DNS name
	}
	in.SubnetID = a.subnetFor(in.Zone, in.PrivateIP)
	if in.SubnetID == "" {
		return in, fmt.Errorf("node %s is in zone %s, where no captured subnet or EC2NodeClass status.subnets is: capture with --aws, or with the EC2NodeClasses' status", n.GetName(), in.Zone)
	}
	if ip, err := netip.ParseAddr(in.PrivateIP); err == nil {
		a.ips[in.SubnetID] = append(a.ips[in.SubnetID], ip)
	}
	class, pool := l["karpenter.k8s.aws/ec2nodeclass"], l["karpenter.sh/nodepool"]
	if claim != nil {
		in.ImageID, _, _ = unstructured.NestedString(claim.Object, "status", "imageID")
		if created := claim.GetCreationTimestamp(); !created.IsZero() {
			in.LaunchTime = created.UTC()
		}
	}
	if in.LaunchTime.IsZero() { // a pasted Node without creationTimestamp: it ran at the capture
		in.LaunchTime = a.b.CapturedAt.UTC()
	}
	for _, c := range a.b.ofKind("karpenter.k8s.aws", "EC2NodeClass") {
		if c.GetName() != class && class != "" {
			continue
		}
		for _, m := range statusList(c, "securityGroups") {
			in.SecurityGroups = append(in.SecurityGroups, str(m["id"]))
		}
		if amis := statusList(c, "amis"); in.ImageID == "" && len(amis) > 0 {
			in.ImageID = str(amis[0]["id"])
		}
		break
	}
	in.Tags = []model.Tag{{Key: "kubernetes.io/cluster/" + a.cluster, Value: "owned"}, {Key: "Name", Value: n.GetName()}}
	if pool != "" { // what Karpenter tags its instances with, and the tagging controller adds
		in.Tags = append(in.Tags, model.Tag{Key: "karpenter.sh/nodepool", Value: pool}, model.Tag{Key: "karpenter.k8s.aws/ec2nodeclass", Value: class},
			model.Tag{Key: "eks:eks-cluster-name", Value: a.cluster})
		if claim != nil {
			in.Tags = append(in.Tags, model.Tag{Key: "karpenter.sh/nodeclaim", Value: claim.GetName()})
		}
	}
	return in, nil
}

// subnetFor is the subnet of zone that holds ip: a captured one whose range holds it, else
// the first of the zone's whose range is not known yet ("" when the zone has none).
func (a *importer) subnetFor(zone, ip string) string {
	addr, _ := netip.ParseAddr(ip)
	best := ""
	for _, id := range slices.Sorted(maps.Keys(a.subnets)) {
		sn := a.subnets[id]
		if sn.Zone != zone {
			continue
		}
		if p, err := netip.ParsePrefix(sn.CIDR); err == nil && p.Contains(addr) {
			return id
		}
		if sn.CIDR == "" && best == "" {
			best = id
		}
	}
	return best
}

// fromCaptured is an instance as the aws CLI described it.
func (a *importer) fromCaptured(in ec2types.Instance) fakeec2.ImportedInstance {
	out := fakeec2.ImportedInstance{ID: aws.ToString(in.InstanceId), InstanceType: string(in.InstanceType), SubnetID: aws.ToString(in.SubnetId),
		ImageID: aws.ToString(in.ImageId), PrivateIP: aws.ToString(in.PrivateIpAddress), PrivateDNS: aws.ToString(in.PrivateDnsName),
		CapacityType: "on-demand", LaunchTime: aws.ToTime(in.LaunchTime).UTC(), Tags: tagsOf(in.Tags)}
	if in.Placement != nil {
		out.Zone = aws.ToString(in.Placement.AvailabilityZone)
	}
	if in.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		out.CapacityType = "spot"
	}
	for _, g := range in.SecurityGroups {
		out.SecurityGroups = append(out.SecurityGroups, aws.ToString(g.GroupId))
	}
	if a.images[out.ImageID] == nil && out.ImageID != "" {
		a.images[out.ImageID] = derivedImage(out.ImageID, "")
	}
	if ip, err := netip.ParseAddr(out.PrivateIP); err == nil {
		a.ips[out.SubnetID] = append(a.ips[out.SubnetID], ip)
	}
	return out
}

// fillCIDRs gives each subnet without a captured range the smallest one (/28 at least) that
// holds its instances' addresses, and each VPC the range of its subnets; derived, and so
// marked in the subnet's tags.
func (a *importer) fillCIDRs() {
	spare := 0
	byVPC := map[string][]netip.Prefix{}
	for _, id := range slices.Sorted(maps.Keys(a.subnets)) {
		sn := a.subnets[id]
		if sn.CIDR == "" {
			sn.CIDR = covering(a.ips[id], 28)
			if sn.CIDR == "" {
				sn.CIDR = fmt.Sprintf("100.64.%d.0/24", spare) // no address known: a range of its own
				spare++
			}
			sn.Tags = append(sn.Tags, model.Tag{Key: "karplab.dev/replay-derived", Value: "cidr"})
		}
		if p, err := netip.ParsePrefix(sn.CIDR); err == nil {
			byVPC[sn.VpcID] = append(byVPC[sn.VpcID], p)
		}
	}
	for id, v := range a.vpcs {
		var addrs []netip.Addr
		for _, p := range byVPC[id] {
			addrs = append(addrs, p.Addr(), lastAddr(p))
		}
		v.CIDR = orDefault(covering(addrs, 16), "10.0.0.0/16")
	}
}

// covering is the smallest prefix, no longer than maxBits, holding every address.
func covering(addrs []netip.Addr, maxBits int) string {
	if len(addrs) == 0 {
		return ""
	}
	for bits := maxBits; bits >= 8; bits-- {
		p, err := addrs[0].Prefix(bits)
		if err != nil {
			return ""
		}
		if !slices.ContainsFunc(addrs, func(x netip.Addr) bool { return !p.Contains(x) }) {
			return p.String()
		}
	}
	return ""
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) | host
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// instanceIDOf is the instance ID of an aws:///ZONE/i-... provider ID ("" for another).
func instanceIDOf(pid string) string {
	if !strings.HasPrefix(pid, "aws://") {
		return ""
	}
	id := pid[strings.LastIndex(pid, "/")+1:]
	if !strings.HasPrefix(id, "i-") {
		return ""
	}
	return id
}

func statusList(o *unstructured.Unstructured, field string) []map[string]any {
	list, _, _ := unstructured.NestedSlice(o.Object, "status", field)
	var out []map[string]any
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
