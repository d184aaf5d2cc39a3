package fakeec2

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The preconditions of EC2's mutating actions, as the EC2 API reference states them: for
// each action, in order, the states of a resource in which EC2 refuses it and the error it
// answers. Handlers consult refuse instead of checking on their own, so what AWS refuses is
// read in one place. A rule that joins two resources (a volume and the instance it is
// attached to, a subnet and the interfaces in it) is written over a subject that holds both.

// refusal is one rule: when holds for the resource, EC2 answers code with message.
type refusal[T any] struct {
	when    func(T) bool
	code    string
	message func(T) string
}

// refuse returns the first rule of action that holds for r, as EC2's error; nil when none.
func refuse[T any](rules map[string][]refusal[T], action string, r T) *APIError {
	for _, rule := range rules[action] {
		if rule.when(r) {
			return badRequest(rule.code, "%s", rule.message(r))
		}
	}
	return nil
}

var instanceRefusals = map[string][]refusal[*instance]{
	"StartInstances": {{
		when: func(in *instance) bool {
			return in.State != stateStopped && in.State != statePending && in.State != stateRunning
		},
		code: CodeIncorrectInstanceState,
		message: func(in *instance) string {
			return fmt.Sprintf("The instance '%s' is not in a state from which it can be started.", in.ID)
		},
	}},
	"RebootInstances": {{
		when: func(in *instance) bool { return in.State != stateRunning },
		code: CodeIncorrectState,
		message: func(in *instance) string {
			return fmt.Sprintf("The instance '%s' is not in a state from which it can be rebooted.", in.ID)
		},
	}},
	"ModifyInstanceMetadataOptions": {{
		when: func(in *instance) bool { return in.State == stateShuttingDown || in.State == stateTerminated },
		code: CodeIncorrectInstanceState,
		message: func(in *instance) string {
			return fmt.Sprintf("The instance '%s' is not in a state from which its metadata options can be modified.", in.ID)
		},
	}},
	"TerminateInstances": {{
		when: func(in *instance) bool { return in.DisableAPITermination && in.State != stateTerminated },
		code: "OperationNotPermitted",
		message: func(in *instance) string {
			return fmt.Sprintf("The instance '%s' may not be terminated. Modify its 'disableApiTermination' instance attribute and try again.", in.ID)
		},
	}},
	"StopInstances": {{
		// Every spot instance here comes from a one-time request (instant fleets,
		// RunInstances without a persistent request).
		when: func(in *instance) bool { return in.CapacityType == "spot" },
		code: "UnsupportedOperation",
		message: func(in *instance) string {
			return fmt.Sprintf("You can't stop the Spot Instance '%s' because it is associated with a one-time Spot Instance request. You can only stop Spot Instances associated with persistent Spot Instance requests.", in.ID)
		},
	}, {
		when: func(in *instance) bool { return in.DisableAPIStop },
		code: "OperationNotPermitted",
		message: func(in *instance) string {
			return fmt.Sprintf("The instance '%s' may not be stopped. Modify its 'disableApiStop' instance attribute and try again.", in.ID)
		},
	}, {
		when: func(in *instance) bool {
			return in.State != stateRunning && in.State != stateStopping && in.State != stateStopped
		},
		code: CodeIncorrectInstanceState,
		message: func(in *instance) string {
			return fmt.Sprintf("This instance '%s' is not in a state from which it can be stopped.", in.ID)
		},
	}},
}

// volumeAt is a volume as a request finds it at the lab's time now.
type volumeAt struct {
	v   *volume
	now time.Time
}

// volumeUsable refuses a volume that is being created or deleted.
var volumeUsable = refusal[volumeAt]{
	when:    func(a volumeAt) bool { return a.v.State != volAvailable && a.v.State != volInUse },
	code:    CodeIncorrectState,
	message: func(a volumeAt) string { return fmt.Sprintf("The volume '%s' is '%s'.", a.v.ID, a.v.State) },
}

var volumeRefusals = map[string][]refusal[volumeAt]{
	"ModifyVolume": {volumeUsable, {
		when:    func(a volumeAt) bool { return a.v.Mod != nil && a.now.Before(a.v.Mod.End) },
		code:    CodeIncorrectModificationState,
		message: func(a volumeAt) string { return fmt.Sprintf("Volume %s is already being modified.", a.v.ID) },
	}},
	"CreateSnapshot": {volumeUsable},
	"DeleteVolume": {{
		when: func(a volumeAt) bool { return a.v.InstanceID != "" },
		code: "VolumeInUse",
		message: func(a volumeAt) string {
			return fmt.Sprintf("Volume %s is currently attached to %s", a.v.ID, a.v.InstanceID)
		},
	}, {
		when:    func(a volumeAt) bool { return a.v.State != volAvailable },
		code:    CodeIncorrectState,
		message: func(a volumeAt) string { return fmt.Sprintf("The volume '%s' is '%s'.", a.v.ID, a.v.State) },
	}},
}

var interfaceRefusals = map[string][]refusal[*networkInterface]{
	"DeleteNetworkInterface": {{
		when: func(n *networkInterface) bool { return n.InstanceID != "" },
		code: "InvalidNetworkInterface.InUse",
		message: func(n *networkInterface) string {
			return fmt.Sprintf("The network interface '%s' is currently in use.", n.ID)
		},
	}},
	"DetachNetworkInterface": {{
		when:    func(n *networkInterface) bool { return n.DeviceIndex == 0 },
		code:    "OperationNotPermitted",
		message: func(*networkInterface) string { return "The network interface at device index 0 cannot be detached." },
	}},
}

// interfaceAttachment is an AttachNetworkInterface request: the interface, the instance,
// the device index asked for, the indexes the instance's interfaces take and how many
// interfaces its type allows.
type interfaceAttachment struct {
	n     *networkInterface
	in    *instance
	index int
	taken []int
	max   int
}

var interfaceAttachRefusals = map[string][]refusal[interfaceAttachment]{
	"AttachNetworkInterface": {{
		when:    func(a interfaceAttachment) bool { return a.n.InstanceID != "" },
		code:    "InvalidNetworkInterface.InUse",
		message: func(a interfaceAttachment) string { return fmt.Sprintf("Interface: [%s] in use.", a.n.ID) },
	}, {
		when: func(a interfaceAttachment) bool { return a.in.State != stateRunning && a.in.State != stateStopped },
		code: CodeIncorrectInstanceState,
		message: func(a interfaceAttachment) string {
			return fmt.Sprintf("The instance '%s' is not in the 'running' or 'stopped' states.", a.in.ID)
		},
	}, {
		when: func(a interfaceAttachment) bool { return a.n.Zone != a.in.Zone },
		code: CodeInvalidParameterCombination,
		message: func(interfaceAttachment) string {
			return "You may not attach a network interface to an instance if they are not in the same availability zone"
		},
	}, {
		when: func(a interfaceAttachment) bool { return a.n.VpcID != a.in.VpcID },
		code: CodeInvalidParameterCombination,
		message: func(interfaceAttachment) string {
			return "You may not attach a network interface to an instance if they are not in the same VPC"
		},
	}, {
		when: func(a interfaceAttachment) bool { return slices.Contains(a.taken, a.index) },
		code: CodeInvalidParameterValue,
		message: func(a interfaceAttachment) string {
			return fmt.Sprintf("Instance '%s' already has an interface attached at device index '%d'.", a.in.ID, a.index)
		},
	}, {
		when: func(a interfaceAttachment) bool { return len(a.taken) >= a.max },
		code: "AttachmentLimitExceeded",
		message: func(a interfaceAttachment) string {
			return fmt.Sprintf("Interface count %d exceeds the limit for %s", len(a.taken)+1, a.in.InstanceType)
		},
	}},
}

// snapshotUse is a snapshot's ID and the image whose root it is ("" when none).
type snapshotUse struct{ id, image string }

var snapshotRefusals = map[string][]refusal[snapshotUse]{
	"DeleteSnapshot": {{
		when: func(u snapshotUse) bool { return u.image != "" },
		code: "InvalidSnapshot.InUse",
		message: func(u snapshotUse) string {
			return fmt.Sprintf("The snapshot %s is currently in use by %s", u.id, u.image)
		},
	}},
}

// attachment is an AttachVolume request: the volume, the instance and the device asked for.
type attachment struct {
	v      *volume
	in     *instance
	device string
}

var attachRefusals = map[string][]refusal[attachment]{
	"AttachVolume": {{
		when:    func(a attachment) bool { return a.v.InstanceID != "" },
		code:    "VolumeInUse",
		message: func(a attachment) string { return fmt.Sprintf("%s is already attached to an instance", a.v.ID) },
	}, {
		when:    func(a attachment) bool { return a.v.State != volAvailable },
		code:    CodeIncorrectState,
		message: func(a attachment) string { return fmt.Sprintf("%s is not 'available'.", a.v.ID) },
	}, {
		when:    func(a attachment) bool { return a.in.State != stateRunning && a.in.State != stateStopped },
		code:    CodeIncorrectInstanceState,
		message: func(a attachment) string { return fmt.Sprintf("Instance '%s' is not 'running'.", a.in.ID) },
	}, {
		when: func(a attachment) bool { return a.in.Zone != a.v.Zone },
		code: "InvalidVolume.ZoneMismatch",
		message: func(a attachment) string {
			return fmt.Sprintf("The volume '%s' is not in the same availability zone as instance '%s'", a.v.ID, a.in.ID)
		},
	}, {
		when: func(a attachment) bool {
			return !strings.HasPrefix(a.device, "/dev/") && !strings.HasPrefix(a.device, "xvd")
		},
		code: CodeInvalidParameterValue,
		message: func(a attachment) string {
			return fmt.Sprintf("Value (%s) for parameter device is invalid. %s is not a valid EBS device name.", a.device, a.device)
		},
	}, {
		when: func(a attachment) bool {
			for _, av := range a.in.Volumes {
				if av.DeviceName == a.device {
					return true
				}
			}
			return false
		},
		code: CodeInvalidParameterValue,
		message: func(a attachment) string {
			return fmt.Sprintf("Invalid value '%s' for unixDevice. Attachment point %s is already in use", a.device, a.device)
		},
	}},
}

// detachment is a DetachVolume request: the volume, the instance it is attached to (nil
// when none) and the instance and device the request names ("" when it names none).
type detachment struct {
	v                  *volume
	in                 *instance
	instanceID, device string
}

var detachRefusals = map[string][]refusal[detachment]{
	"DetachVolume": {{
		when:    func(d detachment) bool { return d.v.InstanceID == "" },
		code:    CodeIncorrectState,
		message: func(d detachment) string { return fmt.Sprintf("Volume '%s' is in the '%s' state.", d.v.ID, d.v.State) },
	}, {
		when: func(d detachment) bool { return d.instanceID != "" && d.instanceID != d.v.InstanceID },
		code: "InvalidAttachment.NotFound",
		message: func(d detachment) string {
			return fmt.Sprintf("Attachment point for volume '%s' and instance '%s' does not exist.", d.v.ID, d.instanceID)
		},
	}, {
		when: func(d detachment) bool { return d.device != "" && d.device != d.v.Device },
		code: "InvalidAttachment.NotFound",
		message: func(d detachment) string {
			return fmt.Sprintf("Attachment point %s for volume '%s' does not exist.", d.device, d.v.ID)
		},
	}, {
		// The root device stays while the instance runs; stopped, it may go.
		when: func(d detachment) bool {
			return d.in != nil && d.v.Device == d.in.RootDeviceName && d.in.State != stateStopped
		},
		code: CodeIncorrectState,
		message: func(d detachment) string {
			return fmt.Sprintf("Unable to detach root volume '%s' from instance '%s'", d.v.ID, d.in.ID)
		},
	}, {
		when:    func(d detachment) bool { return d.v.attachState() == attDetaching },
		code:    CodeIncorrectState,
		message: func(d detachment) string { return fmt.Sprintf("Volume '%s' is in the 'detaching' state.", d.v.ID) },
	}},
}

// groupUse is a security group and the network interfaces that carry it.
type groupUse struct {
	g          *securityGroup
	interfaces []string
}

var groupRefusals = map[string][]refusal[groupUse]{
	"DeleteSecurityGroup": {{
		when: func(u groupUse) bool { return u.g.Name == "default" },
		code: "CannotDelete",
		message: func(u groupUse) string {
			return fmt.Sprintf("the specified group: \"%s\" name: \"default\" cannot be deleted by a user", u.g.ID)
		},
	}, {
		when:    func(u groupUse) bool { return len(u.interfaces) > 0 },
		code:    "DependencyViolation",
		message: func(u groupUse) string { return fmt.Sprintf("resource %s has a dependent object", u.g.ID) },
	}},
}

// subnetUse is a subnet and the network interfaces in it.
type subnetUse struct {
	sn         *subnet
	interfaces []string
}

var subnetRefusals = map[string][]refusal[subnetUse]{
	"DeleteSubnet": {{
		when: func(u subnetUse) bool { return len(u.interfaces) > 0 },
		code: "DependencyViolation",
		message: func(u subnetUse) string {
			return fmt.Sprintf("The subnet '%s' has dependencies and cannot be deleted.", u.sn.ID)
		},
	}},
}
