// Package evidence holds the lab's evidence record: a snapshot of both control planes (the
// Kubernetes history the daemon recorded; the EC2 emulator's instances, audit trail and
// billing ledger), the history decoded into typed objects, their correlation by identifiers
// (pod UID -> NodeClaim -> instance ID -> Node), and its text, JSON and HTML renderings.
//
// It may import cluster/recorder, cluster/metrics' record types and fakeec2's Go client; it must not import labs (the
// graders read it, never the other way) or cmd, and never parses EC2 XML.
package evidence
