package lint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	// Registers the provider's instance labels (instance-category, -generation, ...) as
	// well known, as the lab's Karpenter does, so an undefined one means "any value".
	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

func checkLimits(p Pool) (Finding, bool) {
	limits := p.NodePool.Spec.Limits
	var missing []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := limits[name]; !ok {
			missing = append(missing, "spec.limits."+string(name))
		}
	}
	if len(missing) == 0 {
		return Finding{}, false
	}
	msg := "no spec.limits: one malformed pod can buy unbounded capacity"
	if len(limits) > 0 {
		msg = "spec.limits has no " + strings.Join(missing, " or ") + ": that resource is unbounded"
	}
	return Finding{
		Rule: RuleUnbounded, Severity: SeverityError,
		NodePools: []string{p.NodePool.Name}, Sources: []string{p.Source},
		Message: msg,
		Fix:     "add " + strings.Join(missing, " and ") + ` (the course's: cpu "200", memory 800Gi)`,
	}, true
}

// governed is a key the course says to constrain, with the keys that also pin it (an
// instance-type list pins category, family and generation) and the course's own values.
type governed struct {
	what    string
	keys    []string
	example string
}

var governedKeys = []governed{
	{"architecture", []string{corev1.LabelArchStable}, corev1.LabelArchStable + " In [amd64 arm64]"},
	{"capacity type", []string{karpv1.CapacityTypeLabelKey}, karpv1.CapacityTypeLabelKey + " In [spot on-demand]"},
	{"instance category/family", []string{awsv1.LabelInstanceCategory, awsv1.LabelInstanceFamily, corev1.LabelInstanceTypeStable}, awsv1.LabelInstanceCategory + " In [c m r]"},
	{"generation", []string{awsv1.LabelInstanceGeneration, awsv1.LabelInstanceFamily, corev1.LabelInstanceTypeStable}, awsv1.LabelInstanceGeneration + " Gt 5"},
	{"zones", []string{corev1.LabelTopologyZone, awsv1.LabelTopologyZoneID}, corev1.LabelTopologyZone + " In [eu-west-2a eu-west-2b eu-west-2c]"},
}

func checkWideOpen(p Pool) (Finding, bool) {
	reqs := requirements(p.NodePool)
	var open, keys, examples []string
	for _, g := range governedKeys {
		if slices.ContainsFunc(g.keys, func(k string) bool { return constrained(reqs, k) }) {
			continue
		}
		how := "not set"
		if reqs.Has(g.keys[0]) {
			how = string(reqs.Get(g.keys[0]).Operator()) + " leaves other values open"
		}
		open = append(open, fmt.Sprintf("%s (%s: %s)", g.what, g.keys[0], how))
		keys = append(keys, g.keys[0])
		examples = append(examples, g.example)
	}
	if len(open) == 0 {
		return Finding{}, false
	}
	return Finding{
		Rule: RuleWideOpen, Severity: SeverityError,
		NodePools: []string{p.NodePool.Name}, Sources: []string{p.Source},
		Message: "requirements leave " + strings.Join(open, ", ") + " wide open",
		Fix:     "add to spec.template.spec.requirements: " + strings.Join(examples, "; ") + " (the course's values)",
		Keys:    keys,
	}, true
}

// constrained means a finite value list or a numeric bound: NotIn and Exists admit any
// value nobody thought of.
func constrained(reqs scheduling.Requirements, key string) bool {
	if !reqs.Has(key) {
		return false
	}
	switch reqs.Get(key).NodeSelectorRequirement().Operator {
	case corev1.NodeSelectorOpIn, karpv1.NodeSelectorOpGte, karpv1.NodeSelectorOpLte:
		return true
	}
	return false
}

// requirements are the pool's as its NodeClaimTemplate builds them: spec requirements
// layered with the template's labels (core's nodeclaimtemplate.go). The karpenter.sh/nodepool
// label core adds is left out: pods that do not name a pool are the point.
func requirements(np *karpv1.NodePool) scheduling.Requirements {
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	reqs.Add(scheduling.NewLabelRequirements(np.Spec.Template.Labels).Values()...)
	return reqs
}

// checkOverlap reports whether some pod fits both pools. first is the pool Karpenter tries
// first. Core admits a pod into a pool when each key the pod constrains intersects the
// pool's (a key only the pool names does not keep out a pod that leaves it unset), so two
// untainted pools always share the pods that constrain nothing: requirements that differ
// only steer pods that select them. A pod must tolerate a pool's taints to fit it.
func checkOverlap(first, second Pool) (Finding, bool) {
	a, b := requirements(first.NodePool), requirements(second.NodePool)
	taints := append(slices.Clone(first.NodePool.Spec.Template.Spec.Taints), second.NodePool.Spec.Template.Spec.Taints...)
	differ := disjointKeys(a, b)
	if len(differ) > 0 && len(taints) > 0 {
		// A pod in both would have to tolerate the taints and leave the split keys unset on
		// purpose: no accident.
		return Finding{}, false
	}
	admits := intersection(a, b, differ)
	taintStrs := taintStrings(taints)
	names := []string{first.NodePool.Name, second.NodePool.Name}
	f := Finding{
		NodePools: names, Sources: []string{first.Source, second.Source},
		Admits: admits, Taints: taintStrs,
	}
	who := "both admit " + strings.Join(admits, ", ")
	if len(admits) == 0 {
		who = "both admit any pod (neither constrains a key the other does)"
	}
	if len(differ) > 0 {
		who = "both admit every pod that leaves " + strings.Join(differ, ", ") + " unset (pods that select nothing included)"
		if len(admits) > 0 {
			who += ", within " + strings.Join(admits, ", ")
		}
	}
	if len(taintStrs) > 0 {
		who += " for pods that tolerate " + strings.Join(taintStrs, ", ")
	}
	wa, wb := weight(first.NodePool), weight(second.NodePool)
	if wa == wb {
		f.Rule, f.Severity = RuleAmbiguous, SeverityError
		f.Message = fmt.Sprintf("%s; with equal weight %d Karpenter tries %s first only because its name sorts later (core orders equal weights by name, descending)",
			who, wa, names[0])
		f.Fix = ambiguousFix(first, second, differ)
		return f, true
	}
	f.Rule, f.Severity = RuleShadowed, SeverityWarning
	f.Message = fmt.Sprintf("%s; %s (weight %d) is tried first, so %s (weight %d) only gets those pods when %s cannot take them (limits reached, no instance type fits)",
		who, names[0], wa, names[1], wb, names[0])
	f.Fix = fmt.Sprintf("nothing, if %s is meant as the fallback; otherwise taint one of them", names[1])
	if len(differ) == 0 {
		f.Fix = fmt.Sprintf("nothing, if %s is meant as the fallback; otherwise make the requirements disjoint", names[1])
	}
	return f, true
}

// disjointKeys are the keys both pools name with no value in common: a pod selecting one
// of them fits one pool at most.
func disjointKeys(a, b scheduling.Requirements) []string {
	var out []string
	for _, key := range a.Keys().Intersection(b.Keys()).UnsortedList() {
		if scheduling.NewRequirements(a.Get(key)).Intersects(scheduling.NewRequirements(b.Get(key))) != nil {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

func ambiguousFix(first, second Pool, differ []string) string {
	ta, tb := len(first.NodePool.Spec.Template.Spec.Taints) > 0, len(second.NodePool.Spec.Template.Spec.Taints) > 0
	switch {
	case !ta && !tb:
		// Which pool is meant for the pods that select nothing is the owners' call; say both ways.
		f, s := first.NodePool.Name, second.NodePool.Name
		fix := fmt.Sprintf("pods that select nothing go to %s today; if they belong on %s, taint %s (its own workloads tolerate it) or give %s a higher weight; if on %s, give it the higher weight", f, s, f, s, f)
		if len(differ) == 0 {
			fix += ", or make the requirements disjoint for the pods that select"
		}
		return fix
	case ta != tb:
		tainted := first.NodePool.Name
		if tb {
			tainted = second.NodePool.Name
		}
		return fmt.Sprintf("give %s a higher weight so pods that tolerate its taints prefer it, or make the requirements disjoint", tainted)
	default:
		return "make the requirements disjoint, or give one a higher weight"
	}
}

func weight(np *karpv1.NodePool) int32 {
	if np.Spec.Weight == nil {
		return 0
	}
	return *np.Spec.Weight
}

// keyOrder prints the course's keys in the course's order, then the rest sorted.
var keyOrder = []string{
	corev1.LabelArchStable, corev1.LabelOSStable, karpv1.CapacityTypeLabelKey,
	awsv1.LabelInstanceCategory, awsv1.LabelInstanceFamily, awsv1.LabelInstanceGeneration,
	corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone,
}

// intersection is the label set a pod can ask for and fit both: per key both name, core's
// Requirement.Intersection; a well-known key only one names is open in the other, so that
// side's values; a custom key only one names cannot be asked for without leaving the other.
func intersection(a, b scheduling.Requirements, skip []string) []string {
	merged := map[string]*scheduling.Requirement{}
	for _, key := range a.Keys().Union(b.Keys()).UnsortedList() {
		switch {
		case slices.Contains(skip, key):
			continue
		case a.Has(key) && b.Has(key):
			merged[key] = a.Get(key).Intersection(b.Get(key))
		case !karpv1.WellKnownLabels.Has(key):
			continue
		case a.Has(key):
			merged[key] = a.Get(key)
		default:
			merged[key] = b.Get(key)
		}
	}
	var out []string
	for _, key := range keyOrder {
		if r, ok := merged[key]; ok {
			out = append(out, formatRequirement(r))
			delete(merged, key)
		}
	}
	rest := make([]string, 0, len(merged))
	for _, r := range merged {
		rest = append(rest, formatRequirement(r))
	}
	slices.Sort(rest)
	return append(out, rest...)
}

var upperBound = regexp.MustCompile(` <=(-?\d+)`)

// formatRequirement prints "key=v", "key in (a, b)", "key notin (a)", "key>=6".
func formatRequirement(r *scheduling.Requirement) string {
	nsr := r.NodeSelectorRequirement()
	var s string
	switch nsr.Operator {
	case corev1.NodeSelectorOpIn:
		if len(nsr.Values) == 1 {
			s = nsr.Key + "=" + nsr.Values[0]
		} else {
			s = nsr.Key + " in (" + strings.Join(nsr.Values, ", ") + ")"
		}
	case corev1.NodeSelectorOpNotIn:
		s = nsr.Key + " notin (" + strings.Join(nsr.Values, ", ") + ")"
	case corev1.NodeSelectorOpExists:
		s = nsr.Key + " exists"
	case corev1.NodeSelectorOpDoesNotExist:
		s = "!" + nsr.Key
	case karpv1.NodeSelectorOpGte:
		s = nsr.Key + ">=" + nsr.Values[0]
	case karpv1.NodeSelectorOpLte:
		return nsr.Key + "<=" + nsr.Values[0]
	}
	// NodeSelectorRequirement shows only the lower of two bounds; String() has both.
	if m := upperBound.FindStringSubmatch(r.String()); m != nil {
		s += ", " + nsr.Key + "<=" + m[1]
	}
	return s
}

func taintStrings(taints []corev1.Taint) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		s += ":" + string(t.Effect)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
