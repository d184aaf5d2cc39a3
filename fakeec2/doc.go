// Package fakeec2 is an EC2 API emulator: an HTTP server speaking the EC2 Query protocol
// (Action=...&Version=2016-11-15, XML responses, EC2 error XML) over an in-memory state that
// is persisted to disk (bbolt, write-through: a change is on disk before its 200). It holds
// instances, EBS volumes, ENIs, launch templates, subnets, security groups, images, tags, a
// billing ledger, an audit trail, an IAM-like policy and injectable faults.
//
// Layout, moto-style: the EC2 model (package fakeec2/ec2: the resource records, their
// states, the table of the state rules every mutating action consults and the instance-type
// catalog) and the store and its behaviour (server.go, billing.go, audit.go, policy.go,
// faults.go) never see form values or XML. Package fakeec2/ec2/wire holds the protocol:
// the request decoder, EC2's Error and codes (its Refuse turns the model's refusal into
// EC2's error), the XML envelope, the generic filters, pagination and Describe requests,
// and, one file per resource family, every action's XML shapes and the conversions that
// render model records in them (wire.Env carries what a conversion needs of the server:
// account, region, now, the model to look references up in). Here dispatch.go routes by
// Action and one file per resource family parses, calls the store and hands the records
// to wire: instances.go (launching, terminating) with instances_describe.go (its Describe
// handlers), stopstart.go, reboot.go, console.go, fleet.go and fleetplan.go (CreateFleet),
// fleets.go, launchtemplates.go, ebs.go (volumes), snapshots.go, eni.go, network.go,
// networkwrites.go, accountinfo.go, images.go, instancetypes.go, tags.go. aws.go holds
// what AWS itself does to the account (spot interruptions, new EKS AMI releases), which
// only the admin API triggers. Package fakeec2/statefile is the state file, bbolt written by
// one group-commit goroutine (persist.go names its buckets), idempotency.go
// the ClientToken records (SDK retries never launch twice), tagindex.go narrows
// DescribeInstances by the model's tag index. admin.go serves the JSON admin API under
// /_karplab/ and adminclient.go is its typed client; NewHTTPClient (httpclient.go) is the
// HTTP client SDK users of the emulator should prefer; clock.go holds the injectable clock
// and ID generator.
//
// The account's other services live in their own packages over the same store, clock,
// audit trail and policy (account, iam, ssm, sqs, sts, eks, pricing, budgets), routed by
// router.go; budgetledger.go feeds the budgets' spend from the billing ledger. The
// account-wide records and their pure rules have their own packages too: fakeec2/authz
// the IAM-like policy (Authorize, the launch checks, the encoded denial message, the
// default KarpenterControllerPolicy),
// fakeec2/trail the audit trail's events and queries, fakeec2/billing the ledger's
// entries, prices, accrual and cost reports; the root holds each under its locks and
// persists it (policy.go, audit.go, billing.go).
//
// It knows nothing of Kubernetes: it must not import k8s.io, sigs.k8s.io, cluster or labs.
package fakeec2
