package service

import (
	"fmt"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// StopInstances, StartInstances and ModifyInstanceMetadataOptions: what a person does to
// a running instance. A stop ends compute billing (its volumes keep billing); a start
// boots it again for the boot delay and bills from running.

func (s *Service) stopInstances(c *call) (wire.Response, *wire.Error) {
	return s.changeInstances(c, "StopInstances", []string{"Force", "Hibernate"}, func(in *ec2.Instance) string {
		if in.State == ec2.StateRunning {
			in.State = ec2.StateStopping
			in.StoppedAt = c.now.Add(s.shutdownDelay)
			in.TransitionReason = fmt.Sprintf("User initiated (%s)", c.now.UTC().Format("2006-01-02 15:04:05 GMT"))
			in.StateReason, in.StateReasonCode = "Client.UserInitiatedShutdown: User initiated shutdown", ""
			s.stopLedger(in.ID, c.now)
			s.save(bucketInstances, in.ID, in)
			s.scheduleDeadline(in)
			s.noteStateChange(in, ec2.StateStopping, c.now)
		}
		return in.State
	})
}

func (s *Service) startInstances(c *call) (wire.Response, *wire.Error) {
	return s.changeInstances(c, "StartInstances", nil, func(in *ec2.Instance) string {
		if in.State == ec2.StateStopped {
			in.State = ec2.StatePending
			in.RunningAt = c.now.Add(s.bootDelay)
			in.StoppedAt, in.TransitionReason, in.StateReason, in.StateReasonCode = time.Time{}, "", "", ""
			s.resumeLedger(in.ID, in.RunningAt, in.PricePerHour)
			s.save(bucketInstances, in.ID, in)
			s.scheduleDeadline(in)
			s.noteStateChange(in, ec2.StatePending, c.now)
		}
		return in.State
	})
}

// changeInstances serves the actions that move instances between states (Stop, Start,
// Terminate). InstanceId is required and each of boolParams must be a boolean; every ID
// must exist and the state rules must allow action on it, and DryRun stops there. Then
// move changes each instance and returns the state to report, and the timers that came
// due fire: a zero delay finishes the change at once.
func (s *Service) changeInstances(c *call, action string, boolParams []string, move func(in *ec2.Instance) string) (wire.Response, *wire.Error) {
	ids := c.q.Strs("InstanceId")
	if len(ids) == 0 {
		return nil, wire.Missing("InstanceId")
	}
	for _, p := range boolParams {
		if _, _, err := c.q.Bool(p); err != nil {
			return nil, err
		}
	}
	resp := &wire.StateChangesResponse{}
	aerr := s.mutate(c, func() *wire.Error {
		if e := s.checkInstanceAction(ids, action); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		for _, id := range ids {
			in := s.model.Instances[id]
			prev := in.State
			resp.Instances = append(resp.Instances, wire.StateChange(id, prev, move(in)))
		}
		s.advanceLocked(c.now)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// checkInstanceAction checks that every ID names an instance (checkInstanceIDs) whose
// state allows action (the model's InstanceRefusals). Callers hold s.mu.
func (s *Service) checkInstanceAction(ids []string, action string) *wire.Error {
	if e := s.checkInstanceIDs(ids); e != nil {
		return e
	}
	for _, id := range ids {
		if e := wire.Refuse(ec2.InstanceRefusals, action, s.model.Instances[id]); e != nil {
			return e
		}
	}
	return nil
}

// CodeIncorrectInstanceState answers an action the instance's state does not allow.
const CodeIncorrectInstanceState = ec2.CodeIncorrectInstanceState

// --- ModifyInstanceMetadataOptions ---

// metadataApplyDelay is how long a metadata change stays pending (AWS: "a few seconds").
const metadataApplyDelay = 2 * time.Second

func (s *Service) modifyInstanceMetadataOptions(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("InstanceId")
	if id == "" {
		return nil, wire.Missing("InstanceId")
	}
	tokens, endpoint, v6, tags := c.q.Str("HttpTokens"), c.q.Str("HttpEndpoint"), c.q.Str("HttpProtocolIpv6"), c.q.Str("InstanceMetadataTags")
	if tokens != "" && tokens != "optional" && tokens != "required" {
		return nil, wire.InvalidValue("Value (%s) for parameter HttpTokens is invalid. Valid values: optional, required", tokens)
	}
	for name, v := range map[string]string{"HttpEndpoint": endpoint, "HttpProtocolIpv6": v6, "InstanceMetadataTags": tags} {
		if v != "" && v != "enabled" && v != "disabled" {
			return nil, wire.InvalidValue("Value (%s) for parameter %s is invalid. Valid values: enabled, disabled", v, name)
		}
	}
	hop, hasHop, err := c.q.Int("HttpPutResponseHopLimit")
	if err != nil {
		return nil, err
	}
	if hasHop && (hop < 1 || hop > 64) {
		return nil, wire.InvalidValue("The HttpPutResponseHopLimit value must be between 1 and 64.")
	}
	resp := &wire.ModifyInstanceMetadataOptionsResponse{InstanceID: id}
	aerr := s.mutate(c, func() *wire.Error {
		if e := s.checkInstanceIDs([]string{id}); e != nil {
			return e
		}
		in := s.model.Instances[id]
		if e := wire.Refuse(ec2.InstanceRefusals, "ModifyInstanceMetadataOptions", in); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		md := &in.Metadata
		if tokens != "" {
			md.HTTPTokens = tokens
		}
		if endpoint != "" {
			md.HTTPEndpoint = endpoint
		}
		if v6 != "" {
			md.HTTPProtocolIPv6 = v6
		}
		if tags != "" {
			md.InstanceMetadataTags = tags
		}
		if hasHop {
			md.HTTPPutResponseHopLimit = int32(hop)
		}
		in.MetadataAppliedAt = c.now.Add(metadataApplyDelay)
		s.save(bucketInstances, in.ID, in)
		resp.Options = wire.MetadataOptions(*md, "pending")
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return resp, nil
}

// --- ModifyInstanceAttribute ---

// protectionAttributes are the attributes ModifyInstanceAttribute changes here: termination
// and stop protection, by their request parameter (the SDKs send NAME.Value).
var protectionAttributes = []struct {
	param, attr string
	field       func(*ec2.Instance) *bool
}{
	{"DisableApiTermination", "disableApiTermination", func(in *ec2.Instance) *bool { return &in.DisableAPITermination }},
	{"DisableApiStop", "disableApiStop", func(in *ec2.Instance) *bool { return &in.DisableAPIStop }},
}

func (s *Service) modifyInstanceAttribute(c *call) (wire.Response, *wire.Error) {
	id := c.q.Str("InstanceId")
	if id == "" {
		return nil, wire.Missing("InstanceId")
	}
	type change struct {
		field func(*ec2.Instance) *bool
		v     bool
	}
	var changes []change
	attr := c.q.Str("Attribute") // the older form: Attribute=NAME&Value=V
	for _, p := range protectionAttributes {
		v, ok, err := c.q.Bool(p.param + ".Value")
		if err != nil {
			return nil, err
		}
		if !ok && attr == p.attr {
			if v, ok, err = c.q.Bool("Value"); err != nil {
				return nil, err
			}
		}
		if ok {
			changes = append(changes, change{p.field, v})
		}
	}
	switch {
	case len(changes) > 1:
		return nil, wire.BadRequest(wire.CodeInvalidParameterCombination, "Only one attribute may be modified at a time.")
	case len(changes) == 0:
		return nil, wire.BadRequest("UnsupportedOperation", "This EC2 emulator modifies only the disableApiTermination and disableApiStop attributes (ModifyInstanceAttribute).")
	}
	aerr := s.mutate(c, func() *wire.Error {
		if e := s.checkInstanceIDs([]string{id}); e != nil {
			return e
		}
		if c.dryRun {
			return wire.DryRun()
		}
		in := s.model.Instances[id]
		*changes[0].field(in) = changes[0].v
		s.save(bucketInstances, in.ID, in)
		return nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return &wire.PlainResponse{Return: true}, nil
}
