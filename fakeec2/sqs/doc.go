// Package sqs is the lab account's Amazon SQS: standard queues with durable messages,
// visibility timeouts on the host's clock and long polling, spoken in both of SQS's
// protocols (awsJson1_0, which current SDKs send, and the older awsquery form with XML
// answers, which older CLIs send). Karpenter's interruption controller reads its queue
// here; fakeec2 delivers EventBridge events into it with Send.
//
// model.go holds the queues and messages and never sees HTTP; actions.go runs the
// actions over it; json.go and query.go are the two wire layers.
//
// It imports only fakeec2/account and the standard library: never the root fakeec2
// package, k8s.io, sigs.k8s.io, cluster or labs.
package sqs
