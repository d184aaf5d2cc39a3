package fakeec2

import "fmt"

// The preconditions of EC2's mutating actions, as the EC2 API reference states them: for
// each action, in order, the states of a resource in which EC2 refuses it and the error it
// answers. Handlers consult refuse instead of checking on their own, so what AWS refuses is
// read in one place. The rules that join two resources (AttachVolume's zones, DetachVolume's
// root device of a running instance, AttachNetworkInterface) stay beside their handlers.

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

var volumeRefusals = map[string][]refusal[*volume]{
	"DeleteVolume": {{
		when: func(v *volume) bool { return v.InstanceID != "" },
		code: "VolumeInUse",
		message: func(v *volume) string {
			return fmt.Sprintf("Volume %s is currently attached to %s", v.ID, v.InstanceID)
		},
	}, {
		when:    func(v *volume) bool { return v.State != volAvailable },
		code:    CodeIncorrectState,
		message: func(v *volume) string { return fmt.Sprintf("The volume '%s' is '%s'.", v.ID, v.State) },
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
}
