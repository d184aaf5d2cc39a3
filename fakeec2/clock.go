package fakeec2

import (
	"context"
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
