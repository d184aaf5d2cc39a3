// Package account holds what every emulated AWS service of the lab's account shares, as
// moto/core does for moto's services: the Call a router hands a service, the Host (clock,
// IDs, durable store, policy) it is built on, the ID generators (random, and sequential
// for tests), the service-neutral Error and the wire encodings of the protocols the
// services speak (awsJson 1.0/1.1, awsquery XML, restJson1).
//
// A service package (fakeec2/iam, fakeec2/ssm, ...) keeps its models apart from its wire
// layer and imports only this package. It must not import fakeec2 itself, k8s.io,
// sigs.k8s.io, cluster or labs.
package account
