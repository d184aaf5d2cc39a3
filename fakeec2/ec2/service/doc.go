// Package service is EC2 in the lab's account: New opens its records from the account's
// state file, and Service is the http.Handler of EC2's Query API that the account's router
// hands EC2's requests to. It holds the store (fakeec2/ec2's State) and the behaviour
// under one lock: the handlers parse with fakeec2/ec2/wire, act on the model and hand
// the records back to wire to render.
//
// dispatch.go routes by Action. One file per resource family parses, calls the store and
// renders: instances.go (launching, terminating) with instances_describe.go,
// stopstart.go, reboot.go, console.go, createfleet.go and createfleet_plan.go (CreateFleet),
// fleetrecords.go (DescribeFleets, DeleteFleets), launchtemplates.go, ebs.go (volumes), snapshots.go, eni.go, network.go,
// networkwrites.go, accountinfo.go, images.go, instancetypes.go and tags.go. service.go
// holds Service and New, persist.go the records' buckets and their persistence, timers.go
// the lifecycle's timers (boot, shutdown, expiry), billing.go the
// ledger, faults.go the injected faults, idempotency.go the ClientToken records (SDK
// retries never launch twice), tagindex.go the tag-narrowed DescribeInstances, policy.go
// EC2's questions to the policy, eventbridge.go EC2's events, aws.go and eksimages.go
// what AWS itself does to the account (spot interruptions, new EKS AMI releases).
//
// What EC2 meets of the rest of the account (the clock, the policy, the audit trail, the
// interruption queue, SSM's public parameters, AWS Budgets) it reaches through Account,
// which fakeec2 implements. It must not import fakeec2 itself, k8s.io, sigs.k8s.io,
// cluster or labs.
package service
