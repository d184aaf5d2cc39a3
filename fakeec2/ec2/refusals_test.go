package ec2_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// The tables answer the first rule that holds, in the order EC2 checks them.
func TestRefuse(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		got  *ec2.Refusal
		want *ec2.Refusal
	}{{
		name: "a terminated instance is not started",
		got:  ec2.Refuse(ec2.InstanceRefusals, "StartInstances", &ec2.Instance{ID: "i-1", State: ec2.StateTerminated}),
		want: &ec2.Refusal{Code: "IncorrectInstanceState", Message: "The instance 'i-1' is not in a state from which it can be started."},
	}, {
		name: "a stopped instance is started",
		got:  ec2.Refuse(ec2.InstanceRefusals, "StartInstances", &ec2.Instance{ID: "i-1", State: ec2.StateStopped}),
	}, {
		name: "a one-time spot instance is not stopped, whatever its state",
		got: ec2.Refuse(ec2.InstanceRefusals, "StopInstances",
			&ec2.Instance{ID: "i-1", State: ec2.StateTerminated, CapacityType: "spot", DisableAPIStop: true}),
		want: &ec2.Refusal{Code: "UnsupportedOperation", Message: "You can't stop the Spot Instance 'i-1' because it is associated with a one-time Spot Instance request. You can only stop Spot Instances associated with persistent Spot Instance requests."},
	}, {
		name: "an action without rules is never refused",
		got:  ec2.Refuse(ec2.InstanceRefusals, "DescribeInstances", &ec2.Instance{ID: "i-1", State: ec2.StateTerminated}),
	}, {
		name: "an attached volume is in use before it is in a wrong state",
		got: ec2.Refuse(ec2.VolumeRefusals, "DeleteVolume",
			ec2.VolumeAt{Volume: &ec2.Volume{ID: "vol-1", State: ec2.VolInUse, InstanceID: "i-1"}, Now: now}),
		want: &ec2.Refusal{Code: "VolumeInUse", Message: "Volume vol-1 is currently attached to i-1"},
	}, {
		name: "a volume is modified again only once its modification ended",
		got: ec2.Refuse(ec2.VolumeRefusals, "ModifyVolume", ec2.VolumeAt{Now: now,
			Volume: &ec2.Volume{ID: "vol-1", State: ec2.VolAvailable, Mod: &ec2.VolumeModification{End: now.Add(time.Second)}}}),
		want: &ec2.Refusal{Code: "IncorrectModificationState", Message: "Volume vol-1 is already being modified."},
	}, {
		name: "a volume whose modification ended is modified",
		got: ec2.Refuse(ec2.VolumeRefusals, "ModifyVolume", ec2.VolumeAt{Now: now,
			Volume: &ec2.Volume{ID: "vol-1", State: ec2.VolAvailable, Mod: &ec2.VolumeModification{End: now}}}),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("Refuse (-want +got):\n%s", diff)
			}
		})
	}
}

// A fleet's failed pools are persisted in the shape of the errorSet items fleet records
// were first written with: old state files load and new ones read the same.
func TestFleetErrorJSON(t *testing.T) {
	const persisted = `{"LaunchTemplateAndOverrides":{"LaunchTemplateSpecification":{"LaunchTemplateID":"lt-1","LaunchTemplateName":"","Version":"$Latest"},` +
		`"Overrides":{"InstanceType":"m5.large","MaxPrice":"","SubnetID":"subnet-1","AvailabilityZone":"eu-west-2a","WeightedCapacity":"2","Priority":"","ImageID":""}},` +
		`"Lifecycle":"spot","ErrorCode":"InsufficientInstanceCapacity","ErrorMessage":"no capacity"}`
	w := 2.0
	cfg := ec2.FleetConfig{TemplateID: "lt-1", Version: "$Latest"}
	e := ec2.FleetError{LaunchTemplateAndOverrides: cfg.PoolSpec(ec2.FleetOverride{InstanceType: "m5.large", SubnetID: "subnet-1",
		AvailabilityZone: "eu-west-2a", WeightedCapacity: &w}, true), Lifecycle: "spot", ErrorCode: "InsufficientInstanceCapacity", ErrorMessage: "no capacity"}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(persisted, string(b)); diff != "" {
		t.Errorf("FleetError JSON (-want +got):\n%s", diff)
	}
	var back ec2.FleetError
	if err := json.Unmarshal([]byte(persisted), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, back); diff != "" {
		t.Errorf("FleetError loaded (-want +got):\n%s", diff)
	}
}
