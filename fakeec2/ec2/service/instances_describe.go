package service

import (
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// The instance Describe handlers (DescribeInstances, DescribeInstanceStatus,
// DescribeInstanceAttribute) and their filter tables: they read the model (instances.go:
// launching, state, lookups) and answer it in wire's shapes.

// --- DescribeInstances ---

var instanceAttrs = wire.AttrTable[*ec2.Instance]{
	"instance-id":         func(in *ec2.Instance) []string { return wire.One(in.ID) },
	"instance-type":       func(in *ec2.Instance) []string { return wire.One(in.InstanceType) },
	"instance-state-name": func(in *ec2.Instance) []string { return wire.One(in.State) },
	"instance-state-code": func(in *ec2.Instance) []string { return []string{itoa(ec2.StateCodes[in.State])} },
	"availability-zone":   func(in *ec2.Instance) []string { return wire.One(in.Zone) },
	"availability-zone-id": func(in *ec2.Instance) []string {
		return wire.One(in.ZoneID)
	},
	"subnet-id":          func(in *ec2.Instance) []string { return wire.One(in.SubnetID) },
	"vpc-id":             func(in *ec2.Instance) []string { return wire.One(in.VpcID) },
	"image-id":           func(in *ec2.Instance) []string { return wire.One(in.ImageID) },
	"architecture":       func(in *ec2.Instance) []string { return wire.One(in.Architecture) },
	"private-ip-address": func(in *ec2.Instance) []string { return wire.One(in.PrivateIP) },
	"private-dns-name":   func(in *ec2.Instance) []string { return wire.One(in.PrivateDNS) },
	"reservation-id":     func(in *ec2.Instance) []string { return wire.One(in.ReservationID) },
	"owner-id":           func(in *ec2.Instance) []string { return wire.One(in.OwnerID) },
	"key-name":           func(in *ec2.Instance) []string { return wire.One(in.KeyName) },
	"client-token":       func(in *ec2.Instance) []string { return wire.One(in.ClientToken) },
	"launch-time":        func(in *ec2.Instance) []string { return wire.One(wire.FormatTime(in.LaunchTime)) },
	"instance-lifecycle": func(in *ec2.Instance) []string {
		if in.CapacityType == "spot" {
			return wire.One("spot")
		}
		return nil
	},
	"spot-instance-request-id": func(in *ec2.Instance) []string { return wire.One(in.SpotRequestID) },
	"iam-instance-profile.arn": func(in *ec2.Instance) []string { return wire.One(in.IAMProfileArn) },
	"network-interface.network-interface-id": func(in *ec2.Instance) []string {
		return wire.One(in.ENIID)
	},
	"block-device-mapping.volume-id": func(in *ec2.Instance) []string {
		var out []string
		for _, v := range in.Volumes {
			out = append(out, v.VolumeID)
		}
		return out
	},
	"instance.group-id":              func(in *ec2.Instance) []string { return in.SecurityGroups },
	"group-id":                       func(in *ec2.Instance) []string { return in.SecurityGroups },
	"metadata-options.http-tokens":   func(in *ec2.Instance) []string { return wire.One(in.Metadata.HTTPTokens) },
	"metadata-options.http-endpoint": func(in *ec2.Instance) []string { return wire.One(in.Metadata.HTTPEndpoint) },
	"root-device-type":               func(in *ec2.Instance) []string { return wire.One("ebs") },
	"root-device-name":               func(in *ec2.Instance) []string { return wire.One(in.RootDeviceName) },
	"hypervisor":                     func(in *ec2.Instance) []string { return wire.One("xen") },
	"virtualization-type":            func(in *ec2.Instance) []string { return wire.One("hvm") },
	"tenancy":                        func(in *ec2.Instance) []string { return wire.One("default") },
	"placement-group-name":           func(in *ec2.Instance) []string { return nil },
	"platform-details":               func(in *ec2.Instance) []string { return wire.One("Linux/UNIX") },
}

// describeInstances keeps its own shape: it answers reservations, and narrows by the tag
// index before filtering.
func (s *Service) describeInstances(c *call) (wire.Response, *wire.Error) {
	fs, err := c.q.Filters()
	if err != nil {
		return nil, err
	}
	pred, err := wire.CompileFilters(fs, instanceAttrs, func(in *ec2.Instance) []ec2.Tag { return in.Tags })
	if err != nil {
		return nil, err
	}
	p, err := wire.PageParams(c.q, 5, 1000)
	if err != nil {
		return nil, err
	}
	ids := c.q.Strs("InstanceId")
	if len(ids) > 0 && p.Max > 0 {
		return nil, wire.BadRequest(wire.CodeInvalidParameterCombination, "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var items []*ec2.Instance
	if len(ids) > 0 {
		if e := s.checkInstanceIDs(ids); e != nil {
			return nil, e
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				if in := s.model.Instances[id]; pred(in) {
					items = append(items, in)
				}
			}
		}
	} else if cands, ok := s.instanceCandidates(fs); ok {
		items = filterSlice(cands, pred)
	} else {
		for _, in := range s.model.Instances {
			if pred(in) {
				items = append(items, in)
			}
		}
	}
	seq := func(in *ec2.Instance) uint64 { return in.Seq }
	ec2.BySeq(items, seq)
	page, next := wire.Paginate(items, seq, p)
	return &wire.DescribeInstancesResponse{Reservations: s.env().Reservations(page), NextToken: next}, nil
}

// --- DescribeInstanceStatus ---

var instanceStatusAttrs = wire.AttrTable[*ec2.Instance]{
	"availability-zone":            func(in *ec2.Instance) []string { return wire.One(in.Zone) },
	"instance-state-name":          func(in *ec2.Instance) []string { return wire.One(in.State) },
	"instance-state-code":          func(in *ec2.Instance) []string { return []string{itoa(ec2.StateCodes[in.State])} },
	"instance-status.status":       func(in *ec2.Instance) []string { return wire.One(wire.InstanceHealth(in)) },
	"system-status.status":         func(in *ec2.Instance) []string { return wire.One(wire.InstanceHealth(in)) },
	"instance-status.reachability": func(in *ec2.Instance) []string { return wire.One(wire.Reachability(in)) },
	"system-status.reachability":   func(in *ec2.Instance) []string { return wire.One(wire.Reachability(in)) },
	// The lab schedules no events, so every event filter matches nothing.
	"event.code":                       noValues,
	"event.description":                noValues,
	"event.instance-event-id":          noValues,
	"event.not-after":                  noValues,
	"event.not-before":                 noValues,
	"event.not-before-deadline":        noValues,
	"operator.managed":                 func(*ec2.Instance) []string { return wire.One("false") },
	"operator.principal":               noValues,
	"attached-ebs-status.status":       func(in *ec2.Instance) []string { return wire.One(wire.InstanceHealth(in)) },
	"attached-ebs-status.reachability": func(in *ec2.Instance) []string { return wire.One(wire.Reachability(in)) },
}

func noValues(*ec2.Instance) []string { return nil }

func (s *Service) describeInstanceStatus(c *call) (wire.Response, *wire.Error) {
	var all bool
	req, err := wire.ParseDescribe(c.q, wire.Describe[*ec2.Instance]{Attrs: instanceStatusAttrs, Min: 5, Max: 1000,
		Params: func(q *wire.Query) (e *wire.Error) {
			all, _, e = q.Bool("IncludeAllInstances")
			return e
		},
		IDParam: "InstanceId", WithMax: wire.SetWithMax("instancesSet"), CheckIDs: s.checkInstanceIDs, Dedupe: true,
		Keep: func(in *ec2.Instance) bool { return all || in.State == ec2.StateRunning },
		Seq:  func(in *ec2.Instance) uint64 { return in.Seq }})
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	page, next, err := req.Run(s.model.Instances, wire.InstanceNotFound)
	if err != nil {
		return nil, err
	}
	return &wire.DescribeInstanceStatusResponse{Statuses: wire.Items(page, wire.InstanceStatus), NextToken: next}, nil
}

// --- DescribeInstanceAttribute ---

func (s *Service) describeInstanceAttribute(c *call) (wire.Response, *wire.Error) {
	id, attr := c.q.Str("InstanceId"), c.q.Str("Attribute")
	if id == "" {
		return nil, wire.Missing("InstanceId")
	}
	if attr == "" {
		return nil, wire.Missing("Attribute")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.checkInstanceIDs([]string{id}); e != nil {
		return nil, e
	}
	resp, ok := s.env().InstanceAttribute(s.model.Instances[id], attr)
	if !ok {
		return nil, wire.InvalidValue("Value (%s) for parameter attribute is invalid. Unknown attribute.", attr)
	}
	return resp, nil
}
