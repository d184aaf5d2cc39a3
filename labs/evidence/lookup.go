package evidence

import "strings"

// PodsOf returns the rows of pods in ns whose name starts with prefix (a Deployment's pods).
func (ev *Evidence) PodsOf(ns, prefix string) []PodRow {
	var out []PodRow
	for _, p := range ev.Pods {
		if p.Namespace == ns && strings.HasPrefix(p.Name, prefix+"-") {
			out = append(out, p)
		}
	}
	return out
}

// NodeClaim returns the named NodeClaim's row.
func (ev *Evidence) NodeClaim(name string) (NodeClaimRow, bool) {
	for _, nc := range ev.NodeClaims {
		if nc.Name == name {
			return nc, true
		}
	}
	return NodeClaimRow{}, false
}

// Instance returns the instance's row.
func (ev *Evidence) Instance(id string) (InstanceRow, bool) {
	for _, in := range ev.Instances {
		if in.ID == id {
			return in, true
		}
	}
	return InstanceRow{}, false
}

// Node returns the named Node's row.
func (ev *Evidence) Node(name string) (NodeRow, bool) {
	for _, n := range ev.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeRow{}, false
}

// InstancesOfPool returns the instances launched for a NodePool (by their tag).
func (ev *Evidence) InstancesOfPool(pool string) []InstanceRow {
	var out []InstanceRow
	for _, in := range ev.Instances {
		if in.NodePool == pool {
			out = append(out, in)
		}
	}
	return out
}
