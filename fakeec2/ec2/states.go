package ec2

// Instance states with their EC2 codes.
const (
	StatePending      = "pending"
	StateRunning      = "running"
	StateShuttingDown = "shutting-down"
	StateTerminated   = "terminated"
	StateStopping     = "stopping"
	StateStopped      = "stopped"
)

// StateCodes are the numeric codes EC2 reports with the instance states.
var StateCodes = map[string]int{StatePending: 0, StateRunning: 16, StateShuttingDown: 32, StateTerminated: 48, "stopping": 64, "stopped": 80}

// Volume states and attachment states as EC2 spells them.
const (
	VolCreating  = "creating"
	VolAvailable = "available"
	VolInUse     = "in-use"
	VolDeleting  = "deleting"
	AttAttaching = "attaching"
	AttAttached  = "attached"
	AttDetaching = "detaching"
)

// AttachStatus is the attachment's status ("" for an unattached volume).
func (v *Volume) AttachStatus() string {
	if v.InstanceID == "" {
		return ""
	}
	if v.AttachState == "" {
		return AttAttached // attached at launch
	}
	return v.AttachState
}

// ReasonCode is the code of the instance's state reason: a user's shutdown unless
// something else (a spot interruption) stopped it.
func (in *Instance) ReasonCode() string {
	if in.StateReasonCode != "" {
		return in.StateReasonCode
	}
	return "Client.UserInitiatedShutdown"
}

// ShuttingDownReason is the state reason message while the instance shuts down.
func (in *Instance) ShuttingDownReason() string {
	if in.StateReasonCode != "" {
		return in.StateReason
	}
	return "Client.UserInitiatedShutdown: User initiated shutdown"
}
