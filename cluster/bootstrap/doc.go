// Package bootstrap renders and parses the node user data the lab's Karpenter provider puts in
// launch templates and the simulated kubelet reads back from the instance: an AL2023 nodeadm
// NodeConfig (MIME part application/node.eks.aws) after any custom shell script from the
// EC2NodeClass, in the MIME multipart layout karpenter-provider-aws uses.
//
// It is the one contract between the provider and the kubelet; it imports k8s.io/api only.
package bootstrap
