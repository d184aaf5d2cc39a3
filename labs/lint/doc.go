// Package lint checks Karpenter v1 NodePools against the course's checklist item
// "NodePools are mutually understandable, bounded, and do not overlap accidentally":
// unbounded pools, requirements that leave a governed key wide open, and pairs of pools
// that admit the same pods. Overlap is computed with Karpenter core's own
// scheduling.Requirements and its NodePool ordering, not a re-implementation.
//
// It reads NodePools from YAML files or lists them from a cluster through a dynamic
// client. It may import sigs.k8s.io/karpenter, k8s.io client libraries and cluster's API
// types; it must not import cmd or the rest of labs.
package lint
