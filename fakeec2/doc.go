// Package fakeec2 is an EC2 API emulator: an HTTP server speaking the EC2 Query protocol
// (Action=...&Version=2016-11-15, XML responses, EC2 error XML) over an in-memory state that
// is persisted to disk. It holds instances, EBS volumes, ENIs, launch templates, subnets,
// security groups, images, tags, a billing ledger, an audit trail, an IAM-like policy and
// injectable faults.
//
// It knows nothing of Kubernetes: it must not import k8s.io, sigs.k8s.io, cluster or labs.
package fakeec2
