package fakeec2_test

import (
	"encoding/json"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/billing"
	ec2model "github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestIntegrationTagPropagation: template tags and request TagSpecifications land on the
// instance, its volume, its ENI and the fleet; CreateTags/DeleteTags/DescribeTags agree,
// and the ledger follows tag changes.
func TestIntegrationTagPropagation(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, _ := e.discover()
	ltID := e.createTemplate("tags", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	out, err := e.fleet(e.ec2, "tags", "spot", []ec2types.FleetLaunchTemplateOverridesRequest{override("m5.large", subnets[0])},
		[]ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("nc-1")}, {Key: aws.String("owner"), Value: aws.String("lab")}})
	e.must(err)
	id := out.Instances[0].InstanceIds[0]
	in := e.describe(id)[0]
	if in.InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot || aws.ToString(in.SpotInstanceRequestId) == "" {
		t.Errorf("spot instance lifecycle %q request %q", in.InstanceLifecycle, aws.ToString(in.SpotInstanceRequestId))
	}
	// EC2 adds its own tags: the template and version, and the fleet, that launched it.
	system := map[string]string{"aws:ec2launchtemplate:id": ltID, "aws:ec2launchtemplate:version": "1", "aws:ec2:fleet-id": aws.ToString(out.FleetId)}
	wantInstance := map[string]string{"application": "ziba", "environment": "production", "owner": "lab",
		"karpenter.sh/nodepool": "ziba-general", "karpenter.sh/nodeclaim": "nc-1"}
	maps.Copy(wantInstance, system)
	if diff := cmp.Diff(wantInstance, tagMap(in.Tags)); diff != "" {
		t.Errorf("instance tags: request tags override template tags (-want +got):\n%s", diff)
	}
	vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{f("tag:karpenter.sh/nodeclaim", "nc-1")}})
	e.must(err)
	if len(vols.Volumes) != 1 || tagMap(vols.Volumes[0].Tags)["application"] != "ziba" ||
		tagMap(vols.Volumes[0].Tags)["aws:ec2launchtemplate:id"] != ltID || tagMap(vols.Volumes[0].Tags)["aws:ec2:fleet-id"] != "" {
		t.Errorf("volume tags (the template's system tags, not the fleet's): %+v", vols.Volumes)
	}
	// Investigators find what a fleet launched by its system tag.
	byFleet, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{f("tag:aws:ec2:fleet-id", aws.ToString(out.FleetId))}})
	e.must(err)
	if len(byFleet.Reservations) != 1 || aws.ToString(byFleet.Reservations[0].Instances[0].InstanceId) != id {
		t.Errorf("instances of fleet %s by tag:aws:ec2:fleet-id: %+v", aws.ToString(out.FleetId), byFleet.Reservations)
	}
	enis, err := e.ec2.DescribeNetworkInterfaces(e.ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{f("tag:application", "ziba")}})
	e.must(err)
	if len(enis.NetworkInterfaces) != 1 || tagMap(enis.NetworkInterfaces[0].TagSet)["karpenter.sh/nodeclaim"] != "" {
		t.Errorf("ENI tags come from the template's network-interface spec only: %+v", enis.NetworkInterfaces)
	}
	ft, err := e.ec2.DescribeTags(e.ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{f("resource-id", aws.ToString(out.FleetId))}})
	e.must(err)
	if len(ft.Tags) != 2 || ft.Tags[0].ResourceType != "fleet" {
		t.Errorf("fleet tags: %+v", ft.Tags)
	}

	// Karpenter tags the instance with its node name after registration.
	_, err = e.ec2.CreateTags(e.ctx, &ec2.CreateTagsInput{Resources: []string{id},
		Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String("ip-10-0-0-4.eu-west-2.compute.internal")}, {Key: aws.String("owner"), Value: aws.String("platform")}}})
	e.must(err)
	_, err = e.ec2.DeleteTags(e.ctx, &ec2.DeleteTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("environment")}, {Key: aws.String("application"), Value: aws.String("not-ziba")}}})
	e.must(err)
	dt, err := e.ec2.DescribeTags(e.ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{f("resource-id", id)}})
	e.must(err)
	got := map[string]string{}
	for _, td := range dt.Tags {
		if td.ResourceType != ec2types.ResourceTypeInstance {
			t.Errorf("resource type %s", td.ResourceType)
		}
		got[aws.ToString(td.Key)] = aws.ToString(td.Value)
	}
	want := map[string]string{"application": "ziba", "owner": "platform", "karpenter.sh/nodepool": "ziba-general",
		"karpenter.sh/nodeclaim": "nc-1", "Name": "ip-10-0-0-4.eu-west-2.compute.internal"}
	maps.Copy(want, system)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tags after CreateTags/DeleteTags (-want +got):\n%s", diff)
	}
	// Nobody but AWS writes or deletes an aws: tag; DeleteTags without tags keeps AWS's own.
	for name, call := range map[string]func() error{
		"CreateTags": func() error {
			_, err := e.ec2.CreateTags(e.ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("aws:ec2:fleet-id"), Value: aws.String("fleet-mine")}}})
			return err
		},
		"DeleteTags": func() error {
			_, err := e.ec2.DeleteTags(e.ctx, &ec2.DeleteTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("aws:ec2launchtemplate:id")}}})
			return err
		},
	} {
		if code := errCode(call()); code != "InvalidParameterValue" {
			t.Errorf("%s of an aws: tag: code %q, want InvalidParameterValue", name, code)
		}
	}
	bill, err := e.admin.Billing(e.ctx)
	e.must(err)
	for _, le := range bill.Entries {
		if le.ResourceID == id && le.Tags["owner"] != "platform" {
			t.Errorf("ledger tags not updated: %v", le.Tags)
		}
	}
	byKey, err := e.ec2.DescribeTags(e.ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{f("key", "karpenter.sh/discovery"), f("resource-type", "subnet", "security-group")}})
	e.must(err)
	if len(byKey.Tags) != 4 {
		t.Errorf("discovery tags: %d, want 3 subnets + 1 group", len(byKey.Tags))
	}
	_, err = e.ec2.DeleteTags(e.ctx, &ec2.DeleteTagsInput{Resources: []string{id}})
	e.must(err)
	if diff := cmp.Diff(system, tagMap(e.describe(id)[0].Tags)); diff != "" {
		t.Errorf("after DeleteTags with no tags, AWS's own stay (-want +got):\n%s", diff)
	}
}

// TestIntegrationDeleteOnTermination: a root volume marked DeleteOnTermination goes with
// the instance, a data volume that is not stays (available), and so billing differs.
func TestIntegrationDeleteOnTermination(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	out, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m6i.large",
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: subnets[1].SubnetId,
		BlockDeviceMappings: []ec2types.BlockDeviceMapping{
			{DeviceName: aws.String("/dev/xvda"), Ebs: &ec2types.EbsBlockDevice{VolumeSize: aws.Int32(40), Encrypted: aws.Bool(true)}},
			{DeviceName: aws.String("/dev/xvdb"), Ebs: &ec2types.EbsBlockDevice{VolumeSize: aws.Int32(100), VolumeType: ec2types.VolumeTypeGp2, DeleteOnTermination: aws.Bool(false)}},
		}})
	e.must(err)
	in := out.Instances[0]
	id := aws.ToString(in.InstanceId)
	if len(in.BlockDeviceMappings) != 2 {
		t.Fatalf("block devices: %+v", in.BlockDeviceMappings)
	}
	root, data := aws.ToString(in.BlockDeviceMappings[0].Ebs.VolumeId), aws.ToString(in.BlockDeviceMappings[1].Ebs.VolumeId)
	e.clock.Advance(time.Hour)
	_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	e.must(err)
	e.clock.Advance(time.Minute)
	vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{})
	e.must(err)
	if len(vols.Volumes) != 1 || aws.ToString(vols.Volumes[0].VolumeId) != data {
		t.Fatalf("volumes after termination: %+v, want only the data volume %s", vols.Volumes, data)
	}
	v := vols.Volumes[0]
	if v.State != ec2types.VolumeStateAvailable || len(v.Attachments) != 0 || aws.ToBool(v.Encrypted) || aws.ToInt32(v.Iops) != 300 {
		t.Errorf("kept volume: state %s attachments %d encrypted %v iops %d", v.State, len(v.Attachments), aws.ToBool(v.Encrypted), aws.ToInt32(v.Iops))
	}
	bill, err := e.admin.Billing(e.ctx)
	e.must(err)
	stopped := map[string]bool{}
	encrypted := map[string]bool{}
	for _, le := range bill.Entries {
		stopped[le.ResourceID] = le.Stopped != nil
		if le.ResourceType == "volume" {
			encrypted[le.ResourceID] = aws.ToBool(le.Encrypted)
		}
	}
	if diff := cmp.Diff(map[string]bool{id: true, root: true, data: false}, stopped); diff != "" {
		t.Errorf("billing stopped (-want +got):\n%s", diff)
	}
	// The ledger still tells the deleted root volume's encryption.
	if diff := cmp.Diff(map[string]bool{root: true, data: false}, encrypted); diff != "" {
		t.Errorf("ledger volume encryption (-want +got):\n%s", diff)
	}
}

// jsonLines renders v as indented JSON lines, for diffs of SDK values.
func jsonLines(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

// TestIntegrationBillingAccrual: instances bill from running to shutting-down at the
// on-demand or spot price, volumes per GB-month, and cost groups by tag.
func TestIntegrationBillingAccrual(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("bill", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	od, err := e.fleet(e.ec2, "bill", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[0])}, nil)
	e.must(err)
	sp, err := e.fleet(e.ec2, "bill", "spot", []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[1])},
		[]ec2types.Tag{{Key: aws.String("application"), Value: aws.String("batch")}})
	e.must(err)
	odID, spID := od.Instances[0].InstanceIds[0], sp.Instances[0].InstanceIds[0]
	m6i, _ := ec2model.LookupInstanceTypeIn("eu-west-2", "m6i.large")
	spotPrice := ec2model.SpotPrice(&m6i, "eu-west-2b")
	if spotPrice >= m6i.OnDemandPrice || spotPrice <= 0 {
		t.Fatalf("spot price %v vs on-demand %v", spotPrice, m6i.OnDemandPrice)
	}
	// 2s pending (not billed), then 3 hours running.
	e.clock.Advance(2*time.Second + 3*time.Hour)
	_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{odID}})
	e.must(err)
	e.clock.Advance(5 * time.Hour) // od stopped; spot keeps running 5 more hours
	bill, err := e.admin.Billing(e.ctx)
	e.must(err)
	byID := map[string]billing.LedgerEntry{}
	for _, le := range bill.Entries {
		byID[le.ResourceID] = le
	}
	if le := byID[odID]; !near(le.AccruedUSD, 3*m6i.OnDemandPrice) || le.PricePerHour != m6i.OnDemandPrice || le.Stopped == nil {
		t.Errorf("on-demand ledger %+v, want 3h x %v", le, m6i.OnDemandPrice)
	}
	if le := byID[spID]; !near(le.AccruedUSD, 8*spotPrice) || le.CapacityType != "spot" || le.Stopped != nil {
		t.Errorf("spot ledger %+v, want 8h x %v", le, spotPrice)
	}
	var volUSD float64
	for _, le := range bill.Entries {
		if le.ResourceType == "volume" {
			volUSD += le.AccruedUSD
			if le.SizeGiB != 80 || le.Type != "gp3" {
				t.Errorf("volume ledger %+v", le)
			}
		}
	}
	// Two 80 GiB gp3 volumes: od's for 3h+2s, spot's for 8h+2s, at $0.0928/GB-month.
	hourly := 80 * 0.0928 / 730
	if !near(volUSD, hourly*(3+8+2*2.0/3600)) {
		t.Errorf("volume cost %v, want %v", volUSD, hourly*(3+8+2*2.0/3600))
	}
	rep, err := e.admin.CostByTag(e.ctx, "application")
	e.must(err)
	groupsUSD := map[string]float64{}
	for _, g := range rep.Groups {
		groupsUSD[g.Value] = g.USD
	}
	if len(groupsUSD) != 2 || groupsUSD["batch"] <= 0 || groupsUSD["ziba"] <= 0 || !near(groupsUSD["batch"]+groupsUSD["ziba"], bill.TotalUSD) {
		t.Errorf("cost by application: %+v (total %v)", rep.Groups, bill.TotalUSD)
	}
}

// TestIntegrationPolicyDenial: each policy condition denies with UnauthorizedOperation,
// creates nothing, and the audit trail keeps the reason behind the encoded message.
func TestIntegrationPolicyDenial(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("open", amd64, groups, false, ec2types.LaunchTemplateHttpTokensStateOptional)
	e.createTemplate("strict", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	ov := []ec2types.FleetLaunchTemplateOverridesRequest{override("m6i.large", subnets[0])}
	tests := []struct {
		name     string
		stmt     authz.PolicyStatement
		template string
		overs    []ec2types.FleetLaunchTemplateOverridesRequest
		reason   string
	}{
		{"family", authz.PolicyStatement{Sid: "families", AllowedInstanceFamilies: []string{"c6i", "c7i"}}, "strict", ov, "does not allow instance type m6i.large"},
		{"zone", authz.PolicyStatement{AllowedZones: []string{"eu-west-2b"}}, "strict", ov, "does not allow availability zone eu-west-2a"},
		{"encryption", authz.PolicyStatement{RequireEncryptedVolumes: true}, "open", ov, "requires encrypted EBS volumes; volume /dev/xvda is not encrypted"},
		{"imdsv2", authz.PolicyStatement{RequireIMDSv2: true}, "open", ov, "requires MetadataOptions.HttpTokens=required (IMDSv2); request has optional"},
		{"required tags", authz.PolicyStatement{RequiredTags: []string{"cost-center"}}, "strict", ov, "missing [cost-center]"},
		{"max instances", authz.PolicyStatement{MaxInstances: 0 + 1}, "strict", ov, "caps the account at 1 instances; 1 are pending or running"},
		{"capacity type", authz.PolicyStatement{AllowedCapacityTypes: []string{"spot"}}, "strict", ov, "does not allow capacity type on-demand"},
		{"denied type", authz.PolicyStatement{DeniedInstanceTypes: []string{"m6i.*"}}, "strict", ov, "denies instance type m6i.large"},
	}
	// One instance exists so that MaxInstances=1 is already reached.
	e.launch("c6i.large", amd64, subnets[1], 1, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{tt.stmt}}))
			before := len(e.describe())
			_, err := e.fleet(e.ec2, tt.template, "on-demand", tt.overs, nil)
			if errCode(err) != "UnauthorizedOperation" {
				t.Fatalf("CreateFleet: %v, want UnauthorizedOperation", err)
			}
			if !strings.Contains(err.Error(), "You are not authorized to perform this operation. Encoded authorization failure message: ") {
				t.Errorf("message %q", err.Error())
			}
			if after := len(e.describe()); after != before {
				t.Errorf("denied call created instances: %d -> %d", before, after)
			}
			ev, err := e.admin.Audit(e.ctx, trail.AuditQuery{Action: "CreateFleet", ErrorCode: "UnauthorizedOperation", Limit: 1})
			e.must(err)
			if len(ev) != 1 || !strings.Contains(ev[0].DenialReason, tt.reason) || len(ev[0].Created) != 0 || ev[0].Caller != karpenterKey {
				t.Fatalf("audit %+v, want reason containing %q", ev, tt.reason)
			}
			decoded, err := e.admin.DecodeAuthorizationMessage(e.ctx, ev[0].EncodedMessage)
			e.must(err)
			if decoded != ev[0].DenialReason {
				t.Errorf("decoded %q != %q", decoded, ev[0].DenialReason)
			}
		})
	}
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{}))
	vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{})
	e.must(err)
	if len(vols.Volumes) != 1 {
		t.Errorf("denied calls left %d volumes, want only the first instance's", len(vols.Volumes))
	}

	// Mixed overrides: the forbidden pool is reported, the allowed one launches.
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{{AllowedInstanceFamilies: []string{"c6i"}}}}))
	out, err := e.fleet(e.ec2, "strict", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{
		override("m5.large", subnets[0]), override("c6i.xlarge", subnets[0])}, nil)
	e.must(err)
	if len(out.Instances) != 1 || out.Instances[0].InstanceType != "c6i.xlarge" || len(out.Errors) != 1 ||
		aws.ToString(out.Errors[0].ErrorCode) != "UnauthorizedOperation" || out.Errors[0].LaunchTemplateAndOverrides.Overrides.InstanceType != "m5.large" {
		t.Errorf("mixed fleet: instances %+v errors %+v", out.Instances, out.Errors)
	}

	// Per caller: the statement binds the Karpenter key only; another caller may launch.
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{{Callers: []string{karpenterKey}, DenyActions: []string{"RunInstances"}}}}))
	_, err = e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	if errCode(err) != "UnauthorizedOperation" {
		t.Errorf("denied action: %v", err)
	}
	other := newClient(t, e.url, "AKIAOPERATOR")
	_, err = other.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	e.must(err)
}

// TestIntegrationFaults covers each injectable fault.
func TestIntegrationFaults(t *testing.T) {
	e := newEnv(t)
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("faults", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	client := newClient(t, e.url, karpenterKey, noRetry)

	t.Run("insufficient capacity in a fleet", func(t *testing.T) {
		ice, err := e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "c6i.large", Zone: "eu-west-2a"})
		e.must(err)
		defer e.admin.ClearFaults(e.ctx, ice.ID)
		out, err := e.fleet(client, "faults", "on-demand", []ec2types.FleetLaunchTemplateOverridesRequest{
			override("c6i.large", subnets[0]), override("m6i.large", subnets[0]), override("c6i.large", subnets[1])}, nil)
		e.must(err)
		if len(out.Instances) != 1 || out.Instances[0].InstanceType != "c6i.large" ||
			aws.ToString(out.Instances[0].LaunchTemplateAndOverrides.Overrides.SubnetId) != aws.ToString(subnets[1].SubnetId) {
			t.Errorf("fleet under ICE launched %+v, want c6i.large in the other zone", out.Instances)
		}
		if len(out.Errors) != 1 || aws.ToString(out.Errors[0].ErrorCode) != "InsufficientInstanceCapacity" ||
			aws.ToString(out.Errors[0].LaunchTemplateAndOverrides.Overrides.AvailabilityZone) != "eu-west-2a" {
			t.Errorf("fleet errors %+v", out.Errors)
		}
	})
	t.Run("insufficient capacity everywhere", func(t *testing.T) {
		ice, err := e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "r6i.large", CapacityType: "spot"})
		e.must(err)
		defer e.admin.ClearFaults(e.ctx, ice.ID)
		out, err := e.fleet(client, "faults", "spot", []ec2types.FleetLaunchTemplateOverridesRequest{override("r6i.large", subnets[0]), override("r6i.large", subnets[2])}, nil)
		e.must(err)
		if len(out.Instances) != 0 || len(out.Errors) != 2 {
			t.Errorf("instances %+v errors %+v", out.Instances, out.Errors)
		}
		_, err = client.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "r6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			InstanceMarketOptions: &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}})
		if errCode(err) != "InsufficientInstanceCapacity" {
			t.Errorf("RunInstances spot r6i.large: %v", err)
		}
		// On-demand r6i.large is unaffected.
		_, err = client.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "r6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
		e.must(err)
	})
	t.Run("leak", func(t *testing.T) {
		id := e.launch("m5.large", amd64, subnets[0], 1, nil)[0]
		e.clock.Advance(3 * time.Second)
		leak, err := e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultLeak, InstanceIDs: []string{id}, Remaining: 1})
		e.must(err)
		term, err := client.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
		e.must(err)
		if term.TerminatingInstances[0].CurrentState.Name != ec2types.InstanceStateNameShuttingDown {
			t.Errorf("leaked terminate answered %s", term.TerminatingInstances[0].CurrentState.Name)
		}
		e.clock.Advance(time.Hour)
		if st := e.describe(id)[0].State.Name; st != ec2types.InstanceStateNameRunning {
			t.Errorf("leaked instance is %s an hour later, want running", st)
		}
		bill, err := e.admin.Billing(e.ctx)
		e.must(err)
		for _, le := range bill.Entries {
			if le.ResourceID == id && (le.Stopped != nil || le.AccruedUSD < 0.09) {
				t.Errorf("leaked instance not billed on: %+v", le)
			}
		}
		ev, err := e.admin.Audit(e.ctx, trail.AuditQuery{Action: "TerminateInstances", ResourceID: id})
		e.must(err)
		if len(ev) != 1 || len(ev[0].Faults) != 1 || !strings.HasPrefix(ev[0].Faults[0], leak.ID) {
			t.Errorf("audit of the leak: %+v", ev)
		}
		faults, err := e.admin.Faults(e.ctx)
		e.must(err)
		if len(faults) != 0 {
			t.Errorf("a leak with Remaining 1 is still set: %+v", faults)
		}
		// The next terminate works.
		_, err = client.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
		e.must(err)
		e.clock.Advance(time.Minute)
		if st := e.describe(id)[0].State.Name; st != ec2types.InstanceStateNameTerminated {
			t.Errorf("second terminate left %s", st)
		}
	})
	t.Run("latency", func(t *testing.T) {
		lat, err := e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultLatency, Action: "DescribeSubnets", LatencyMS: 150})
		e.must(err)
		defer e.admin.ClearFaults(e.ctx, lat.ID)
		start := time.Now()
		_, err = client.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{})
		e.must(err)
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("DescribeSubnets took %v under a 150ms latency fault", d)
		}
	})
	t.Run("throttle", func(t *testing.T) {
		th, err := e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultThrottle, Action: "DescribeInstances", Rate: 0.5})
		e.must(err)
		defer e.admin.ClearFaults(e.ctx, th.ID)
		throttled := 0
		for i := 0; i < 10; i++ {
			_, err := client.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{})
			switch errCode(err) {
			case "RequestLimitExceeded":
				throttled++
			case "":
			default:
				t.Fatalf("unexpected %v", err)
			}
		}
		if throttled != 5 {
			t.Errorf("%d of 10 calls throttled at rate 0.5", throttled)
		}
		// The SDK's retryer rides through throttling, as it would on AWS.
		_, err = e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{})
		e.must(err)
	})
	t.Run("bad fault", func(t *testing.T) {
		if _, err := e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: "meteor"}); err == nil {
			t.Errorf("unknown fault kind accepted")
		}
	})
}

// TestIntegrationRestart closes the emulator and reopens its state directory: nothing
// acknowledged is lost, and new IDs do not collide even when the ID generator restarts.
func TestIntegrationRestart(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = dir })
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("persist", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	out, err := e.fleet(e.ec2, "persist", "spot", []ec2types.FleetLaunchTemplateOverridesRequest{override("m6g.large", subnets[0]), override("m5.large", subnets[1])},
		[]ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("nc-9")}})
	e.must(err)
	kept := out.Instances[0].InstanceIds[0]
	gone := e.launch("c6i.large", amd64, subnets[2], 1, nil)[0]
	e.clock.Advance(3 * time.Second)
	_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{gone}})
	e.must(err)
	_, err = e.ec2.CreateTags(e.ctx, &ec2.CreateTagsInput{Resources: []string{kept, aws.ToString(subnets[0].SubnetId)}, Tags: []ec2types.Tag{{Key: aws.String("after"), Value: aws.String("yes")}}})
	e.must(err)
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{Statements: []authz.PolicyStatement{{RequireEncryptedVolumes: true}}}))
	_, err = e.admin.SetFault(e.ctx, fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "r5.large"})
	e.must(err)

	snapshot := func() (map[string]any, int) {
		insts, err := e.ec2.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{})
		e.must(err)
		vols, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{})
		e.must(err)
		enis, err := e.ec2.DescribeNetworkInterfaces(e.ctx, &ec2.DescribeNetworkInterfacesInput{})
		e.must(err)
		lts, err := e.ec2.DescribeLaunchTemplateVersions(e.ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("persist")})
		e.must(err)
		sn, err := e.ec2.DescribeSubnets(e.ctx, &ec2.DescribeSubnetsInput{})
		e.must(err)
		bill, err := e.admin.Billing(e.ctx)
		e.must(err)
		pol, err := e.admin.Policy(e.ctx)
		e.must(err)
		faults, err := e.admin.Faults(e.ctx)
		e.must(err)
		audit, err := e.admin.Audit(e.ctx, trail.AuditQuery{MutatingOnly: true})
		e.must(err)
		return map[string]any{"instances": insts.Reservations, "volumes": vols.Volumes, "enis": enis.NetworkInterfaces,
			"templates": lts.LaunchTemplateVersions, "subnets": sn.Subnets, "billing": bill, "policy": pol, "faults": faults,
			"audit": audit}, len(audit)
	}
	before, nAudit := snapshot()
	e.restart()
	after, _ := snapshot()
	if diff := cmp.Diff(jsonLines(t, before), jsonLines(t, after)); diff != "" {
		t.Errorf("state after restart (-before +after):\n%s", diff)
	}
	if nAudit < 5 {
		t.Errorf("only %d mutating audit events", nAudit)
	}
	// The shutting-down instance finishes terminating across the restart.
	e.clock.Advance(time.Minute)
	if st := e.describe(gone)[0].State.Name; st != ec2types.InstanceStateNameTerminated {
		t.Errorf("instance terminated before restart is %s", st)
	}
	// A fresh sequential generator hands out used IDs first: they must be skipped.
	e.opts.IDs = account.NewSequentialIDs()
	e.restart()
	e.must(e.admin.SetPolicy(e.ctx, authz.Policy{}))
	id := e.launch("m5.large", amd64, subnets[0], 1, nil)[0]
	if id == kept || id == gone {
		t.Errorf("new instance reused ID %s", id)
	}
}

// TestIntegrationClientTokenIdempotency: a repeated ClientToken (an SDK retry) gets the
// first answer and launches nothing more, across a restart too.
func TestIntegrationClientTokenIdempotency(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("idem", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	in := &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant, ClientToken: aws.String("token-1"),
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String("idem"), Version: aws.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{override("m5.large", subnets[0])}}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: "on-demand"}}
	first, err := e.ec2.CreateFleet(e.ctx, in)
	e.must(err)
	e.restart()
	second, err := e.ec2.CreateFleet(e.ctx, in)
	e.must(err)
	if first.Instances[0].InstanceIds[0] != second.Instances[0].InstanceIds[0] || aws.ToString(first.FleetId) != aws.ToString(second.FleetId) {
		t.Errorf("replayed CreateFleet answered %v, first %v", second.Instances, first.Instances)
	}
	if n := len(e.describe()); n != 1 {
		t.Errorf("%d instances after a replayed CreateFleet, want 1", n)
	}
	ev, err := e.admin.Audit(e.ctx, trail.AuditQuery{Action: "CreateFleet"})
	e.must(err)
	if len(ev) != 2 || ev[0].Replay || !ev[1].Replay || len(ev[1].Created) != 0 {
		t.Errorf("audit of the replay: %+v", ev)
	}
	in.ClientToken = aws.String("token-2")
	third, err := e.ec2.CreateFleet(e.ctx, in)
	e.must(err)
	if third.Instances[0].InstanceIds[0] == first.Instances[0].InstanceIds[0] {
		t.Errorf("a new token replayed the old answer")
	}
}
