// Package karplab holds the module's own go.mod and go.sum, so the binary can build tools of
// its exact dependency graph when the source tree is not at hand: the kind backend's node
// image builds kubelet, kubeadm and the control plane from the k8s.io/kubernetes version
// these name (cluster/kind/nodeimage). It imports nothing.
package karplab

import _ "embed"

// GoMod is the module's go.mod, with its tool directives for the Kubernetes commands.
//
//go:embed go.mod
var GoMod []byte

// GoSum is the module's go.sum.
//
//go:embed go.sum
var GoSum []byte
