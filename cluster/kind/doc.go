// Package kind is the lab's kind backend: a single-node kind cluster named "karplab" created
// with the sigs.k8s.io/kind library, for hosts with a Docker engine. The rest of the lab (EC2
// emulator, Karpenter, simulated kubelet) runs in the karplab daemon against its API server.
//
// It imports the kind library and cluster/backend only.
package kind
