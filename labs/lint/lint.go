package lint

import (
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"
)

// Rule names a check; they are stable (scripts match them in --json output).
type Rule string

const (
	RuleUnbounded Rule = "unbounded" // no spec.limits, or limits without cpu or memory
	RuleWideOpen  Rule = "wide-open" // a governed requirement key is left unconstrained
	RuleAmbiguous Rule = "ambiguous" // two equal-weight pools admit the same pods
	RuleShadowed  Rule = "shadowed"  // a higher-weight pool takes pods a lower one also admits
)

// Severity says whether a finding fails the lint.
type Severity string

const (
	// SeverityError fails the lint (exit 1).
	SeverityError Severity = "error"
	// SeverityWarning is reported but passes: a weighted overlap states an intended
	// preference, which is the fix the ambiguous rule suggests.
	SeverityWarning Severity = "warning"
)

// Pool is one NodePool to lint and where it came from ("nodepools.yaml:12" or "cluster").
type Pool struct {
	NodePool *karpv1.NodePool
	Source   string
}

// Finding is one problem, with the pools it concerns and how to fix it.
type Finding struct {
	Rule     Rule     `json:"rule"`
	Severity Severity `json:"severity"`
	// NodePools are the pools concerned; for a pair, the one Karpenter tries first comes first.
	NodePools []string `json:"nodePools"`
	Sources   []string `json:"sources,omitempty"`
	Message   string   `json:"message"`
	Fix       string   `json:"fix"`
	// Keys are the wide-open requirement keys (wide-open only).
	Keys []string `json:"keys,omitempty"`
	// Admits is the label set both pools of a pair admit, one requirement per key.
	Admits []string `json:"admits,omitempty"`
	// Taints are the taints a pod must tolerate to be in the overlap (pairs only).
	Taints []string `json:"taints,omitempty"`
}

// Report is the lint's result.
type Report struct {
	NodePools []string  `json:"nodePools"`
	Findings  []Finding `json:"findings"`
	// Notes are things skipped on purpose (documents that are not NodePools).
	Notes []string `json:"notes,omitempty"`
}

// Failed reports whether any finding is an error.
func (r *Report) Failed() bool {
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Lint checks each pool alone, then every pair, in the order Karpenter's provisioner
// tries them (weight, then name descending).
func Lint(pools []Pool) *Report {
	ordered := orderByWeight(pools)
	r := &Report{Findings: []Finding{}}
	for _, p := range ordered {
		r.NodePools = append(r.NodePools, p.NodePool.Name)
		if f, ok := checkLimits(p); ok {
			r.Findings = append(r.Findings, f)
		}
		if f, ok := checkWideOpen(p); ok {
			r.Findings = append(r.Findings, f)
		}
	}
	for i := range ordered {
		for j := i + 1; j < len(ordered); j++ {
			if f, ok := checkOverlap(ordered[i], ordered[j]); ok {
				r.Findings = append(r.Findings, f)
			}
		}
	}
	return r
}

// orderByWeight sorts with core's own comparator, so "tried first" here is what the
// provisioner does.
func orderByWeight(pools []Pool) []Pool {
	nps := make([]*karpv1.NodePool, len(pools))
	byPtr := make(map[*karpv1.NodePool]Pool, len(pools))
	for i, p := range pools {
		nps[i] = p.NodePool
		byPtr[p.NodePool] = p
	}
	nodepoolutils.OrderByWeight(nps)
	out := make([]Pool, len(nps))
	for i, np := range nps {
		out[i] = byPtr[np]
	}
	return out
}
