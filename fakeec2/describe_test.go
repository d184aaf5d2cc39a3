package fakeec2_test

import (
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	ec2model "github.com/karplab/karplab/fakeec2/ec2"
)

// launch runs count instances of typ in subnet with instance tags.
func (e *env) launch(typ, ami string, sn ec2types.Subnet, count int32, tags map[string]string) []string {
	e.t.Helper()
	var ts []ec2types.Tag
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ts = append(ts, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	in := &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceType(typ), MinCount: aws.Int32(count),
		MaxCount: aws.Int32(count), SubnetId: sn.SubnetId}
	if len(ts) > 0 {
		in.TagSpecifications = []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: ts}}
	}
	out, err := e.ec2.RunInstances(e.ctx, in)
	e.must(err)
	var ids []string
	for _, i := range out.Instances {
		ids = append(ids, aws.ToString(i.InstanceId))
	}
	return ids
}

func f(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// TestIntegrationDescribeInstancesFilters checks every DescribeInstances filter the issue
// names, and the others the emulator knows, against a small fleet.
func TestIntegrationDescribeInstancesFilters(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, arm64 := e.discover()
	a := e.launch("m6i.large", amd64, subnets[0], 1, map[string]string{"karpenter.sh/nodepool": "ziba-general", "team": "render"})[0]
	b := e.launch("c7g.xlarge", arm64, subnets[1], 1, map[string]string{"karpenter.sh/nodepool": "ziba-general"})[0]
	c := e.launch("r6i.large", amd64, subnets[2], 1, map[string]string{"karpenter.sh/nodepool": "batch"})[0]
	d := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	e.clock.Advance(5 * time.Second) // all running
	_, err := e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{d}})
	e.must(err)
	e.clock.Advance(5 * time.Second) // d terminated
	ins := e.describe(a)
	ip := aws.ToString(ins[0].PrivateIpAddress)
	eni := aws.ToString(ins[0].NetworkInterfaces[0].NetworkInterfaceId)
	vol := aws.ToString(ins[0].BlockDeviceMappings[0].Ebs.VolumeId)

	tests := []struct {
		name    string
		filters []ec2types.Filter
		want    []string
	}{
		{"no filter", nil, []string{a, b, c, d}},
		{"tag:KEY", []ec2types.Filter{f("tag:karpenter.sh/nodepool", "ziba-general")}, []string{a, b}},
		{"tag:KEY two values", []ec2types.Filter{f("tag:karpenter.sh/nodepool", "ziba-general", "batch")}, []string{a, b, c}},
		{"tag:KEY wildcard", []ec2types.Filter{f("tag:karpenter.sh/nodepool", "ziba-*")}, []string{a, b}},
		{"tag-key", []ec2types.Filter{f("tag-key", "team")}, []string{a}},
		{"tag-value", []ec2types.Filter{f("tag-value", "batch")}, []string{c}},
		{"instance-state-name running", []ec2types.Filter{f("instance-state-name", "running")}, []string{a, b, c}},
		{"instance-state-name terminated", []ec2types.Filter{f("instance-state-name", "terminated")}, []string{d}},
		{"instance-state-code", []ec2types.Filter{f("instance-state-code", "48")}, []string{d}},
		{"instance-id", []ec2types.Filter{f("instance-id", b, c)}, []string{b, c}},
		{"instance-type", []ec2types.Filter{f("instance-type", "m6i.large")}, []string{a, d}},
		{"instance-type wildcard", []ec2types.Filter{f("instance-type", "?7g.*")}, []string{b}},
		{"availability-zone", []ec2types.Filter{f("availability-zone", "eu-west-2b")}, []string{b}},
		{"subnet-id", []ec2types.Filter{f("subnet-id", aws.ToString(subnets[2].SubnetId))}, []string{c}},
		{"architecture", []ec2types.Filter{f("architecture", "arm64")}, []string{b}},
		{"image-id", []ec2types.Filter{f("image-id", arm64)}, []string{b}},
		{"private-ip-address", []ec2types.Filter{f("private-ip-address", ip)}, []string{a}},
		{"network-interface id", []ec2types.Filter{f("network-interface.network-interface-id", eni)}, []string{a}},
		{"block-device-mapping.volume-id", []ec2types.Filter{f("block-device-mapping.volume-id", vol)}, []string{a}},
		{"AND of filters", []ec2types.Filter{f("instance-type", "m6i.large"), f("instance-state-name", "running")}, []string{a}},
		{"no match", []ec2types.Filter{f("tag:karpenter.sh/nodepool", "nope")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{Filters: tt.filters})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range out.Reservations {
				for _, i := range r.Instances {
					got = append(got, aws.ToString(i.InstanceId))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIntegrationPagination pages DescribeInstances, DescribeInstanceTypes and
// DescribeSpotPriceHistory with the SDK's paginators and checks nothing is lost or repeated.
func TestIntegrationPagination(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	var want []string
	for i := 0; i < 4; i++ {
		want = append(want, e.launch("m5.large", amd64, subnets[i%3], 6, map[string]string{"karpenter.sh/nodepool": "ziba-general"})...)
	}
	e.launch("m5.large", amd64, subnets[0], 3, map[string]string{"karpenter.sh/nodepool": "other"})
	p := ec2.NewDescribeInstancesPaginator(e.ec2, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5),
		Filters: []ec2types.Filter{f("tag:karpenter.sh/nodepool", "ziba-general")}})
	var got []string
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(e.ctx)
		e.must(err)
		pages++
		for _, r := range out.Reservations {
			for _, i := range r.Instances {
				got = append(got, aws.ToString(i.InstanceId))
			}
		}
	}
	if pages != 5 {
		t.Errorf("%d pages of 5 for 24 instances, want 5", pages)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paged instances (-want +got):\n%s", diff)
	}

	tp := ec2.NewDescribeInstanceTypesPaginator(e.ec2, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(10)})
	seen := map[ec2types.InstanceType]bool{}
	for tp.HasMorePages() {
		out, err := tp.NextPage(e.ctx)
		e.must(err)
		for _, it := range out.InstanceTypes {
			if seen[it.InstanceType] {
				t.Errorf("%s on two pages", it.InstanceType)
			}
			seen[it.InstanceType] = true
		}
	}
	if want := len(ec2model.Catalog("eu-west-2")); len(seen) != want || want < 300 {
		t.Errorf("paged %d instance types, the region's catalog has %d; want the same, at least 300", len(seen), want)
	}

	sp := ec2.NewDescribeSpotPriceHistoryPaginator(e.ec2, &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX"}, StartTime: aws.Time(t0), MaxResults: aws.Int32(50)})
	rows := 0
	for sp.HasMorePages() {
		out, err := sp.NextPage(e.ctx)
		e.must(err)
		rows += len(out.SpotPriceHistory)
	}
	if rows != 3*len(seen) {
		t.Errorf("%d spot price rows, want one per type and zone (%d)", rows, 3*len(seen))
	}
}

// TestIntegrationDescribeOthers covers the other Describe calls' shapes and filters.
func TestIntegrationDescribeOthers(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, _ := e.discover()
	for _, s := range subnets {
		if aws.ToInt32(s.AvailableIpAddressCount) < 8000 || aws.ToString(s.CidrBlock) == "" || !aws.ToBool(s.DefaultForAz) {
			t.Errorf("subnet %+v", s)
		}
	}
	zones, err := e.ec2.DescribeAvailabilityZones(e.ctx, &ec2.DescribeAvailabilityZonesInput{})
	e.must(err)
	var names []string
	for _, z := range zones.AvailabilityZones {
		names = append(names, aws.ToString(z.ZoneName))
	}
	if diff := cmp.Diff([]string{"eu-west-2a", "eu-west-2b", "eu-west-2c"}, names); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
	sn, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{f("availability-zone", "eu-west-2d")}})
	e.must(err)
	if len(sn.Subnets) != 0 {
		t.Errorf("a subnet in eu-west-2d exists")
	}
	imgs, err := e.ec2.DescribeImages(e.ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{f("architecture", "arm64"), f("name", "*al2023*standard-1.37*")}})
	e.must(err)
	if len(imgs.Images) != 3 {
		t.Errorf("%d arm64 AL2023 1.37 images, want 3 releases", len(imgs.Images))
	}
	imgs, err = e.ec2.DescribeImages(e.ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}})
	e.must(err)
	if len(imgs.Images) != 0 {
		t.Errorf("images owned by self: %d", len(imgs.Images))
	}
	it, err := e.ec2.DescribeInstanceTypes(e.ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m6g.xlarge"}})
	e.must(err)
	got := it.InstanceTypes[0]
	if got.ProcessorInfo.SupportedArchitectures[0] != ec2types.ArchitectureTypeArm64 || aws.ToInt32(got.VCpuInfo.DefaultVCpus) != 4 ||
		aws.ToInt64(got.MemoryInfo.SizeInMiB) != 16384 || aws.ToInt32(got.NetworkInfo.MaximumNetworkInterfaces) != 4 {
		t.Errorf("m6g.xlarge: %+v %+v %+v", got.ProcessorInfo, got.VCpuInfo, got.MemoryInfo)
	}
	arm, err := e.ec2.DescribeInstanceTypes(e.ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(100), Filters: []ec2types.Filter{
		f("processor-info.supported-architecture", "arm64"), f("supported-virtualization-type", "hvm")}})
	e.must(err)
	for _, x := range arm.InstanceTypes {
		if x.ProcessorInfo.SupportedArchitectures[0] != "arm64" {
			t.Errorf("%s in the arm64 filter", x.InstanceType)
		}
	}
	offers, err := e.ec2.DescribeInstanceTypeOfferings(e.ctx, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone,
		Filters: []ec2types.Filter{f("instance-type", "c6i.large")}})
	e.must(err)
	if len(offers.InstanceTypeOfferings) != 3 {
		t.Errorf("c6i.large offered in %d zones, want 3", len(offers.InstanceTypeOfferings))
	}
	cr, err := e.ec2.DescribeCapacityReservations(e.ctx, &ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{f("state", "active")}})
	e.must(err)
	if len(cr.CapacityReservations) != 0 {
		t.Errorf("capacity reservations: %d", len(cr.CapacityReservations))
	}

	// Volumes, ENIs, status and user data of a running instance.
	e.createTemplate("lt-user-data", amd64, groups, false, ec2types.LaunchTemplateHttpTokensStateOptional)
	out, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1), InstanceType: "m5.large",
		LaunchTemplate: &ec2types.LaunchTemplateSpecification{LaunchTemplateName: aws.String("lt-user-data")}})
	e.must(err)
	id := aws.ToString(out.Instances[0].InstanceId)
	attr, err := e.ec2.DescribeInstanceAttribute(e.ctx, &ec2.DescribeInstanceAttributeInput{InstanceId: aws.String(id), Attribute: ec2types.InstanceAttributeNameUserData})
	e.must(err)
	if v := aws.ToString(attr.UserData.Value); v == "" || v[:4] != "IyEv" { // base64 of "#!/"
		t.Errorf("user data %q, want the template's base64 script", v)
	}
	vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{f("attachment.instance-id", id), f("encrypted", "false")}})
	e.must(err)
	if len(vols.Volumes) != 1 || aws.ToBool(vols.Volumes[0].Encrypted) {
		t.Errorf("unencrypted volume of %s not visible as such: %+v", id, vols.Volumes)
	}
	enis, err := e.ec2.DescribeNetworkInterfaces(e.ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{f("attachment.instance-id", id)}})
	e.must(err)
	if len(enis.NetworkInterfaces) != 1 || aws.ToString(enis.NetworkInterfaces[0].SubnetId) == "" || tagMap(enis.NetworkInterfaces[0].TagSet)["application"] != "ziba" {
		t.Errorf("ENI of %s: %+v", id, enis.NetworkInterfaces)
	}
	st, err := e.ec2.DescribeInstanceStatus(e.ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: []string{id}, IncludeAllInstances: aws.Bool(true)})
	e.must(err)
	if len(st.InstanceStatuses) != 1 || st.InstanceStatuses[0].InstanceState.Name != ec2types.InstanceStateNamePending {
		t.Errorf("status while pending: %+v", st.InstanceStatuses)
	}
	e.clock.Advance(3 * time.Second)
	st, err = e.ec2.DescribeInstanceStatus(e.ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: []string{id}})
	e.must(err)
	if len(st.InstanceStatuses) != 1 || st.InstanceStatuses[0].InstanceStatus.Status != ec2types.SummaryStatusOk {
		t.Errorf("status when running: %+v", st.InstanceStatuses)
	}
	vers, err := e.ec2.DescribeLaunchTemplateVersions(e.ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("lt-user-data"),
		Versions: []string{"$Latest"}})
	e.must(err)
	d := vers.LaunchTemplateVersions[0].LaunchTemplateData
	if aws.ToString(d.ImageId) != amd64 || aws.ToInt32(d.BlockDeviceMappings[0].Ebs.VolumeSize) != 80 || d.MetadataOptions.HttpTokens != "optional" ||
		len(d.TagSpecifications) != 3 || aws.ToString(d.IamInstanceProfile.Name) != "KarpenterNodeInstanceProfile-ziba" {
		t.Errorf("template data read back: %+v", d)
	}
	nv, err := e.ec2.CreateLaunchTemplateVersion(e.ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateName: aws.String("lt-user-data"),
		SourceVersion: aws.String("1"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{InstanceType: "c6i.large"}})
	e.must(err)
	if aws.ToInt64(nv.LaunchTemplateVersion.VersionNumber) != 2 || aws.ToString(nv.LaunchTemplateVersion.LaunchTemplateData.ImageId) != amd64 {
		t.Errorf("new version: %+v", nv.LaunchTemplateVersion)
	}
}
