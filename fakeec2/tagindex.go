package fakeec2

import (
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// tagIndex maps tag key -> value -> instance IDs, so that DescribeInstances with an exact
// tag:KEY filter looks at the matching instances only instead of scanning them all.
// Callers hold s.mu.
type tagIndex map[string]map[string]map[string]struct{}

func (ix tagIndex) add(id string, tags []ec2.Tag) {
	for _, t := range tags {
		vals := ix[t.Key]
		if vals == nil {
			vals = map[string]map[string]struct{}{}
			ix[t.Key] = vals
		}
		ids := vals[t.Value]
		if ids == nil {
			ids = map[string]struct{}{}
			vals[t.Value] = ids
		}
		ids[id] = struct{}{}
	}
}

func (ix tagIndex) remove(id string, tags []ec2.Tag) {
	for _, t := range tags {
		if ids := ix[t.Key][t.Value]; ids != nil {
			delete(ids, id)
			if len(ids) == 0 {
				delete(ix[t.Key], t.Value)
			}
		}
	}
}

// setInstanceTags replaces an instance's tags, keeping the index in step.
func (s *Server) setInstanceTags(in *ec2.Instance, tags []ec2.Tag) {
	s.instTags.remove(in.ID, in.Tags)
	in.Tags = tags
	s.instTags.add(in.ID, tags)
}

// instanceCandidates narrows a DescribeInstances scan with the index: for the most
// selective exact tag:KEY filter, the instances carrying one of its values. ok is false
// when no filter can use the index.
func (s *Server) instanceCandidates(fs []filter) (cands []*ec2.Instance, ok bool) {
	best := -1
	for _, f := range fs {
		key, isTag := strings.CutPrefix(f.Name, "tag:")
		if !isTag || len(f.Values) == 0 {
			continue
		}
		n := 0
		wild := false
		for _, v := range f.Values {
			if strings.ContainsAny(v, "*?") {
				wild = true
				break
			}
			n += len(s.instTags[key][v])
		}
		if wild || (best >= 0 && n >= best) {
			continue
		}
		best = n
		cands = cands[:0]
		seen := map[string]bool{}
		for _, v := range f.Values {
			for id := range s.instTags[key][v] {
				if !seen[id] {
					seen[id] = true
					if in := s.instances[id]; in != nil {
						cands = append(cands, in)
					}
				}
			}
		}
	}
	return cands, best >= 0
}
