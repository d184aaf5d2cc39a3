package evidence

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2/trail"
)

// TestOutlivedStorage: a terminated instance's data volume kept on termination and the
// secondary ENI attached after launch still exist; the record lists both under the instance
// as outliving it, while its root volume and primary ENI went with it.
func TestOutlivedStorage(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	const inst = "i-0aaaaaaaaaaaaaaa1"
	s := &Snapshot{
		TakenAt: at.Add(10 * time.Minute),
		Audit: []trail.AuditEvent{
			{Seq: 1, Time: at, Action: "CreateFleet", Caller: "AKIAKARPENTER",
				Created: []string{inst, "vol-0root00000000001", "vol-0data00000000001", "eni-0primary0000001"}},
			{Seq: 2, Time: at.Add(time.Minute), Action: "AttachNetworkInterface", Caller: "AKIACNI",
				Parameters: map[string]string{"InstanceId": inst, "NetworkInterfaceId": "eni-0secondary00001", "DeviceIndex": "1"}},
			{Seq: 3, Time: at.Add(5 * time.Minute), Action: "TerminateInstances", Caller: "AKIAKARPENTER", Terminated: []string{inst}},
		},
		Instances: []ec2types.Instance{{InstanceId: aws.String(inst), InstanceType: "m6i.large",
			State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameTerminated}, LaunchTime: aws.Time(at)}},
		Volumes: []ec2types.Volume{{VolumeId: aws.String("vol-0data00000000001"), Size: aws.Int32(100),
			VolumeType: ec2types.VolumeTypeGp3, State: ec2types.VolumeStateAvailable, Encrypted: aws.Bool(true)}},
		ENIs: []ec2types.NetworkInterface{{NetworkInterfaceId: aws.String("eni-0secondary00001"), PrivateIpAddress: aws.String("10.0.32.9")}},
	}
	ev := Correlate(s)
	if len(ev.Instances) != 1 {
		t.Fatalf("%d instance rows, want 1", len(ev.Instances))
	}
	row := ev.Instances[0]
	outlived := map[string]bool{}
	for _, v := range row.Volumes {
		outlived[v.ID] = v.Outlived
	}
	for _, n := range row.ENIs {
		outlived[n.ID] = n.Outlived
	}
	want := map[string]bool{"vol-0root00000000001": false, "vol-0data00000000001": true, "eni-0primary0000001": false, "eni-0secondary00001": true}
	for id, w := range want {
		got, ok := outlived[id]
		if !ok || got != w {
			t.Errorf("%s: listed %v, outlived %v; want listed, outlived %v", id, ok, got, w)
		}
	}
	var b bytes.Buffer
	if err := ev.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"vol-0data00000000001 100GiB gp3 encrypted (OUTLIVED the instance)", "eni-0secondary00001 (OUTLIVED the instance)", "eni-0primary0000001 (deleted)"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("the record lacks %q:\n%s", line, b.String())
		}
	}
}
