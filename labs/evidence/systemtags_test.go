package evidence

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
)

// An instance EC2 launched for a fleet from a template carries its system tags; the
// evidence reads them, and a leaked one names the fleet that launched it.
func TestLeakNamesTheFleetThatLaunchedIt(t *testing.T) {
	launched := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	tag := func(k, v string) ec2types.Tag { return ec2types.Tag{Key: aws.String(k), Value: aws.String(v)} }
	snap := &Snapshot{TakenAt: launched.Add(time.Hour), Instances: []ec2types.Instance{{
		InstanceId: aws.String("i-0leak"), InstanceType: "m6i.large", LaunchTime: aws.Time(launched),
		State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameRunning},
		Tags: []ec2types.Tag{tag("kubernetes.io/cluster/karplab", "owned"), tag("karpenter.sh/nodeclaim", "ziba-general-gone"),
			tag(fakeec2.TagFleetID, "fleet-0abc"), tag(fakeec2.TagLaunchTemplateID, "lt-0def"), tag(fakeec2.TagLaunchTemplateVersion, "3")},
	}}}
	ev := Correlate(snap)
	if len(ev.Instances) != 1 || ev.Instances[0].FleetID != "fleet-0abc" || ev.Instances[0].LaunchTemplate != "lt-0def:3" {
		t.Fatalf("instance rows %+v, want fleet-0abc launched from lt-0def:3", ev.Instances)
	}
	if len(ev.Leaks) != 1 || ev.Leaks[0].FleetID != "fleet-0abc" {
		t.Fatalf("leaks %+v, want i-0leak launched by fleet-0abc", ev.Leaks)
	}
	var text strings.Builder
	if err := ev.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "ziba-general-gone (fleet fleet-0abc)") {
		t.Errorf("the leak table does not name the fleet:\n%s", text.String())
	}
}
