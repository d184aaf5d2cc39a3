package ec2

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The preconditions of EC2's mutating actions, as the EC2 API reference states them: for
// each action, in order, the states of a resource in which EC2 refuses it and the error it
// answers. Handlers consult Refuse instead of checking on their own, so what AWS refuses is
// read in one place. A rule that joins two resources (a volume and the instance it is
// attached to, a subnet and the interfaces in it) is written over a subject that holds both.

// The codes of the refusals that are not the action's own, as EC2 spells them.
const (
	CodeIncorrectState              = "IncorrectState"
	CodeIncorrectInstanceState      = "IncorrectInstanceState"
	CodeIncorrectModificationState  = "IncorrectModificationState"
	CodeInvalidParameterValue       = "InvalidParameterValue"
	CodeInvalidParameterCombination = "InvalidParameterCombination"
)

// Rule is one rule: when holds for the resource, EC2 answers code with message.
type Rule[T any] struct {
	when    func(T) bool
	code    string
	message func(T) string
}

// Refusal is EC2's refusal of an action: the code and the message it answers.
type Refusal struct {
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// Refuse returns the first rule of action that holds for r; nil when none.
func Refuse[T any](rules map[string][]Rule[T], action string, r T) *Refusal {
	for _, rule := range rules[action] {
		if rule.when(r) {
			return &Refusal{Code: rule.code, Message: rule.message(r)}
		}
	}
	return nil
}

// InstanceRefusals are the rules over an instance, by action.
var InstanceRefusals = map[string][]Rule[*Instance]{
	"StartInstances": {{
		when: func(in *Instance) bool {
			return in.State != StateStopped && in.State != StatePending && in.State != StateRunning
		},
		code: CodeIncorrectInstanceState,
		message: func(in *Instance) string {
			return fmt.Sprintf("The instance '%s' is not in a state from which it can be started.", in.ID)
		},
	}},
	"RebootInstances": {{
		when: func(in *Instance) bool { return in.State != StateRunning },
		code: CodeIncorrectState,
		message: func(in *Instance) string {
			return fmt.Sprintf("The instance '%s' is not in a state from which it can be rebooted.", in.ID)
		},
	}},
	"ModifyInstanceMetadataOptions": {{
		when: func(in *Instance) bool { return in.State == StateShuttingDown || in.State == StateTerminated },
		code: CodeIncorrectInstanceState,
		message: func(in *Instance) string {
			return fmt.Sprintf("The instance '%s' is not in a state from which its metadata options can be modified.", in.ID)
		},
	}},
	"TerminateInstances": {{
		when: func(in *Instance) bool { return in.DisableAPITermination && in.State != StateTerminated },
		code: "OperationNotPermitted",
		message: func(in *Instance) string {
			return fmt.Sprintf("The instance '%s' may not be terminated. Modify its 'disableApiTermination' instance attribute and try again.", in.ID)
		},
	}},
	"StopInstances": {{
		// Every spot instance here comes from a one-time request (instant fleets,
		// RunInstances without a persistent request).
		when: func(in *Instance) bool { return in.CapacityType == "spot" },
		code: "UnsupportedOperation",
		message: func(in *Instance) string {
			return fmt.Sprintf("You can't stop the Spot Instance '%s' because it is associated with a one-time Spot Instance request. You can only stop Spot Instances associated with persistent Spot Instance requests.", in.ID)
		},
	}, {
		when: func(in *Instance) bool { return in.DisableAPIStop },
		code: "OperationNotPermitted",
		message: func(in *Instance) string {
			return fmt.Sprintf("The instance '%s' may not be stopped. Modify its 'disableApiStop' instance attribute and try again.", in.ID)
		},
	}, {
		when: func(in *Instance) bool {
			return in.State != StateRunning && in.State != StateStopping && in.State != StateStopped
		},
		code: CodeIncorrectInstanceState,
		message: func(in *Instance) string {
			return fmt.Sprintf("This instance '%s' is not in a state from which it can be stopped.", in.ID)
		},
	}},
}

// VolumeAt is a volume as a request finds it at the lab's time now.
type VolumeAt struct {
	Volume *Volume
	Now    time.Time
}

// volumeUsable refuses a volume that is being created or deleted.
var volumeUsable = Rule[VolumeAt]{
	when:    func(a VolumeAt) bool { return a.Volume.State != VolAvailable && a.Volume.State != VolInUse },
	code:    CodeIncorrectState,
	message: func(a VolumeAt) string { return fmt.Sprintf("The volume '%s' is '%s'.", a.Volume.ID, a.Volume.State) },
}

// VolumeRefusals are the rules over a volume at the time of the request, by action.
var VolumeRefusals = map[string][]Rule[VolumeAt]{
	"ModifyVolume": {volumeUsable, {
		when:    func(a VolumeAt) bool { return a.Volume.Mod != nil && a.Now.Before(a.Volume.Mod.End) },
		code:    CodeIncorrectModificationState,
		message: func(a VolumeAt) string { return fmt.Sprintf("Volume %s is already being modified.", a.Volume.ID) },
	}},
	"CreateSnapshot": {volumeUsable},
	"DeleteVolume": {{
		when: func(a VolumeAt) bool { return a.Volume.InstanceID != "" },
		code: "VolumeInUse",
		message: func(a VolumeAt) string {
			return fmt.Sprintf("Volume %s is currently attached to %s", a.Volume.ID, a.Volume.InstanceID)
		},
	}, {
		when:    func(a VolumeAt) bool { return a.Volume.State != VolAvailable },
		code:    CodeIncorrectState,
		message: func(a VolumeAt) string { return fmt.Sprintf("The volume '%s' is '%s'.", a.Volume.ID, a.Volume.State) },
	}},
}

// InterfaceRefusals are the rules over a network interface, by action.
var InterfaceRefusals = map[string][]Rule[*NetworkInterface]{
	"DeleteNetworkInterface": {{
		when: func(n *NetworkInterface) bool { return n.InstanceID != "" },
		code: "InvalidNetworkInterface.InUse",
		message: func(n *NetworkInterface) string {
			return fmt.Sprintf("The network interface '%s' is currently in use.", n.ID)
		},
	}},
	"DetachNetworkInterface": {{
		when:    func(n *NetworkInterface) bool { return n.DeviceIndex == 0 },
		code:    "OperationNotPermitted",
		message: func(*NetworkInterface) string { return "The network interface at device index 0 cannot be detached." },
	}},
}

// InterfaceAttachment is an AttachNetworkInterface request: the interface, the instance,
// the device index asked for, the indexes the instance's interfaces take and how many
// interfaces its type allows.
type InterfaceAttachment struct {
	Interface *NetworkInterface
	Instance  *Instance
	Index     int
	Taken     []int
	Max       int
}

// InterfaceAttachRefusals are the rules over an AttachNetworkInterface, by action.
var InterfaceAttachRefusals = map[string][]Rule[InterfaceAttachment]{
	"AttachNetworkInterface": {{
		when:    func(a InterfaceAttachment) bool { return a.Interface.InstanceID != "" },
		code:    "InvalidNetworkInterface.InUse",
		message: func(a InterfaceAttachment) string { return fmt.Sprintf("Interface: [%s] in use.", a.Interface.ID) },
	}, {
		when: func(a InterfaceAttachment) bool {
			return a.Instance.State != StateRunning && a.Instance.State != StateStopped
		},
		code: CodeIncorrectInstanceState,
		message: func(a InterfaceAttachment) string {
			return fmt.Sprintf("The instance '%s' is not in the 'running' or 'stopped' states.", a.Instance.ID)
		},
	}, {
		when: func(a InterfaceAttachment) bool { return a.Interface.Zone != a.Instance.Zone },
		code: CodeInvalidParameterCombination,
		message: func(InterfaceAttachment) string {
			return "You may not attach a network interface to an instance if they are not in the same availability zone"
		},
	}, {
		when: func(a InterfaceAttachment) bool { return a.Interface.VpcID != a.Instance.VpcID },
		code: CodeInvalidParameterCombination,
		message: func(InterfaceAttachment) string {
			return "You may not attach a network interface to an instance if they are not in the same VPC"
		},
	}, {
		when: func(a InterfaceAttachment) bool { return slices.Contains(a.Taken, a.Index) },
		code: CodeInvalidParameterValue,
		message: func(a InterfaceAttachment) string {
			return fmt.Sprintf("Instance '%s' already has an interface attached at device index '%d'.", a.Instance.ID, a.Index)
		},
	}, {
		when: func(a InterfaceAttachment) bool { return len(a.Taken) >= a.Max },
		code: "AttachmentLimitExceeded",
		message: func(a InterfaceAttachment) string {
			return fmt.Sprintf("Interface count %d exceeds the limit for %s", len(a.Taken)+1, a.Instance.InstanceType)
		},
	}},
}

// SnapshotUse is a snapshot's ID and the image whose root it is ("" when none).
type SnapshotUse struct{ ID, Image string }

// SnapshotRefusals are the rules over a snapshot and its use, by action.
var SnapshotRefusals = map[string][]Rule[SnapshotUse]{
	"DeleteSnapshot": {{
		when: func(u SnapshotUse) bool { return u.Image != "" },
		code: "InvalidSnapshot.InUse",
		message: func(u SnapshotUse) string {
			return fmt.Sprintf("The snapshot %s is currently in use by %s", u.ID, u.Image)
		},
	}},
}

// Attachment is an AttachVolume request: the volume, the instance and the device asked for.
type Attachment struct {
	Volume   *Volume
	Instance *Instance
	Device   string
}

// AttachRefusals are the rules over an AttachVolume, by action.
var AttachRefusals = map[string][]Rule[Attachment]{
	"AttachVolume": {{
		when:    func(a Attachment) bool { return a.Volume.InstanceID != "" },
		code:    "VolumeInUse",
		message: func(a Attachment) string { return fmt.Sprintf("%s is already attached to an instance", a.Volume.ID) },
	}, {
		when:    func(a Attachment) bool { return a.Volume.State != VolAvailable },
		code:    CodeIncorrectState,
		message: func(a Attachment) string { return fmt.Sprintf("%s is not 'available'.", a.Volume.ID) },
	}, {
		when:    func(a Attachment) bool { return a.Instance.State != StateRunning && a.Instance.State != StateStopped },
		code:    CodeIncorrectInstanceState,
		message: func(a Attachment) string { return fmt.Sprintf("Instance '%s' is not 'running'.", a.Instance.ID) },
	}, {
		when: func(a Attachment) bool { return a.Instance.Zone != a.Volume.Zone },
		code: "InvalidVolume.ZoneMismatch",
		message: func(a Attachment) string {
			return fmt.Sprintf("The volume '%s' is not in the same availability zone as instance '%s'", a.Volume.ID, a.Instance.ID)
		},
	}, {
		when: func(a Attachment) bool {
			return !strings.HasPrefix(a.Device, "/dev/") && !strings.HasPrefix(a.Device, "xvd")
		},
		code: CodeInvalidParameterValue,
		message: func(a Attachment) string {
			return fmt.Sprintf("Value (%s) for parameter device is invalid. %s is not a valid EBS device name.", a.Device, a.Device)
		},
	}, {
		when: func(a Attachment) bool {
			for _, av := range a.Instance.Volumes {
				if av.DeviceName == a.Device {
					return true
				}
			}
			return false
		},
		code: CodeInvalidParameterValue,
		message: func(a Attachment) string {
			return fmt.Sprintf("Invalid value '%s' for unixDevice. Attachment point %s is already in use", a.Device, a.Device)
		},
	}},
}

// Detachment is a DetachVolume request: the volume, the instance it is attached to (nil
// when none) and the instance and device the request names ("" when it names none).
type Detachment struct {
	Volume             *Volume
	Instance           *Instance
	InstanceID, Device string
}

// DetachRefusals are the rules over a DetachVolume, by action.
var DetachRefusals = map[string][]Rule[Detachment]{
	"DetachVolume": {{
		when: func(d Detachment) bool { return d.Volume.InstanceID == "" },
		code: CodeIncorrectState,
		message: func(d Detachment) string {
			return fmt.Sprintf("Volume '%s' is in the '%s' state.", d.Volume.ID, d.Volume.State)
		},
	}, {
		when: func(d Detachment) bool { return d.InstanceID != "" && d.InstanceID != d.Volume.InstanceID },
		code: "InvalidAttachment.NotFound",
		message: func(d Detachment) string {
			return fmt.Sprintf("Attachment point for volume '%s' and instance '%s' does not exist.", d.Volume.ID, d.InstanceID)
		},
	}, {
		when: func(d Detachment) bool { return d.Device != "" && d.Device != d.Volume.Device },
		code: "InvalidAttachment.NotFound",
		message: func(d Detachment) string {
			return fmt.Sprintf("Attachment point %s for volume '%s' does not exist.", d.Device, d.Volume.ID)
		},
	}, {
		// The root device stays while the instance runs; stopped, it may go.
		when: func(d Detachment) bool {
			return d.Instance != nil && d.Volume.Device == d.Instance.RootDeviceName && d.Instance.State != StateStopped
		},
		code: CodeIncorrectState,
		message: func(d Detachment) string {
			return fmt.Sprintf("Unable to detach root volume '%s' from instance '%s'", d.Volume.ID, d.Instance.ID)
		},
	}, {
		when:    func(d Detachment) bool { return d.Volume.AttachStatus() == AttDetaching },
		code:    CodeIncorrectState,
		message: func(d Detachment) string { return fmt.Sprintf("Volume '%s' is in the 'detaching' state.", d.Volume.ID) },
	}},
}

// GroupUse is a security group and the network interfaces that carry it.
type GroupUse struct {
	Group      *SecurityGroup
	Interfaces []string
}

// GroupRefusals are the rules over a security group and its use, by action.
var GroupRefusals = map[string][]Rule[GroupUse]{
	"DeleteSecurityGroup": {{
		when: func(u GroupUse) bool { return u.Group.Name == "default" },
		code: "CannotDelete",
		message: func(u GroupUse) string {
			return fmt.Sprintf("the specified group: \"%s\" name: \"default\" cannot be deleted by a user", u.Group.ID)
		},
	}, {
		when:    func(u GroupUse) bool { return len(u.Interfaces) > 0 },
		code:    "DependencyViolation",
		message: func(u GroupUse) string { return fmt.Sprintf("resource %s has a dependent object", u.Group.ID) },
	}},
}

// SubnetUse is a subnet and the network interfaces in it.
type SubnetUse struct {
	Subnet     *Subnet
	Interfaces []string
}

// SubnetRefusals are the rules over a subnet and its use, by action.
var SubnetRefusals = map[string][]Rule[SubnetUse]{
	"DeleteSubnet": {{
		when: func(u SubnetUse) bool { return len(u.Interfaces) > 0 },
		code: "DependencyViolation",
		message: func(u SubnetUse) string {
			return fmt.Sprintf("The subnet '%s' has dependencies and cannot be deleted.", u.Subnet.ID)
		},
	}},
}
