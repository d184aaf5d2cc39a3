package service

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

// Import is what a replay brings into the account from a captured one: its network, its
// images and its running instances, with their real IDs, zones, launch times and tags.
type Import struct {
	VPCs           []ec2.VPC           `json:"vpcs,omitempty"`
	Subnets        []ec2.Subnet        `json:"subnets,omitempty"`
	SecurityGroups []ec2.SecurityGroup `json:"securityGroups,omitempty"`
	Images         []ec2.Image         `json:"images,omitempty"`
	Instances      []ImportedInstance  `json:"instances,omitempty"`
}

// ImportedInstance is a running instance as captured. Its primary interface and root
// volume are made with it, as a launch makes them.
type ImportedInstance struct {
	ID             string    `json:"id"`
	InstanceType   string    `json:"instanceType"`
	Zone           string    `json:"zone"`
	SubnetID       string    `json:"subnetId"`
	SecurityGroups []string  `json:"securityGroups"`
	ImageID        string    `json:"imageId"`
	PrivateIP      string    `json:"privateIp"`
	PrivateDNS     string    `json:"privateDns,omitempty"`
	CapacityType   string    `json:"capacityType"` // on-demand or spot
	LaunchTime     time.Time `json:"launchTime"`
	Tags           []ec2.Tag `json:"tags,omitempty"`
	RootVolumeGiB  int32     `json:"rootVolumeGiB,omitempty"`
	RootVolumeType string    `json:"rootVolumeType,omitempty"`
	Encrypted      bool      `json:"encrypted,omitempty"`
}

// ImportCaller is whom the audit trail names for what an import brought: nobody launched it
// in this account.
const ImportCaller = "replay"

// ImportError lists everything an import would not represent; nothing was imported.
type ImportError struct{ Problems []string }

func (e *ImportError) Error() string {
	return fmt.Sprintf("nothing imported: %d problems: %s", len(e.Problems), strings.Join(e.Problems, "; "))
}

// Import adds what a replay brings, all or nothing: it checks every record first (IDs well
// formed and free, zones the account's, subnets in their VPC's range, instance types in the
// catalog, what an instance names present), then creates them. The instances run from the
// start; billing starts now, not at their launch time. One audit event records it.
func (s *Service) Import(imp Import) error {
	now := s.acct.Now().UTC()
	s.mu.Lock()
	if problems := s.checkImport(imp); len(problems) > 0 {
		s.mu.Unlock()
		return &ImportError{Problems: problems}
	}
	var ids []string
	ids = append(ids, importRecords(s, imp.VPCs, s.model.VPCs, bucketVPCs, func(v *ec2.VPC, seq uint64) string {
		v.Seq = seq
		return v.ID
	})...)
	ids = append(ids, importRecords(s, imp.Subnets, s.model.Subnets, bucketSubnets, func(sn *ec2.Subnet, seq uint64) string {
		sn.Seq, sn.ZoneID = seq, s.mustZoneID(sn.Zone)
		return sn.ID
	})...)
	ids = append(ids, importRecords(s, imp.SecurityGroups, s.model.Groups, bucketGroups, func(g *ec2.SecurityGroup, seq uint64) string {
		g.Seq = seq
		return g.ID
	})...)
	ids = append(ids, importRecords(s, imp.Images, s.model.Images, bucketImages, func(im *ec2.Image, seq uint64) string {
		im.Seq = seq
		return im.ID
	})...)
	for _, ii := range imp.Instances {
		s.importInstance(ii, now)
		ids = append(ids, ii.ID)
	}
	republish := s.supersedeEKSImages(imp.Images)
	supersedeTags(s, imp.Subnets, s.model.Subnets, bucketSubnets, func(sn *ec2.Subnet) (string, *[]ec2.Tag) { return sn.ID, &sn.Tags })
	supersedeTags(s, imp.SecurityGroups, s.model.Groups, bucketGroups, func(g *ec2.SecurityGroup) (string, *[]ec2.Tag) { return g.ID, &g.Tags })
	done := s.acct.Record(&trail.AuditEvent{Time: now, Service: "ec2", Action: "ImportResources", Caller: ImportCaller,
		Created: ids, Parameters: map[string]string{"Instances": fmt.Sprint(len(imp.Instances))}})
	wait := s.flushLocked()
	s.mu.Unlock()
	err := errors.Join(<-wait, <-done)
	if republish {
		err = errors.Join(err, s.PublishImageParameters())
	}
	return err
}

// CheckImport lists what Import would refuse of imp, changing nothing: a replay finds every
// problem before it starts a lab.
func (s *Service) CheckImport(imp Import) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.checkImport(imp)
}

// supersedeTags takes the imported records' tags off the account's own records of the
// kind: a selector by tag (karpenter.sh/discovery) then finds the captured subnets and
// security groups alone, as it did in the captured account, and nothing drifts for a
// security group the lab's account made. Callers hold s.mu.
func supersedeTags[T any](s *Service, imported []T, own map[string]*T, bucket string, fields func(*T) (string, *[]ec2.Tag)) {
	taken, ids := map[ec2.Tag]bool{}, map[string]bool{}
	for i := range imported {
		id, tags := fields(&imported[i])
		ids[id] = true
		for _, t := range *tags {
			if t.Key != "Name" {
				taken[t] = true
			}
		}
	}
	for id, r := range own {
		_, tags := fields(r)
		if ids[id] || !slices.ContainsFunc(*tags, func(t ec2.Tag) bool { return taken[t] }) {
			continue
		}
		*tags = slices.DeleteFunc(*tags, func(t ec2.Tag) bool { return taken[t] })
		s.save(bucket, id, r)
	}
}

// supersedeEKSImages makes imported EKS-optimized images (Amazon's owner, an EKS AMI name)
// what SSM's public parameters name, as they did when the account was captured: the
// account's own images of the same family, architecture, variant and Kubernetes minor go.
// It reports whether the parameters must be published again. Callers hold s.mu.
func (s *Service) supersedeEKSImages(imported []ec2.Image) bool {
	type key struct{ family, arch, variant, k8s string }
	keys := map[key]bool{}
	mine := map[string]bool{}
	for _, im := range imported {
		if e, ok := parseEKSImage(im.Name); ok && im.OwnerID == EKSImageOwner {
			keys[key{e.Family, e.Arch, e.Variant, e.K8s}] = true
			mine[im.ID] = true
		}
	}
	if len(keys) == 0 {
		return false
	}
	for id, im := range s.model.Images {
		if e, ok := parseEKSImage(im.Name); ok && !mine[id] && im.OwnerID == EKSImageOwner && keys[key{e.Family, e.Arch, e.Variant, e.K8s}] {
			delete(s.model.Images, id)
			s.remove(bucketImages, id)
		}
	}
	return true
}

// Without is imp less the VPCs, subnets, security groups and images has says the account
// holds already, by ID (a capture of a lab holds the lab account's own).
func (imp Import) Without(has func(id string) bool) Import {
	imp.VPCs = slices.DeleteFunc(slices.Clone(imp.VPCs), func(v ec2.VPC) bool { return has(v.ID) })
	imp.Subnets = slices.DeleteFunc(slices.Clone(imp.Subnets), func(v ec2.Subnet) bool { return has(v.ID) })
	imp.SecurityGroups = slices.DeleteFunc(slices.Clone(imp.SecurityGroups), func(v ec2.SecurityGroup) bool { return has(v.ID) })
	imp.Images = slices.DeleteFunc(slices.Clone(imp.Images), func(v ec2.Image) bool { return has(v.ID) })
	return imp
}

// Has reports whether the account holds a resource with this ID.
func (s *Service) Has(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idInUse(id)
}

// importRecords adds checked records of one kind to the model and the state file, each a
// copy; prep gives it the account's next sequence number (and what else it derives) and
// returns its ID. Callers hold s.mu.
func importRecords[T any](s *Service, records []T, into map[string]*T, bucket string, prep func(r *T, seq uint64) string) []string {
	var ids []string
	for i := range records {
		r := records[i]
		id := prep(&r, s.nextSeq())
		into[id] = &r
		s.save(bucket, id, &r)
		ids = append(ids, id)
	}
	return ids
}

// mustZoneID is a checked zone's ID.
func (s *Service) mustZoneID(zone string) string {
	id, _ := s.zoneID(zone)
	return id
}

// checkImport lists what the account cannot take of imp. Callers hold s.mu.
func (s *Service) checkImport(imp Import) []string {
	var problems []string
	fresh := map[string]bool{}
	id := func(kind, prefix, v string) bool {
		switch {
		case !strings.HasPrefix(v, prefix+"-") || len(v) < len(prefix)+2:
			problems = append(problems, fmt.Sprintf("%s %q: not a %s ID (%s-...)", kind, v, kind, prefix))
		case s.idInUse(v) || fresh[v]:
			problems = append(problems, fmt.Sprintf("%s %s exists already", kind, v))
		default:
			fresh[v] = true
			return true
		}
		return false
	}
	has := func(known map[string]bool, v string) bool { return known[v] || fresh[v] }
	vpcs, subnets, groups, images := map[string]bool{}, map[string]*ec2.Subnet{}, map[string]bool{}, map[string]bool{}
	for k := range s.model.VPCs {
		vpcs[k] = true
	}
	for k, sn := range s.model.Subnets {
		subnets[k] = sn
	}
	for k := range s.model.Groups {
		groups[k] = true
	}
	for k := range s.model.Images {
		images[k] = true
	}
	for _, v := range imp.VPCs {
		id("VPC", "vpc", v.ID)
		if _, size := ec2.SubnetRange(v.CIDR); size == 0 {
			problems = append(problems, fmt.Sprintf("VPC %s: CIDR %q is not an IPv4 range", v.ID, v.CIDR))
		}
	}
	for i, sn := range imp.Subnets {
		if id("subnet", "subnet", sn.ID) {
			subnets[sn.ID] = &imp.Subnets[i]
		}
		if _, ok := s.zoneID(sn.Zone); !ok {
			problems = append(problems, fmt.Sprintf("subnet %s is in zone %q, which the account's region %s does not have (it has %v)", sn.ID, sn.Zone, s.region, s.Zones()))
		}
		if !has(vpcs, sn.VpcID) {
			problems = append(problems, fmt.Sprintf("subnet %s names VPC %q, which is not imported", sn.ID, sn.VpcID))
		}
		if _, size := ec2.SubnetRange(sn.CIDR); size == 0 {
			problems = append(problems, fmt.Sprintf("subnet %s: CIDR %q is not an IPv4 range", sn.ID, sn.CIDR))
		}
	}
	for _, g := range imp.SecurityGroups {
		if id("security group", "sg", g.ID) {
			groups[g.ID] = true
		}
		if !has(vpcs, g.VpcID) {
			problems = append(problems, fmt.Sprintf("security group %s names VPC %q, which is not imported", g.ID, g.VpcID))
		}
	}
	for _, im := range imp.Images {
		if id("image", "ami", im.ID) {
			images[im.ID] = true
		}
		if im.Architecture != "x86_64" && im.Architecture != "arm64" {
			problems = append(problems, fmt.Sprintf("image %s: architecture %q: x86_64 or arm64", im.ID, im.Architecture))
		}
		if im.RootDeviceName == "" {
			problems = append(problems, fmt.Sprintf("image %s: no root device name (/dev/xvda)", im.ID))
		}
	}
	for _, in := range imp.Instances {
		problems = append(problems, s.checkImportedInstance(in, id, subnets, groups, images)...)
	}
	return problems
}

// checkImportedInstance lists what the account cannot take of one instance.
func (s *Service) checkImportedInstance(in ImportedInstance, id func(kind, prefix, v string) bool, subnets map[string]*ec2.Subnet, groups, images map[string]bool) []string {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("instance %s: ", in.ID)+fmt.Sprintf(format, args...))
	}
	id("instance", "i", in.ID)
	if s.types[in.InstanceType] == nil {
		bad("type %q is not in the catalog of %s", in.InstanceType, s.region)
	}
	if in.LaunchTime.IsZero() {
		// EC2 never answers an instance without one, and the SDKs cannot parse an empty time.
		bad("no launch time (a replay takes its Node's creation, else the capture's time)")
	} else if in.LaunchTime.After(s.acct.Now()) {
		bad("launch time %s is after the account's now (%s)", in.LaunchTime.UTC().Format(time.RFC3339), s.acct.Now().UTC().Format(time.RFC3339))
	}
	if in.CapacityType != "on-demand" && in.CapacityType != "spot" {
		bad("capacity type %q: on-demand or spot", in.CapacityType)
	}
	if !images[in.ImageID] {
		bad("image %q is neither the account's nor imported", in.ImageID)
	}
	sn := subnets[in.SubnetID]
	switch {
	case sn == nil:
		bad("subnet %q is neither the account's nor imported", in.SubnetID)
	case sn.Zone != in.Zone:
		bad("zone %s, but its subnet %s is in %s", in.Zone, sn.ID, sn.Zone)
	default:
		p, err := netip.ParsePrefix(sn.CIDR)
		a, aerr := netip.ParseAddr(in.PrivateIP)
		if err != nil || aerr != nil || !p.Contains(a) {
			bad("private IP %q is not in its subnet's %s", in.PrivateIP, sn.CIDR)
		}
	}
	for _, g := range in.SecurityGroups {
		if !groups[g] {
			bad("security group %q is neither the account's nor imported", g)
		}
	}
	if len(in.SecurityGroups) == 0 {
		bad("no security group")
	}
	return problems
}

// importInstance creates a checked instance, running, with its interface and root volume.
// Callers hold s.mu.
func (s *Service) importInstance(ii ImportedInstance, now time.Time) {
	sn := s.model.Subnets[ii.SubnetID]
	im := s.model.Images[ii.ImageID]
	zoneID := s.mustZoneID(ii.Zone)
	dns := ii.PrivateDNS
	if dns == "" {
		dns = s.privateDNS(ii.PrivateIP)
	}
	in := &ec2.Instance{
		Seq: s.nextSeq(), ID: ii.ID, ReservationID: s.newID("r"), OwnerID: s.account, Caller: ImportCaller,
		ImageID: ii.ImageID, InstanceType: ii.InstanceType, Architecture: im.Architecture, Zone: ii.Zone, ZoneID: zoneID,
		SubnetID: sn.ID, VpcID: sn.VpcID, PrivateIP: ii.PrivateIP, PrivateDNS: dns, SecurityGroups: slices.Clone(ii.SecurityGroups),
		RootDeviceName: im.RootDeviceName, Metadata: ec2.MetadataOptions{HTTPEndpoint: "enabled", HTTPTokens: "required", HTTPPutResponseHopLimit: 1},
		CapacityType: ii.CapacityType, Tags: slices.Clone(ii.Tags), State: ec2.StateRunning, LaunchTime: ii.LaunchTime.UTC(),
		RunningAt: ii.LaunchTime.UTC(), PricePerHour: s.price(ii.InstanceType, ii.Zone, ii.CapacityType),
	}
	if in.CapacityType == "spot" {
		in.SpotRequestID = s.newID("sir")
	}
	s.model.MarkIP(sn.ID, ii.PrivateIP)
	eni := &ec2.NetworkInterface{Seq: s.nextSeq(), ID: s.newID("eni"), SubnetID: sn.ID, VpcID: sn.VpcID, Zone: ii.Zone, ZoneID: zoneID,
		PrivateIP: ii.PrivateIP, PrivateDNS: dns, Groups: in.SecurityGroups, Status: "in-use", InstanceID: in.ID,
		DeleteOnTermination: true, AttachTime: in.LaunchTime, InterfaceType: "interface"}
	eni.MAC = macFor(eni.ID)
	eni.AttachmentID = "eni-attach-" + strings.TrimPrefix(s.newID("eni"), "eni-")
	s.model.ENIs[eni.ID] = eni
	s.save(bucketENIs, eni.ID, eni)
	in.ENIID = eni.ID
	size, typ := ii.RootVolumeGiB, ii.RootVolumeType
	if size == 0 {
		size = im.RootSizeGiB
	}
	if typ == "" {
		typ = "gp3"
	}
	v := &ec2.Volume{Seq: s.nextSeq(), ID: s.newID("vol"), Zone: ii.Zone, ZoneID: zoneID, Type: typ, SizeGiB: size, Encrypted: ii.Encrypted,
		SnapshotID: im.RootSnapshotID, State: "in-use", CreateTime: in.LaunchTime, InstanceID: in.ID, Device: im.RootDeviceName,
		DeleteOnTermination: true, AttachTime: in.LaunchTime, Tags: slices.Clone(ii.Tags)}
	s.model.Volumes[v.ID] = v
	s.save(bucketVolumes, v.ID, v)
	in.Volumes = []ec2.AttachedVolume{{DeviceName: v.Device, VolumeID: v.ID, DeleteOnTermination: true, AttachTime: in.LaunchTime}}
	s.model.Instances[in.ID] = in
	s.model.InstTags.Add(in.ID, in.Tags)
	s.save(bucketInstances, in.ID, in)
	encrypted := v.Encrypted
	s.startLedger(&billing.LedgerEntry{ResourceID: v.ID, ResourceType: "volume", Type: v.Type, SizeGiB: v.SizeGiB, Encrypted: &encrypted,
		Zone: v.Zone, InstanceID: in.ID, PricePerHour: billing.VolumeHourly(v.Type, v.SizeGiB), Started: now, Tags: ec2.TagsMap(v.Tags), Caller: ImportCaller})
	s.startLedger(&billing.LedgerEntry{ResourceID: in.ID, ResourceType: "instance", Type: in.InstanceType, CapacityType: in.CapacityType,
		Zone: in.Zone, PricePerHour: in.PricePerHour, Started: now, Tags: ec2.TagsMap(in.Tags), Caller: ImportCaller})
}
