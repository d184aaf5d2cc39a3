package evidence

// tlSource is what one group of lanes shows: a NodeClaim with its instance, node and pods, or
// an instance or node with no NodeClaim, or the pods that never got a machine.
type tlSource struct {
	claim  *NodeClaimRow
	inst   *InstanceRow
	node   *NodeRow
	pods   []*PodRow
	leaked bool
}

// timelineSources groups the evidence by machine: each NodeClaim (creation order) with its
// instance, node and the pods that ran on it or were nominated for it; then nodes and
// instances no NodeClaim explains; and last the pods that never reached a node.
func timelineSources(ev *Evidence) (sources []*tlSource, waiting *tlSource) {
	x := newMachineIndex(ev)
	byClaim := map[string]*tlSource{}
	for i := range ev.NodeClaims {
		s := x.claimSource(&ev.NodeClaims[i])
		byClaim[s.claim.Name] = s
		sources = append(sources, s)
	}
	byNode := map[string]*tlSource{}
	for i := range ev.Pods {
		p := &ev.Pods[i]
		claim := p.NodeClaim
		if claim == "" && p.Node == "" {
			claim = p.NominatedNodeClaim
		}
		switch {
		case byClaim[claim] != nil:
			byClaim[claim].pods = append(byClaim[claim].pods, p)
		case p.Node != "":
			s := byNode[p.Node]
			if s == nil {
				s = x.nodeSource(p)
				byNode[p.Node] = s
				sources = append(sources, s)
			}
			s.pods = append(s.pods, p)
		default:
			if waiting == nil {
				waiting = &tlSource{}
			}
			waiting.pods = append(waiting.pods, p)
		}
	}
	return append(sources, x.unclaimed(ev)...), waiting
}

// machineIndex finds instances and nodes by the identifiers that join them, and remembers
// which ones a source already shows, so each is drawn once.
type machineIndex struct {
	instByID, instByClaim  map[string]*InstanceRow
	nodeByName, nodeByInst map[string]*NodeRow
	leaked                 map[string]bool
	usedInst, usedNode     map[string]bool
}

func newMachineIndex(ev *Evidence) *machineIndex {
	x := &machineIndex{instByID: map[string]*InstanceRow{}, instByClaim: map[string]*InstanceRow{},
		nodeByName: map[string]*NodeRow{}, nodeByInst: map[string]*NodeRow{},
		leaked: leakedInstances(ev), usedInst: map[string]bool{}, usedNode: map[string]bool{}}
	for i := range ev.Instances {
		in := &ev.Instances[i]
		x.instByID[in.ID] = in
		if in.NodeClaim != "" && x.instByClaim[in.NodeClaim] == nil {
			x.instByClaim[in.NodeClaim] = in
		}
	}
	for i := range ev.Nodes {
		n := &ev.Nodes[i]
		x.nodeByName[n.Name] = n
		if n.InstanceID != "" {
			x.nodeByInst[n.InstanceID] = n
		}
	}
	return x
}

// claimSource is a NodeClaim with its instance (by providerID, else by tag) and node.
func (x *machineIndex) claimSource(c *NodeClaimRow) *tlSource {
	s := &tlSource{claim: c, inst: x.instByID[c.InstanceID]}
	if s.inst == nil {
		s.inst = x.instByClaim[c.Name]
	}
	s.node = x.nodeByName[c.NodeName]
	if s.node == nil && s.inst != nil {
		s.node = x.nodeByInst[s.inst.ID]
	}
	if s.inst != nil {
		x.usedInst[s.inst.ID] = true
		s.leaked = x.leaked[s.inst.ID]
	}
	if s.node != nil {
		x.usedNode[s.node.Name] = true
	}
	return s
}

// nodeSource is the node a pod ran on when no NodeClaim explains it, with its instance.
func (x *machineIndex) nodeSource(p *PodRow) *tlSource {
	s := &tlSource{node: x.nodeByName[p.Node]}
	if s.node == nil {
		s.node = &NodeRow{Name: p.Node, InstanceID: p.InstanceID}
	}
	if in := x.instByID[s.node.InstanceID]; in != nil && !x.usedInst[in.ID] {
		s.inst, s.leaked = in, x.leaked[in.ID]
		x.usedInst[in.ID] = true
	}
	x.usedNode[p.Node] = true
	return s
}

// unclaimed are the instances, then the nodes, that no source shows yet.
func (x *machineIndex) unclaimed(ev *Evidence) []*tlSource {
	var out []*tlSource
	for i := range ev.Instances {
		in := &ev.Instances[i]
		if x.usedInst[in.ID] {
			continue
		}
		s := &tlSource{inst: in, leaked: x.leaked[in.ID], node: x.nodeByInst[in.ID]}
		if s.node != nil {
			x.usedNode[s.node.Name] = true
		}
		out = append(out, s)
	}
	for i := range ev.Nodes {
		if n := &ev.Nodes[i]; !x.usedNode[n.Name] {
			out = append(out, &tlSource{node: n})
		}
	}
	return out
}

// heading names a source and sums it up in a line: type, capacity, zone, disruption, pods.
func (s *tlSource) heading() (title, sub, class string) {
	class = "grp"
	switch {
	case s.claim != nil:
		c := s.claim
		title = "NodeClaim " + c.Name
		sub = joinNonEmpty(" · ", c.NodePool, c.InstanceType, c.CapacityType, c.Zone)
		if c.DisruptionReason != "" {
			sub += " · disrupted: " + c.DisruptionReason
		}
		if c.Launched == nil && len(c.Failures) > 0 {
			class += " grp-bad"
			sub = joinNonEmpty(" · ", sub, "launch failed")
		}
	case s.inst != nil:
		title = "Instance " + s.inst.ID
		sub = joinNonEmpty(" · ", s.inst.Type, "no NodeClaim")
	case s.node != nil:
		title = "Node " + s.node.Name
		sub = "no NodeClaim"
	default:
		title = "No node"
		sub = plural(len(s.pods), "pod") + " never scheduled"
		class += " grp-waiting"
	}
	if s.leaked {
		class += " grp-bad"
		sub = joinNonEmpty(" · ", sub, "LEAKED: running with no NodeClaim")
	}
	if n := len(s.pods); n > 0 && (s.claim != nil || s.inst != nil || s.node != nil) {
		sub = joinNonEmpty(" · ", sub, plural(n, "pod"))
	}
	return title, sub, class
}

// rowLine is a compact row's second line: machine, pods, and what went wrong.
func (s *tlSource) rowLine() string {
	var parts []string
	switch {
	case s.claim != nil:
		parts = append(parts, s.claim.InstanceType, s.claim.CapacityType)
	case s.inst != nil:
		parts = append(parts, s.inst.Type, "no NodeClaim")
	default:
		parts = append(parts, "no NodeClaim")
	}
	if len(s.pods) > 0 {
		parts = append(parts, plural(len(s.pods), "pod"))
	}
	if s.claim != nil && s.claim.DisruptionReason != "" {
		parts = append(parts, s.claim.DisruptionReason)
	}
	if s.claim != nil && s.claim.Launched == nil && len(s.claim.Failures) > 0 {
		parts = append(parts, "launch failed")
	}
	if s.leaked {
		parts = append(parts, "LEAKED")
	}
	return joinNonEmpty(" · ", parts...)
}

// pickRows chooses at most n sources to draw, keeping their order: first every one with
// something wrong or changing (failed launch, disruption, deletion, leak), then the earliest.
func pickRows(sources []*tlSource, n int) []*tlSource {
	if len(sources) <= n {
		return sources
	}
	keep := map[*tlSource]bool{}
	for _, s := range sources {
		notable := s.leaked || s.claim == nil ||
			s.claim.DisruptionReason != "" || s.claim.DeletionRequested != nil || len(s.claim.Failures) > 0
		if notable && len(keep) < n {
			keep[s] = true
		}
	}
	for _, s := range sources {
		if len(keep) >= n {
			break
		}
		keep[s] = true
	}
	var out []*tlSource
	for _, s := range sources {
		if keep[s] {
			out = append(out, s)
		}
	}
	return out
}
