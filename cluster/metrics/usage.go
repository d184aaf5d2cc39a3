package metrics

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	kwokmetrics "sigs.k8s.io/kwok/pkg/kwok/metrics"
)

// profiles is one snapshot of the cluster's kwok ResourceUsages and ClusterResourceUsages,
// ready to say what each container uses now.
//
// The choice follows kwok's server: the pod's own ResourceUsage (same namespace and name)
// if there is one, else the first ClusterResourceUsage whose selector matches the pod;
// within the chosen object, the usage entry that lists the container, else the first entry
// that lists no container. kwok leaves the order of ClusterResourceUsages to its informer;
// here the ones with a selector come first, then by name, so a lab's targeted profile wins
// over the catch-all default whatever their names.
type profiles struct {
	env      *kwokmetrics.Environment
	pods     map[types.NamespacedName]*internalversion.ResourceUsage
	clusters []*internalversion.ClusterResourceUsage
}

// newEnvironment is kwok's CEL environment for usage expressions (Quantity, Now, Rand,
// pod.SinceSecond(), node.SinceSecond(), UnixSecond). Usage and CumulativeUsage, which
// kwok's Metric objects call, are left out: a usage expression may not depend on usages.
// Results are not cached: an expression may depend on time.
func newEnvironment() (*kwokmetrics.Environment, error) {
	env, err := kwokmetrics.NewEnvironment(kwokmetrics.EnvironmentConfig{})
	if err != nil {
		return nil, fmt.Errorf("creating kwok's CEL environment: %w", err)
	}
	return env, nil
}

func newProfiles(env *kwokmetrics.Environment, rus []*v1alpha1.ResourceUsage, crus []*v1alpha1.ClusterResourceUsage) *profiles {
	p := &profiles{env: env, pods: map[types.NamespacedName]*internalversion.ResourceUsage{}}
	for _, ru := range rus {
		in, err := internalversion.ConvertToInternalResourceUsage(ru)
		if err == nil {
			p.pods[types.NamespacedName{Namespace: ru.Namespace, Name: ru.Name}] = in
		}
	}
	for _, cru := range crus {
		if in, err := internalversion.ConvertToInternalClusterResourceUsage(cru); err == nil {
			p.clusters = append(p.clusters, in)
		}
	}
	slices.SortFunc(p.clusters, func(a, b *internalversion.ClusterResourceUsage) int {
		if (a.Spec.Selector == nil) != (b.Spec.Selector == nil) {
			if a.Spec.Selector != nil {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return p
}

// demand is what a container would use now if nothing held it back: CPU in cores, memory
// in bytes, and the object it comes from ("" when no profile names the container: it
// uses nothing).
type demand struct {
	cpu, memory float64
	source      string
}

// containerDemand evaluates the profile of one container of pod, running on node.
func (p *profiles) containerDemand(ctx context.Context, node *corev1.Node, pod *corev1.Pod, c *corev1.Container) (demand, error) {
	entry, source := p.lookup(pod, c.Name)
	if entry == nil {
		return demand{}, nil
	}
	d := demand{source: source}
	data := kwokmetrics.Data{Node: node, Pod: pod, Container: c}
	for _, r := range []struct {
		name corev1.ResourceName
		dst  *float64
	}{{corev1.ResourceCPU, &d.cpu}, {corev1.ResourceMemory, &d.memory}} {
		v, ok := entry.Usage[string(r.name)]
		if !ok {
			continue
		}
		switch {
		case v.Value != nil:
			*r.dst = v.Value.AsApproximateFloat64()
		case v.Expression != nil:
			eval, err := p.env.Compile(*v.Expression)
			if err != nil {
				return d, fmt.Errorf("%s: %s of container %s: %w", source, r.name, c.Name, err)
			}
			out, err := eval.EvaluateFloat64(ctx, data)
			if err != nil {
				return d, fmt.Errorf("%s: %s of container %s: %w", source, r.name, c.Name, err)
			}
			*r.dst = max(out, 0)
		}
	}
	return d, nil
}

func (p *profiles) lookup(pod *corev1.Pod, container string) (*internalversion.ResourceUsageContainer, string) {
	if ru, ok := p.pods[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]; ok {
		// kwok does not fall back to cluster profiles for a pod that has its own.
		return entryFor(container, ru.Spec.Usages), "ResourceUsage " + ru.Namespace + "/" + ru.Name
	}
	for _, cru := range p.clusters {
		if !cru.Spec.Selector.Match(pod.Name, pod.Namespace) {
			continue
		}
		if e := entryFor(container, cru.Spec.Usages); e != nil {
			return e, "ClusterResourceUsage " + cru.Name
		}
	}
	return nil, ""
}

// entryFor returns the usage entry that lists container, else the first that lists none.
func entryFor(container string, usages []internalversion.ResourceUsageContainer) *internalversion.ResourceUsageContainer {
	var fallback *internalversion.ResourceUsageContainer
	for i := range usages {
		u := &usages[i]
		if len(u.Containers) == 0 {
			if fallback == nil {
				fallback = u
			}
			continue
		}
		if slices.Contains(u.Containers, container) {
			return u
		}
	}
	return fallback
}
