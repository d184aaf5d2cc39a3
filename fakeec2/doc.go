// Package fakeec2 is the lab's AWS account on one endpoint: an http.Handler that routes
// each request by its SigV4 service (then X-Amz-Target, then path) to the service that
// answers it, EC2 by default, and serves the JSON admin API under /_karplab/. Its state is
// persisted to disk (bbolt, write-through: a change is on disk before its 200).
//
// The root keeps the endpoint and the dispatch, and what the services share: server.go
// (Options, New, Close: it opens the state file, EC2 and the other services, and holds
// the account's own record), router.go (the routing and the Host every service is built
// on), clock.go (the lab clock, which SkipTime moves ahead, and the injectable base
// clock), policy.go (the IAM-like policy in force, and the account as EC2 meets it),
// audit.go (the CloudTrail-like trail every service's calls go to), labtime.go (skipping
// lab time), budgetledger.go (AWS Budgets fed from EC2's billing ledger), services.go
// (opening the services and wiring them where AWS's services meet), admin.go (the admin
// API) with adminclient.go (its typed client), ec2.go (EC2's names as the account's API
// speaks them), persist.go (the account's buckets), listen.go and httpclient.go (the HTTP
// client SDK users of the emulator should prefer).
//
// Each service is a package of its own, its models apart from its wire encoding, as in
// moto: EC2 is fakeec2/ec2 (the records, states, refusal rules and instance-type catalog),
// fakeec2/ec2/wire (the Query decoder, errors, XML shapes and conversions) and
// fakeec2/ec2/service (the store under one lock, the handlers, timers, ledger, faults and
// idempotency); the others are iam, ssm, sqs, sts, eks, pricing and budgets, over the
// Host of fakeec2/account. The account-wide records and their pure rules have packages
// too: fakeec2/authz (the policy), fakeec2/trail (the audit trail), fakeec2/billing (the
// ledger's entries and arithmetic), fakeec2/statefile (the bbolt file).
//
// It knows nothing of Kubernetes: it must not import k8s.io, sigs.k8s.io, cluster or labs.
package fakeec2
