// Package karpenter runs Karpenter in the lab: Run starts Karpenter core's operator and
// controllers in the calling process with the lab's EC2 cloud provider, the stock kwok
// provider, or the real karpenter-provider-aws v1.15.0 wired as its own main does
// (provider_aws.go); Supervisor keeps such a process running as a child of the daemon
// (the same binary re-executed as `karplab internal karpenter`); InstallCRDs and
// EnsureKubeDNS install what they need in the cluster.
//
// It may import cluster/karpenter/..., cluster/bootstrap, karpenter-provider-aws and
// fakeec2 (its published price catalog and its HTTP client); it must not import package
// cluster, labs or cmd.
package karpenter
