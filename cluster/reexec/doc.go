// Package reexec names the verbs and flags the karplab binary runs itself with: the lab
// daemon that `karplab start` launches in the background, and the Karpenter child the daemon
// supervises. The CLI registers these names and cluster spells its command lines with them,
// so neither side can change one and break the other at run time.
//
// It imports nothing; cmd and cluster import it.
package reexec
