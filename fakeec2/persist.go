package fakeec2

// bucketAudit holds the audit trail in the state file, keyed by each event's big-endian
// sequence number. EC2's buckets are its own (service.Buckets); the other services name
// theirs.
const bucketAudit = "audit"
