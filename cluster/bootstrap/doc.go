// Package bootstrap renders and parses node user data: the contract between a Karpenter
// provider's launch templates and the simulated kubelet that boots the instance.
//
// Render writes what the lab's own provider puts in launch templates: an AL2023 nodeadm
// NodeConfig (MIME part application/node.eks.aws) after any custom shell script from the
// EC2NodeClass, in karpenter-provider-aws's MIME multipart layout. Parse reads that and what
// the real karpenter-provider-aws writes for each AMI family: AL2023 nodeadm MIME (NodeConfig
// decoded strictly with nodeadm's own API types, parts merged as nodeadm merges them), AL2's
// /etc/eks/bootstrap.sh call with its --kubelet-extra-args, and Bottlerocket TOML settings.
//
// It imports k8s.io/api and apimachinery, nodeadm's API types and go-toml; never the kubelet,
// Karpenter or the emulator.
package bootstrap
