// Package accesskeys names the access key IDs the lab's callers sign with. The account
// checks the key ID, never the signature, so these IDs are who a caller is: the policy
// grants by them, and the audit trail, the evidence and the graders tell the callers apart
// by them. Every process of the lab (the CLI, the daemon, Karpenter's child, the graders)
// agrees on them through this package alone.
//
// It imports nothing; every layer may import it.
package accesskeys
