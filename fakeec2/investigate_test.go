package fakeec2_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/billing"
)

func ledgerEntry(t *testing.T, srv *fakeec2.Server, id string) billing.LedgerEntry {
	t.Helper()
	for _, e := range srv.Billing().Entries {
		if e.ResourceID == id {
			return e
		}
	}
	t.Fatalf("no ledger entry for %s", id)
	return billing.LedgerEntry{}
}

func (e *env) volume(id string) ec2types.Volume {
	e.t.Helper()
	out, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{id}})
	e.must(err)
	return out.Volumes[0]
}

func attachState(v ec2types.Volume) string {
	if len(v.Attachments) == 0 {
		return ""
	}
	return string(v.Attachments[0].State)
}

// TestInvestigateVolumes walks a volume through creating, attaching, detaching and
// deleting, with AWS's errors on the way, its billing, and a restart in the middle.
func TestInvestigateVolumes(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, _, amd64, _ := e.discover()
	inA := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	inB := e.launch("m6i.large", amd64, subnets[1], 1, nil)[0]
	e.clock.Advance(3 * time.Second)

	errs := []struct {
		name string
		in   *ec2.CreateVolumeInput
		code string
	}{
		{"gp2 too large", &ec2.CreateVolumeInput{AvailabilityZone: subnets[0].AvailabilityZone, Size: aws.Int32(20000), VolumeType: "gp2"}, "InvalidParameterValue"},
		{"st1 too small", &ec2.CreateVolumeInput{AvailabilityZone: subnets[0].AvailabilityZone, Size: aws.Int32(10), VolumeType: "st1"}, "InvalidParameterValue"},
		{"standard too large", &ec2.CreateVolumeInput{AvailabilityZone: subnets[0].AvailabilityZone, Size: aws.Int32(2048), VolumeType: "standard"}, "InvalidParameterValue"},
		{"no size or snapshot", &ec2.CreateVolumeInput{AvailabilityZone: subnets[0].AvailabilityZone}, "MissingParameter"},
		{"unknown zone", &ec2.CreateVolumeInput{AvailabilityZone: aws.String("eu-west-2z"), Size: aws.Int32(1)}, "InvalidParameterValue"},
		{"unknown snapshot", &ec2.CreateVolumeInput{AvailabilityZone: subnets[0].AvailabilityZone, SnapshotId: aws.String("snap-0123456789abcdef0")}, "InvalidSnapshot.NotFound"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.ec2.CreateVolume(e.ctx, tc.in, noRetry)
			if got := errCode(err); got != tc.code {
				t.Errorf("CreateVolume: got %q, want %q", got, tc.code)
			}
		})
	}

	cv, err := e.ec2.CreateVolume(e.ctx, &ec2.CreateVolumeInput{AvailabilityZone: subnets[0].AvailabilityZone, Size: aws.Int32(100),
		VolumeType: ec2types.VolumeTypeGp3, TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeVolume,
			Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String("scratch")}}}}})
	e.must(err)
	vid := aws.ToString(cv.VolumeId)
	if cv.State != ec2types.VolumeStateCreating || aws.ToInt32(cv.Iops) != 3000 || tagMap(cv.Tags)["Name"] != "scratch" {
		t.Fatalf("CreateVolume: state %s iops %d tags %v", cv.State, aws.ToInt32(cv.Iops), tagMap(cv.Tags))
	}
	if _, err := e.ec2.AttachVolume(e.ctx, &ec2.AttachVolumeInput{VolumeId: &vid, InstanceId: &inA, Device: aws.String("/dev/sdf")}, noRetry); errCode(err) != "IncorrectState" {
		t.Errorf("attach while creating: %v", err)
	}
	e.clock.Advance(3 * time.Second)
	if v := e.volume(vid); v.State != ec2types.VolumeStateAvailable {
		t.Fatalf("after the delay: %s", v.State)
	}
	e.restart()

	steps := []struct {
		name string
		do   func() error
		code string
	}{
		{"zone mismatch", func() error {
			_, err := e.ec2.AttachVolume(e.ctx, &ec2.AttachVolumeInput{VolumeId: &vid, InstanceId: &inB, Device: aws.String("/dev/sdf")}, noRetry)
			return err
		}, "InvalidVolume.ZoneMismatch"},
		{"device in use", func() error {
			_, err := e.ec2.AttachVolume(e.ctx, &ec2.AttachVolumeInput{VolumeId: &vid, InstanceId: &inA, Device: aws.String("/dev/xvda")}, noRetry)
			return err
		}, "InvalidParameterValue"},
		{"unknown volume", func() error {
			_, err := e.ec2.AttachVolume(e.ctx, &ec2.AttachVolumeInput{VolumeId: aws.String("vol-0123456789abcdef0"), InstanceId: &inA, Device: aws.String("/dev/sdf")}, noRetry)
			return err
		}, "InvalidVolume.NotFound"},
		{"detach an available volume", func() error {
			_, err := e.ec2.DetachVolume(e.ctx, &ec2.DetachVolumeInput{VolumeId: &vid}, noRetry)
			return err
		}, "IncorrectState"},
		{"attach", func() error {
			out, err := e.ec2.AttachVolume(e.ctx, &ec2.AttachVolumeInput{VolumeId: &vid, InstanceId: &inA, Device: aws.String("/dev/sdf")}, noRetry)
			if err == nil && out.State != ec2types.VolumeAttachmentStateAttaching {
				t.Errorf("AttachVolume state %s, want attaching", out.State)
			}
			return err
		}, ""},
		{"attach twice", func() error {
			_, err := e.ec2.AttachVolume(e.ctx, &ec2.AttachVolumeInput{VolumeId: &vid, InstanceId: &inA, Device: aws.String("/dev/sdg")}, noRetry)
			return err
		}, "VolumeInUse"},
		{"delete in use", func() error {
			_, err := e.ec2.DeleteVolume(e.ctx, &ec2.DeleteVolumeInput{VolumeId: &vid}, noRetry)
			return err
		}, "VolumeInUse"},
	}
	for _, st := range steps {
		if got := errCode(st.do()); got != st.code {
			t.Errorf("%s: got %q, want %q", st.name, got, st.code)
		}
	}
	if v := e.volume(vid); v.State != ec2types.VolumeStateInUse || attachState(v) != "attaching" {
		t.Errorf("just attached: %s/%s", v.State, attachState(v))
	}
	e.clock.Advance(3 * time.Second)
	if v := e.volume(vid); attachState(v) != "attached" || aws.ToString(v.Attachments[0].Device) != "/dev/sdf" {
		t.Errorf("attached: %+v", v.Attachments)
	}
	if got := len(e.describe(inA)[0].BlockDeviceMappings); got != 2 {
		t.Errorf("instance block devices: %d, want 2", got)
	}
	dv, err := e.ec2.DetachVolume(e.ctx, &ec2.DetachVolumeInput{VolumeId: &vid})
	e.must(err)
	if dv.State != ec2types.VolumeAttachmentStateDetaching {
		t.Errorf("DetachVolume state %s", dv.State)
	}
	e.clock.Advance(3 * time.Second)
	if v := e.volume(vid); v.State != ec2types.VolumeStateAvailable || len(v.Attachments) != 0 {
		t.Errorf("detached: %s %+v", v.State, v.Attachments)
	}

	// ModifyVolume: bigger, billed at the new size from now.
	mv, err := e.ec2.ModifyVolume(e.ctx, &ec2.ModifyVolumeInput{VolumeId: &vid, Size: aws.Int32(200)})
	e.must(err)
	if aws.ToInt32(mv.VolumeModification.TargetSize) != 200 || aws.ToInt32(mv.VolumeModification.OriginalSize) != 100 {
		t.Errorf("ModifyVolume: %+v", mv.VolumeModification)
	}
	if _, err := e.ec2.ModifyVolume(e.ctx, &ec2.ModifyVolumeInput{VolumeId: &vid, Size: aws.Int32(100)}, noRetry); errCode(err) == "" {
		t.Error("shrinking during a modification succeeded")
	}
	e.clock.Advance(5 * time.Second)
	mods, err := e.ec2.DescribeVolumesModifications(e.ctx, &ec2.DescribeVolumesModificationsInput{VolumeIds: []string{vid}})
	e.must(err)
	if len(mods.VolumesModifications) != 1 || mods.VolumesModifications[0].ModificationState != ec2types.VolumeModificationStateCompleted {
		t.Errorf("DescribeVolumesModifications: %+v", mods.VolumesModifications)
	}

	// Snapshot it, then delete the volume: the snapshot outlives it and keeps billing.
	cs, err := e.ec2.CreateSnapshot(e.ctx, &ec2.CreateSnapshotInput{VolumeId: &vid, Description: aws.String("before delete")})
	e.must(err)
	sid := aws.ToString(cs.SnapshotId)
	if cs.State != ec2types.SnapshotStatePending || aws.ToInt32(cs.VolumeSize) != 200 {
		t.Errorf("CreateSnapshot: %s %d", cs.State, aws.ToInt32(cs.VolumeSize))
	}
	_, err = e.ec2.DeleteVolume(e.ctx, &ec2.DeleteVolumeInput{VolumeId: &vid})
	e.must(err)
	if v := e.volume(vid); v.State != ec2types.VolumeStateDeleting {
		t.Errorf("deleting: %s", v.State)
	}
	e.clock.Advance(3 * time.Second)
	if _, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{vid}}, noRetry); errCode(err) != "InvalidVolume.NotFound" {
		t.Errorf("deleted volume: %v", err)
	}
	vl := ledgerEntry(t, e.srv, vid)
	if vl.Stopped == nil || vl.SizeGiB != 200 || vl.AccruedUSD <= 0 {
		t.Errorf("volume ledger: %+v", vl)
	}
	e.restart()
	sl := ledgerEntry(t, e.srv, sid)
	if want := 0.053 * 200 / 730; sl.Stopped != nil || sl.ResourceType != "snapshot" || sl.PricePerHour < want-1e-6 || sl.PricePerHour > want+1e-6 {
		t.Errorf("snapshot ledger: %+v, want %.6f/h", sl, want)
	}
	self, err := e.ec2.DescribeSnapshots(e.ctx, &ec2.DescribeSnapshotsInput{OwnerIds: []string{"self"}})
	e.must(err)
	var ids []string
	for _, s := range self.Snapshots {
		ids = append(ids, aws.ToString(s.SnapshotId)+"/"+string(s.State))
	}
	if diff := cmp.Diff([]string{sid + "/completed"}, ids); diff != "" {
		t.Errorf("DescribeSnapshots self (-want +got):\n%s", diff)
	}
	amazon, err := e.ec2.DescribeSnapshots(e.ctx, &ec2.DescribeSnapshotsInput{OwnerIds: []string{"amazon"}})
	e.must(err)
	if len(amazon.Snapshots) == 0 {
		t.Fatal("no amazon-owned snapshots (the images' roots)")
	}
	rootSnap := aws.ToString(amazon.Snapshots[0].SnapshotId)
	for _, tc := range []struct{ name, id, code string }{
		{"an AMI's snapshot", rootSnap, "InvalidSnapshot.InUse"},
		{"missing", "snap-0123456789abcdef0", "InvalidSnapshot.NotFound"},
		{"mine", sid, ""},
		{"mine again", sid, "InvalidSnapshot.NotFound"},
	} {
		_, err := e.ec2.DeleteSnapshot(e.ctx, &ec2.DeleteSnapshotInput{SnapshotId: aws.String(tc.id)}, noRetry)
		if got := errCode(err); got != tc.code {
			t.Errorf("DeleteSnapshot %s: got %q, want %q", tc.name, got, tc.code)
		}
	}
	if l := ledgerEntry(t, e.srv, sid); l.Stopped == nil {
		t.Error("a deleted snapshot still bills")
	}
}

// TestInvestigateVolumeOutlivesInstance: DeleteOnTermination=false keeps the volume
// (available, still billing) after its instance is gone.
func TestInvestigateVolumeOutlivesInstance(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	out, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: &amd64, InstanceType: "m6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: subnets[0].SubnetId, BlockDeviceMappings: []ec2types.BlockDeviceMapping{{DeviceName: aws.String("/dev/xvdb"),
			Ebs: &ec2types.EbsBlockDevice{VolumeSize: aws.Int32(50), DeleteOnTermination: aws.Bool(false)}}}})
	e.must(err)
	id := aws.ToString(out.Instances[0].InstanceId)
	e.clock.Advance(3 * time.Second)
	var keep, root string
	for _, bd := range e.describe(id)[0].BlockDeviceMappings {
		if aws.ToString(bd.DeviceName) == "/dev/xvdb" {
			keep = aws.ToString(bd.Ebs.VolumeId)
		} else {
			root = aws.ToString(bd.Ebs.VolumeId)
		}
	}
	_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	e.must(err)
	e.clock.Advance(3 * time.Second)
	if v := e.volume(keep); v.State != ec2types.VolumeStateAvailable || len(v.Attachments) != 0 {
		t.Errorf("kept volume: %s %+v", v.State, v.Attachments)
	}
	if _, err := e.ec2.DescribeVolumes(e.ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{root}}, noRetry); errCode(err) != "InvalidVolume.NotFound" {
		t.Errorf("root volume: %v", err)
	}
	if l := ledgerEntry(t, e.srv, keep); l.Stopped != nil {
		t.Errorf("kept volume stopped billing: %+v", l)
	}
}

// TestInvestigateStopStart stops and starts an instance: compute billing pauses, the
// volumes keep billing; spot and terminated instances answer as AWS does.
func TestInvestigateStopStart(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, _, amd64, _ := e.discover()
	id := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	e.clock.Advance(time.Hour)
	st, err := e.ec2.StopInstances(e.ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}})
	e.must(err)
	if got := st.StoppingInstances[0]; got.CurrentState.Name != "stopping" || got.PreviousState.Name != "running" {
		t.Errorf("StopInstances: %s -> %s", got.PreviousState.Name, got.CurrentState.Name)
	}
	e.clock.Advance(2 * time.Second)
	e.restart()
	in := e.describe(id)[0]
	if in.State.Name != "stopped" || aws.ToString(in.StateReason.Code) != "Client.UserInitiatedShutdown" {
		t.Errorf("stopped: %s %+v", in.State.Name, in.StateReason)
	}
	before := ledgerEntry(t, e.srv, id).AccruedUSD
	e.clock.Advance(10 * time.Hour)
	if after := ledgerEntry(t, e.srv, id).AccruedUSD; after != before {
		t.Errorf("a stopped instance billed: %v -> %v", before, after)
	}
	root := aws.ToString(in.BlockDeviceMappings[0].Ebs.VolumeId)
	if l := ledgerEntry(t, e.srv, root); l.Stopped != nil {
		t.Errorf("the stopped instance's volume stopped billing: %+v", l)
	}
	sr, err := e.ec2.StartInstances(e.ctx, &ec2.StartInstancesInput{InstanceIds: []string{id}})
	e.must(err)
	if got := sr.StartingInstances[0]; got.CurrentState.Name != "pending" || got.PreviousState.Name != "stopped" {
		t.Errorf("StartInstances: %s -> %s", got.PreviousState.Name, got.CurrentState.Name)
	}
	e.clock.Advance(3 * time.Second)
	if s := e.describe(id)[0].State.Name; s != "running" {
		t.Errorf("started: %s", s)
	}
	e.clock.Advance(time.Hour)
	if after := ledgerEntry(t, e.srv, id).AccruedUSD; after < before*1.9 {
		t.Errorf("a restarted instance does not bill: %v then %v", before, after)
	}

	spot, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: &amd64, InstanceType: "m6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: subnets[0].SubnetId, InstanceMarketOptions: &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}})
	e.must(err)
	spotID := aws.ToString(spot.Instances[0].InstanceId)
	e.clock.Advance(3 * time.Second)
	gone := e.launch("m6i.large", amd64, subnets[0], 1, nil)[0]
	_, err = e.ec2.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{gone}})
	e.must(err)
	e.clock.Advance(3 * time.Second)
	for _, tc := range []struct{ name, id, code string }{
		{"spot", spotID, "UnsupportedOperation"},
		{"terminated", gone, "IncorrectInstanceState"},
		{"missing", "i-0123456789abcdef0", "InvalidInstanceID.NotFound"},
	} {
		_, err := e.ec2.StopInstances(e.ctx, &ec2.StopInstancesInput{InstanceIds: []string{tc.id}, Force: aws.Bool(true)}, noRetry)
		if got := errCode(err); got != tc.code {
			t.Errorf("StopInstances %s: got %q, want %q", tc.name, got, tc.code)
		}
	}
	if _, err := e.ec2.StartInstances(e.ctx, &ec2.StartInstancesInput{InstanceIds: []string{gone}}, noRetry); errCode(err) != "IncorrectInstanceState" {
		t.Errorf("StartInstances terminated: %v", err)
	}
}

// TestInvestigateMetadataAndConsole: ModifyInstanceMetadataOptions is pending, then
// applied; GetConsoleOutput shows the boot and what the lab appended.
func TestInvestigateMetadataAndConsole(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	ud := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: ziba-production\n    apiServerEndpoint: https://example\n--//\nContent-Type: text/x-shellscript\n\n#!/bin/bash\necho custom step\n--//--\n"
	out, err := e.ec2.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: &amd64, InstanceType: "m6i.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: subnets[0].SubnetId, UserData: aws.String(base64.StdEncoding.EncodeToString([]byte(ud)))})
	e.must(err)
	id := aws.ToString(out.Instances[0].InstanceId)
	e.clock.Advance(3 * time.Second)
	mo, err := e.ec2.ModifyInstanceMetadataOptions(e.ctx, &ec2.ModifyInstanceMetadataOptionsInput{InstanceId: &id,
		HttpTokens: ec2types.HttpTokensStateOptional, HttpPutResponseHopLimit: aws.Int32(3)})
	e.must(err)
	if m := mo.InstanceMetadataOptions; m.State != "pending" || m.HttpTokens != "optional" || aws.ToInt32(m.HttpPutResponseHopLimit) != 3 {
		t.Errorf("ModifyInstanceMetadataOptions: %+v", m)
	}
	if _, err := e.ec2.ModifyInstanceMetadataOptions(e.ctx, &ec2.ModifyInstanceMetadataOptionsInput{InstanceId: &id, HttpPutResponseHopLimit: aws.Int32(65)}, noRetry); errCode(err) != "InvalidParameterValue" {
		t.Errorf("hop limit 65: %v", err)
	}
	e.clock.Advance(3 * time.Second)
	if m := e.describe(id)[0].MetadataOptions; m.State != "applied" || m.HttpTokens != "optional" {
		t.Errorf("after a while: %+v", m)
	}
	e.must(e.srv.AppendConsoleOutput(id, "nodeadm[1790]: error: kubelet failed to start"))
	co, err := e.ec2.GetConsoleOutput(e.ctx, &ec2.GetConsoleOutputInput{InstanceId: &id, Latest: aws.Bool(true)})
	e.must(err)
	b, err := base64.StdEncoding.DecodeString(aws.ToString(co.Output))
	e.must(err)
	for _, want := range []string{"Linux version", "cloud-init", "NodeConfig", "ziba-production", "kubelet failed to start"} {
		if !strings.Contains(string(b), want) && !(want == "NodeConfig" && strings.Contains(string(b), "nodeadm")) {
			t.Errorf("console output lacks %q:\n%s", want, b)
		}
	}
	// The emulator does not run the user data: what its script prints, and cloud-init's
	// end, come from what runs it (the lab's kubelet appends them), never its source text.
	for _, unwanted := range []string{"custom step", "finished at"} {
		if strings.Contains(string(b), unwanted) {
			t.Errorf("console output shows %q, which only running the user data prints:\n%s", unwanted, b)
		}
	}
	if co.Timestamp == nil {
		t.Error("no Timestamp")
	}
	if _, err := e.ec2.GetConsoleOutput(e.ctx, &ec2.GetConsoleOutputInput{InstanceId: aws.String("i-0123456789abcdef0")}, noRetry); errCode(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("missing instance: %v", err)
	}
}
