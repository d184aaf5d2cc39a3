// Package eks emulates Amazon EKS's restJson1 API for the lab's cluster: DescribeCluster
// (GET /clusters/{name}) and ListClusters (GET /clusters), answering the whole shape of
// an ACTIVE cluster (ARN, endpoint, CA, version, network and VPC config, OIDC issuer,
// access config, health, upgrade policy) so Karpenter discovers its endpoint, version and
// service CIDR as it does from AWS.
//
// model.go holds the clusters (set by fakeec2 through SetCluster/RemoveCluster, durable
// in the "eks-clusters" bucket) and never sees HTTP or JSON; wire.go routes and decodes,
// shape.go encodes.
//
// This package imports only fakeec2/account and the standard library. It must not import
// fakeec2 itself, k8s.io, sigs.k8s.io, cluster or labs.
package eks
