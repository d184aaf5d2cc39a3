package service

// Bucket names of EC2's records in the account's state file, which package statefile
// writes. Every record is JSON keyed by its ID.
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
	// BucketMeta holds EC2's counters under "meta"; the account keeps its own record there.
	BucketMeta = "meta"
)

// Buckets are the state file's buckets EC2 writes; the account opens the file with them.
var Buckets = []string{bucketInstances, bucketVolumes, bucketENIs, bucketTemplates, bucketVPCs,
	bucketSubnets, bucketGroups, bucketImages, bucketFleets, bucketLedger, BucketMeta, bucketIdempotency, bucketSnapshots}
