// Package existing is the backend for a Kubernetes cluster the user already has, named by a
// kubeconfig and context. It creates nothing and deletes nothing of the cluster: Start checks
// that the lab can run there (reachable, a version the provider supports, the rights the lab
// needs, no other Karpenter: Check, unless its caller has run it) and writes the lab's own
// kubeconfig; Stop leaves the cluster as it is. The kind backend is this backend after kind
// creates its cluster.
package existing
