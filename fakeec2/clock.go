package fakeec2

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the emulator the time. Tests inject a FakeClock so that boot delays, billing
// and golden files are deterministic.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now().UTC() }

// labClock is the server's clock: its base (Options.Clock or the real clock) plus the
// lab's offset, which SkipTime moves forward and Reset puts back to zero. Everything the
// emulator dates (launch times, timers, the ledger, budgets, events) reads it.
type labClock struct {
	base   Clock
	offset atomic.Int64 // nanoseconds

	mu      sync.Mutex
	changed chan struct{} // closed when the offset moves; then replaced
}

func (c *labClock) Now() time.Time { return c.base.Now().Add(c.Offset()) }

// Offset is how far the lab's time runs ahead of the base clock.
func (c *labClock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

func (c *labClock) setOffset(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.offset.Swap(int64(d)) != int64(d) && c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// waitChange returns the offset once it differs from known, or when ctx ends.
func (c *labClock) waitChange(ctx context.Context, known time.Duration) time.Duration {
	c.mu.Lock()
	if off := c.Offset(); off != known {
		c.mu.Unlock()
		return off
	}
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	ch := c.changed
	c.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	return c.Offset()
}

// FakeClock is a Clock that moves only when told. It is safe for concurrent use.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewFakeClock returns a clock stopped at t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{t: t.UTC()} }

// Now returns the clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t.UTC()
	c.mu.Unlock()
}

// IDGenerator mints resource IDs. NewID("i") returns "i-" and 17 hex digits, as AWS's
// IDs look; NewID("") returns a request ID in UUID form.
type IDGenerator interface {
	NewID(prefix string) string
}

type randomIDs struct{}

func (randomIDs) NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	h := hex.EncodeToString(b[:])
	if prefix == "" {
		return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
	}
	return prefix + "-" + h[:17]
}

// SequentialIDs mints predictable IDs (i-00000000000000001, ...) for tests and golden
// files. Each prefix counts on its own. Safe for concurrent use.
type SequentialIDs struct {
	mu sync.Mutex
	n  map[string]uint64
}

// NewSequentialIDs returns a generator whose counters start at 1.
func NewSequentialIDs() *SequentialIDs { return &SequentialIDs{n: map[string]uint64{}} }

// NewID returns the next ID for prefix.
func (g *SequentialIDs) NewID(prefix string) string {
	g.mu.Lock()
	g.n[prefix]++
	n := g.n[prefix]
	g.mu.Unlock()
	if prefix == "" {
		return fmt.Sprintf("00000000-0000-4000-8000-%012x", n)
	}
	return fmt.Sprintf("%s-%017x", prefix, n)
}
