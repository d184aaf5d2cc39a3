// Package workshop is a room of seats: one lab per learner, each in a seat of its own
// (cluster/seats), numbered 1..N, with the learners' names, the agenda of labs and each
// seat's last check, kept on disk under $KARPLAB_HOME/workshop so that `up` after a crash
// finds its seats again. It starts each seat's own karplab inside the seat and grades it
// there (`karplab check LAB --json`); the learners' pages and the instructor's board are
// to come (issue 45).
//
// It must not import package cluster or its backends (a seat runs its own lab): of cluster
// only cluster/seats, the interface the command line wires to an engine. Nor labs/replay.
package workshop
