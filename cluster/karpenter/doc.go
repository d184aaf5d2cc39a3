// Package karpenter runs Karpenter in the lab: Run starts Karpenter core's operator with
// the real karpenter-provider-aws v1.15.0, wired as its own main does (provider_aws.go), or
// with the stock kwok provider, in the calling process; Supervisor keeps such a process
// running as a child of the daemon (the same binary re-executed as `karplab internal
// karpenter`); InstallCRDs (the modules' own CRDs) and EnsureKubeDNS install what they need
// in the cluster.
//
// It may import Karpenter core and karpenter-provider-aws; it must not import package
// cluster, labs or cmd.
package karpenter
