package replay

import "k8s.io/apimachinery/pkg/runtime/schema"

// Resources are what a capture lists, in the order a replay creates them: what the others
// refer to first. Secrets and ConfigMaps are never among them.
var Resources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"},
	{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"},
	{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"},
	{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"},
	{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"},
	{Version: "v1", Resource: "nodes"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	{Group: "apps", Version: "v1", Resource: "controllerrevisions"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Version: "v1", Resource: "pods"},
}

// replayedKinds are the kinds a bundle may hold, by apiVersion and kind.
var replayedKinds = map[schema.GroupVersionKind]bool{
	{Version: "v1", Kind: "Namespace"}:                                 true,
	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}: true,
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSINode"}:          true,
	{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}:  true,
	{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}:           true,
	{Group: "karpenter.sh", Version: "v1", Kind: "NodeClaim"}:          true,
	{Version: "v1", Kind: "Node"}:                                      true,
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}:      true,
	{Group: "apps", Version: "v1", Kind: "ControllerRevision"}:         true,
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:                  true,
	{Group: "apps", Version: "v1", Kind: "Deployment"}:                 true,
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:                 true,
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}:                true,
	{Version: "v1", Kind: "Pod"}:                                       true,
}

// leftOutKinds a replay leaves out on purpose, saying so: they would act on the lab's fake
// world (rescale, fire jobs).
var leftOutKinds = map[string]string{
	"HorizontalPodAutoscaler": "it would rescale against the lab's metrics",
	"ScaledObject":            "KEDA would rescale against the lab's metrics",
	"Event":                   "events are read from events.yaml, not replayed",
}
