// Package kind is the lab's kind backend: a single-node kind cluster named "karplab" created
// with the sigs.k8s.io/kind library, on the container engine kind itself would choose (Docker,
// podman or nerdctl, or KIND_EXPERIMENTAL_PROVIDER's), or on podman where Docker refuses
// privileged containers (package engine). Its node image is kind's default when the engine
// has it, else one built offline here (package nodeimage). Once the cluster is up, it is any
// existing cluster (package existing); the rest of the lab (EC2 emulator, Karpenter,
// simulated kubelet) runs in the karplab daemon against its API server on 127.0.0.1.
//
// It imports the kind library, cluster/backend, cluster/existing and its own subpackages.
package kind
