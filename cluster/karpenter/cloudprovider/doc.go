// Package cloudprovider is the lab's Karpenter cloud provider: it implements
// sigs.k8s.io/karpenter's cloudprovider.CloudProvider for EC2NodeClass NodePools the way
// karpenter-provider-aws does (instance types and offerings from DescribeInstanceTypes,
// DescribeInstanceTypeOfferings and DescribeSpotPriceHistory; a launch template per node
// configuration; CreateFleet type=instant; tags; ICE handling through an unavailable-offerings
// cache), plus the provider's own controllers (leaked-instance garbage collection, instance
// Name tagging).
//
// It talks to EC2 only through the aws-sdk-go-v2 EC2 client (the EC2API interface), never
// to the emulator's Go API; it must not import fakeec2's server internals, labs or cmd.
package cloudprovider
