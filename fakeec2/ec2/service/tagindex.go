package service

import (
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// instanceCandidates narrows a DescribeInstances scan with the index: for the most
// selective exact tag:KEY filter, the instances carrying one of its values. ok is false
// when no filter can use the index.
func (s *Service) instanceCandidates(fs []wire.Filter) (cands []*ec2.Instance, ok bool) {
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
			n += len(s.model.InstTags[key][v])
		}
		if wild || (best >= 0 && n >= best) {
			continue
		}
		best = n
		cands = cands[:0]
		seen := map[string]bool{}
		for _, v := range f.Values {
			for id := range s.model.InstTags[key][v] {
				if !seen[id] {
					seen[id] = true
					if in := s.model.Instances[id]; in != nil {
						cands = append(cands, in)
					}
				}
			}
		}
	}
	return cands, best >= 0
}
