// Package authz holds the account's IAM-like policy and its rules: the Policy and its
// statements (plain values persisted as JSON: their field names and tags are the state
// file's and the admin API's format), Authorize for any service's action on a resource,
// the launch conditions (CheckLaunch, CheckPlacement) EC2 applies before it creates
// anything, and EncodeMessage, the opaque text an UnauthorizedOperation carries.
// controllerpolicy.go holds KarpenterControllerPolicy, the statement the lab gives
// Karpenter's controller by default.
//
// It needs no server, lock or store: fakeec2 (the root) holds the policy in force under
// its lock and calls these rules, for EC2 (fakeec2/ec2/service) and the other services. It imports only fakeec2/ec2 (the model), fakeec2/ec2/wire
// (its wildcard matcher) and the standard library: never fakeec2 itself, k8s.io,
// sigs.k8s.io, cluster or labs.
package authz
