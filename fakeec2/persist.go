package fakeec2

// Bucket names of the state file, which package statefile writes. Every record is JSON
// keyed by its ID (audit events by their big-endian sequence number).
const (
	bucketInstances = "instances"
	bucketVolumes   = "volumes"
	bucketENIs      = "enis"
	bucketTemplates = "launch-templates"
	bucketVPCs      = "vpcs"
	bucketSubnets   = "subnets"
	bucketGroups    = "security-groups"
	bucketImages    = "images"
	bucketFleets    = "fleets"
	bucketLedger    = "ledger"
	bucketAudit     = "audit"
	bucketMeta      = "meta"
)

var allBuckets = []string{bucketInstances, bucketVolumes, bucketENIs, bucketTemplates, bucketVPCs,
	bucketSubnets, bucketGroups, bucketImages, bucketFleets, bucketLedger, bucketAudit, bucketMeta, bucketIdempotency}
