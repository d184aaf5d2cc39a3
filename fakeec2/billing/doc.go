// Package billing holds the account's billing ledger as records and arithmetic: a
// LedgerEntry per billed resource (an instance while running, a volume or snapshot while
// it exists) with its billed periods, what it accrues by a time or within a span, EBS's
// prices, and the ledger as read at one time (Billing) and grouped by a tag (CostReport).
// Entries are persisted as JSON and served by the admin API: their field names and tags
// are that format.
//
// fakeec2/ec2/service keeps the ledger under its lock, opens and closes entries as
// resources start and stop, and persists them. This package imports only the standard
// library: never fakeec2 itself, k8s.io, sigs.k8s.io, cluster or labs.
package billing
