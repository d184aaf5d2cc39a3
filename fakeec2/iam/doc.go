// Package iam emulates the part of AWS IAM that Karpenter's AWS provider calls (instance
// profiles and the roles they carry) over the awsquery protocol, version 2010-05-08.
//
// model.go, roles.go and profiles.go hold the state and its rules (names, paths, the
// one-role limit, tags) and never see HTTP or XML; wire.go and actions.go decode a
// form-encoded request, authorize it, call the model and encode the XML answer;
// service.go ties them to the account's store and exports the views fakeec2 wires in.
//
// It imports only fakeec2/account and the standard library: never fakeec2 itself,
// k8s.io, sigs.k8s.io, cluster or labs.
package iam
