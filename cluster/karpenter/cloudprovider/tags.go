package cloudprovider

import (
	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
)

// Tag keys and annotations beyond apis/v1's, as karpenter-provider-aws writes them. The
// karpenter.k8s.aws labels (and their registration with Karpenter core) live in apis/v1.
const (
	// TagLaunchTemplateCluster is on launch templates: the cluster that owns it.
	TagLaunchTemplateCluster = apisv1.Group + "/cluster"
	// AnnotationInstanceTagged marks a NodeClaim whose instance got its Name tag (the Node
	// name) after registration, as the real provider's tagging controller does.
	AnnotationInstanceTagged = apisv1.Group + "/tagged"

	clusterTagPrefix     = "kubernetes.io/cluster/"
	launchTemplatePrefix = apisv1.Group // launch templates are named karpenter.k8s.aws/<hash>
)

// ClusterTagKey is the kubernetes.io/cluster/<name> tag every lab resource carries ("owned").
func ClusterTagKey(clusterName string) string { return clusterTagPrefix + clusterName }
