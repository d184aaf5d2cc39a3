package labs

import "github.com/karplab/karplab/cluster"

// The course's names, shared by every lab and by the engine: the seed's render workers in
// the ziba namespace, the general NodePool the learner writes, and the tag that marks the
// cluster's instances.
const (
	zibaNamespace  = "ziba"
	renderWorker   = "ziba-render-worker"
	renderSelector = "app.kubernetes.io/name=ziba-render-worker"
	generalPool    = "ziba-general"
	// clusterOwnedTag marks the cluster's instances (kubernetes.io/cluster/<name>=owned).
	clusterOwnedTag = "kubernetes.io/cluster/" + cluster.ClusterName
)
