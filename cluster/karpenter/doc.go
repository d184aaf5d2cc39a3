// Package karpenter runs Karpenter in the lab: Run starts Karpenter core's operator and
// controllers in the calling process with the lab's EC2 cloud provider (or the stock kwok
// provider), Supervisor keeps such a process running as a child of the daemon (the same
// binary re-executed as `karplab internal karpenter`), and InstallCRDs installs the CRDs
// they need.
//
// It may import cluster/karpenter/..., cluster/bootstrap and fakeec2 (its published price
// catalog and its HTTP client); it must not import package cluster, labs or cmd.
package karpenter
