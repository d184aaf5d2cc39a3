package evidence

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestUnattached: the cluster's available volume, leaked interface and the snapshot of a
// deleted volume are listed with what they last served and since when; a live instance's
// volume, its snapshot and a volume of another owner are not.
func TestUnattached(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	const gone, live = "i-0aaaaaaaaaaaaaaa1", "i-0bbbbbbbbbbbbbbb2"
	owned := []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/karplab"), Value: aws.String("owned")}, {Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("ziba-general-abcde")}}
	cni := []ec2types.Tag{{Key: aws.String("cluster.k8s.amazonaws.com/name"), Value: aws.String("karplab")}, {Key: aws.String("node.k8s.amazonaws.com/instance_id"), Value: aws.String(gone)}}
	s := &Snapshot{
		TakenAt: at.Add(10 * time.Minute),
		Audit: []trail.AuditEvent{
			{Seq: 1, Time: at, Action: "CreateFleet", Caller: "K", Created: []string{gone, "vol-0data00000000001", "eni-0primary0000001"}},
			{Seq: 2, Time: at, Action: "CreateFleet", Caller: "K", Created: []string{live, "vol-0live00000000002"}},
			{Seq: 3, Time: at.Add(time.Minute), Action: "AttachNetworkInterface", Caller: "N",
				Parameters: map[string]string{"InstanceId": gone, "NetworkInterfaceId": "eni-0secondary00001", "DeviceIndex": "1"}},
			{Seq: 4, Time: at.Add(5 * time.Minute), Action: "TerminateInstances", Caller: "K", Terminated: []string{gone}},
		},
		Billing: billing.Billing{Entries: []billing.LedgerEntry{{ResourceID: "vol-0data00000000001", ResourceType: "volume", PricePerHour: 0.010959, AccruedUSD: 0.0018}}},
		Instances: []ec2types.Instance{
			{InstanceId: aws.String(gone), State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameTerminated}, LaunchTime: aws.Time(at)},
			{InstanceId: aws.String(live), State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameRunning}, LaunchTime: aws.Time(at)},
		},
		Volumes: []ec2types.Volume{
			{VolumeId: aws.String("vol-0data00000000001"), Size: aws.Int32(100), VolumeType: ec2types.VolumeTypeGp3, AvailabilityZone: aws.String("eu-west-2a"),
				State: ec2types.VolumeStateAvailable, CreateTime: aws.Time(at), Tags: owned},
			{VolumeId: aws.String("vol-0live00000000002"), Size: aws.Int32(100), State: ec2types.VolumeStateInUse, CreateTime: aws.Time(at), Tags: owned},
			{VolumeId: aws.String("vol-0theirs00000003"), Size: aws.Int32(8), State: ec2types.VolumeStateAvailable, CreateTime: aws.Time(at)},
		},
		EBSSnapshots: []ec2types.Snapshot{
			{SnapshotId: aws.String("snap-0ofdeleted00001"), VolumeId: aws.String("vol-0deleted0000004"), VolumeSize: aws.Int32(50), StartTime: aws.Time(at.Add(time.Minute)), Tags: owned},
			{SnapshotId: aws.String("snap-0oflive0000002"), VolumeId: aws.String("vol-0live00000000002"), VolumeSize: aws.Int32(100), StartTime: aws.Time(at), Tags: owned},
		},
		ENIs: []ec2types.NetworkInterface{{NetworkInterfaceId: aws.String("eni-0secondary00001"), PrivateIpAddress: aws.String("10.0.32.9"),
			SubnetId: aws.String("subnet-1"), Status: ec2types.NetworkInterfaceStatusAvailable, Description: aws.String("aws-K8S-" + gone), TagSet: cni}},
	}
	ev := Correlate(s)
	type got struct{ Kind, ID, Last, Since string }
	var rows []got
	for _, u := range ev.Unattached {
		rows = append(rows, got{u.Kind, u.ID, u.LastInstance, u.Since.Sub(at).String()})
	}
	want := []got{
		{KindSnapshot, "snap-0ofdeleted00001", "", "1m0s"},
		{KindInterface, "eni-0secondary00001", gone, "5m0s"},
		{KindVolume, "vol-0data00000000001", gone, "5m0s"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("unattached (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	if err := ev.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := ev.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`<a href="#unattached">Unattached (3)</a>`, `volume <code>vol-0data00000000001</code>`, `network-interface <code>eni-0secondary00001</code>`} {
		if !strings.Contains(page.String(), frag) {
			t.Errorf("the page lacks %s", frag)
		}
	}
	for _, line := range []string{"UNATTACHED (1 volume, 1 snapshot, 1 network-interface)", "volume vol-0data00000000001 ", "gp3 100 GiB in eu-west-2a", "0.010959  $0.001800"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("the record lacks %q:\n%s", line, b.String())
		}
	}
}
