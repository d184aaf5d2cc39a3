package cloudprovider

import (
	"sync"
	"sync/atomic"
	"time"
)

// UnavailableOfferingsTTL is how long an offering that answered InsufficientInstanceCapacity
// stays out of the catalog (karpenter-provider-aws uses 3 minutes).
const UnavailableOfferingsTTL = 3 * time.Minute

// unavailableOfferings remembers (instance type, zone, capacity type) triples EC2 had no
// capacity for, so GetInstanceTypes reports them unavailable and Karpenter picks others.
type unavailableOfferings struct {
	mu      sync.Mutex
	now     func() time.Time
	ttl     time.Duration
	entries map[offeringKey]time.Time // expiry
	// seq changes whenever the set changes, so built instance types can be cached against it.
	seq atomic.Uint64
}

type offeringKey struct{ instanceType, zone, capacityType string }

func newUnavailableOfferings(now func() time.Time, ttl time.Duration) *unavailableOfferings {
	return &unavailableOfferings{now: now, ttl: ttl, entries: map[offeringKey]time.Time{}}
}

// MarkUnavailable takes the offering out of the catalog for the TTL.
func (u *unavailableOfferings) MarkUnavailable(instanceType, zone, capacityType string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.entries[offeringKey{instanceType, zone, capacityType}] = u.now().Add(u.ttl)
	u.seq.Add(1)
}

// IsUnavailable reports whether the offering is still marked.
func (u *unavailableOfferings) IsUnavailable(instanceType, zone, capacityType string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := offeringKey{instanceType, zone, capacityType}
	exp, ok := u.entries[k]
	if !ok {
		return false
	}
	if !u.now().Before(exp) {
		delete(u.entries, k)
		u.seq.Add(1)
		return false
	}
	return true
}

// SeqNum identifies the current set: it moves on every mark and every expiry.
func (u *unavailableOfferings) SeqNum() uint64 {
	u.mu.Lock()
	now := u.now()
	for k, exp := range u.entries {
		if !now.Before(exp) {
			delete(u.entries, k)
			u.seq.Add(1)
		}
	}
	u.mu.Unlock()
	return u.seq.Load()
}
