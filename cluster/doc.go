// Package cluster holds the Kubernetes side of the lab: the backend interface that brings up
// a Kubernetes API (embedded control plane or kind), the lab daemon that runs the backend,
// the EC2 emulator, the Karpenter controllers and the simulated kubelet together, and the
// files the lab keeps in $KARPLAB_HOME.
//
// It may import fakeec2 and its own subpackages; it must not import labs or cmd.
package cluster
