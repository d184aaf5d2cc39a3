// Package trail holds the records of the account's audit trail (CloudTrail-like): the
// AuditEvent each call leaves, with its caller, parameters, result and denial, the
// AuditQuery the admin API selects events with, and the rules over them that need no
// server: which events a query matches, which the trail's bound may drop, and the denial
// reason behind an encoded message. The events are persisted as JSON and served by the
// admin API: their field names and tags are that format.
//
// fakeec2 (the root) appends every service's calls to the trail under its lock and
// persists it. This package imports only the standard library: never fakeec2 itself,
// k8s.io, sigs.k8s.io, cluster or labs.
package trail
