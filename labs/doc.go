// Package labs holds the scenario engine and its graders: each lab applies a workload and
// faults, then grades the evidence read back from both control planes (Kubernetes objects and
// events; the EC2 emulator's audit trail and billing ledger), joined by identifiers. The
// evidence record itself (snapshot, decoded history, correlation, renderings) is labs/evidence.
//
// It may import labs/evidence, cluster and fakeec2's Go client; it never parses EC2 XML and
// never imports cmd.
package labs
