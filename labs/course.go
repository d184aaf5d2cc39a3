package labs

import "strings"

// The course's names, shared by every lab and by the engine: the seed's render workers in
// the ziba namespace, the general NodePool the learner writes, and the tag that marks the
// cluster's instances.
const (
	zibaNamespace  = "ziba"
	renderWorker   = "ziba-render-worker"
	renderSelector = "app.kubernetes.io/name=ziba-render-worker"
	generalPool    = "ziba-general"
	// clusterTagPrefix starts the tag that marks a cluster's instances
	// (kubernetes.io/cluster/<name>=owned); the name is the lab's (Env.Account).
	clusterTagPrefix = "kubernetes.io/cluster/"
)

// ownedByACluster reports an instance tagged as a cluster's own: the lab's account holds one
// cluster.
func ownedByACluster(tags map[string]string) bool {
	for k, v := range tags {
		if strings.HasPrefix(k, clusterTagPrefix) && v == "owned" {
			return true
		}
	}
	return false
}
