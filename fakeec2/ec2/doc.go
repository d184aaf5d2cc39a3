// Package ec2 is the EC2 model of the emulated account: its resource records, their states
// and the rules by which EC2 refuses an action; it never sees form values or XML.
//
// models.go holds the records (instances, volumes, snapshots, network interfaces, VPCs,
// subnets, security groups, images, launch templates, fleets, tags; Tagged, what CreateTags
// changes in each), plain values that
// fakeec2 persists as JSON: their field names and JSON tags are the on-disk format, and
// old state files must still load. states.go holds the states as EC2 spells them,
// fleetrequest.go what a fleet keeps of its request and its failed pools, store.go the State
// that holds them all by ID (with the instance tag index and the subnets' address
// allocation, operations that need no lock, clock or store), and refusals.go the
// one table of preconditions every mutating action consults: Refuse answers a Refusal
// (EC2's code and message), which wire turns into EC2's error in one place.
// catalog.go and zz_generated_catalog.go hold AWS's instance-type catalog (InstanceTypeInfo,
// Catalog, LookupInstanceType, SpotPrice): fixed facts and each region's prices, written by
// `go generate` (internal/gencatalog) with their sources; regions.go the regions the lab
// has data for and their zones with AWS's zone IDs.
//
// fakeec2/ec2/service keeps the store, its lock and the behaviour, fakeec2/ec2/wire the
// protocol (the decoder, the errors, the XML shapes and the conversions that render
// these records in them). This package imports only the standard library: never fakeec2
// itself, k8s.io, sigs.k8s.io, cluster or labs.
package ec2
