// Package nodeclass resolves EC2NodeClasses against the EC2 API and keeps their status
// current: a controller-runtime reconciler (Controller, registered with Karpenter's
// operator manager in the Karpenter child process) built on a Resolver that turns the
// selector terms into subnets, security groups, AMIs (per architecture) and an instance
// profile name with DescribeSubnets, DescribeSecurityGroups and DescribeImages, and sets
// the SubnetsReady, SecurityGroupsReady, AMIsReady, InstanceProfileReady and Ready
// conditions. The controller also stamps the drift hash annotation that the cloud
// provider compares for IsDrifted. Like karpenter-provider-aws it adds no finalizer: the
// lab has no IAM instance profile to clean up.
//
// It talks to EC2 only through the aws-sdk-go-v2 client (the EC2API interface). It must
// not import fakeec2 (tests excepted), cluster/karpenter/cloudprovider or anything that
// starts processes.
package nodeclass
