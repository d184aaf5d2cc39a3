// Package labs holds the scenario engine and its graders: each lab applies a workload and
// faults, then grades the evidence read back from both control planes (Kubernetes objects and
// events; the EC2 emulator's audit trail and billing ledger), joined by identifiers. The
// evidence record itself (snapshot, decoded history, correlation, renderings) is labs/evidence.
//
// The engine: lab.go (Lab, the registry, grading), env.go (the running lab and the GVRs it
// reads), stage.go, stagehelpers.go and apply.go (staging), nodepools.go, report.go and
// format.go. course.go holds the names every lab shares (the ziba render workers, the
// general NodePool, the cluster's tag). Graders shared by labs are in checks.go, and those
// of the disruption labs in checks_disruption.go.
//
// Every other non-test file is one lab, named as it (happypath.go is happy-path): it registers the lab in
// its init and holds the lab's staging, constants and own graders; exercises/NAME and
// solutions/NAME hold its files. A grader or name a second lab needs moves to the engine.
//
// It may import labs/evidence, cluster and fakeec2's Go client; it never parses EC2 XML and
// never imports cmd.
package labs
