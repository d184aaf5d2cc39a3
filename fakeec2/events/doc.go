// Package events builds the EventBridge documents AWS delivers to Karpenter's
// interruption queue (Spot interruption warnings, rebalance recommendations, instance
// state changes, AWS Health scheduled changes, capacity reservation interruptions), in
// the shapes karpenter-provider-aws's interruption controller parses. The builders are
// pure: no HTTP, no state; fakeec2 hands their output to its SQS.
//
// It imports only the standard library: never the root fakeec2 package, k8s.io,
// sigs.k8s.io, cluster or labs.
package events
