// Package bootstrap renders and parses node user data: the contract between a Karpenter
// provider's launch templates and the simulated kubelet that boots the instance.
//
// Parse reads what karpenter-provider-aws writes into launch templates for each AMI family: AL2023 nodeadm MIME (NodeConfig
// decoded strictly with nodeadm's own API types, parts merged as nodeadm merges them), AL2's
// /etc/eks/bootstrap.sh call with its --kubelet-extra-args, and Bottlerocket TOML settings.
// Render writes an AL2023 nodeadm NodeConfig after a custom shell script in the provider's
// MIME multipart layout, for an instance launched by hand or by a test.
//
// It imports k8s.io/api and apimachinery, nodeadm's API types and go-toml; never the kubelet,
// Karpenter or the emulator.
package bootstrap
