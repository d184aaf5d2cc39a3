package account

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
)

// IDGenerator mints resource IDs. NewID("i") returns "i-" and 17 hex digits, as AWS's
// IDs look; NewID("") returns a request ID in UUID form.
type IDGenerator interface {
	NewID(prefix string) string
}

// RandomIDs mints random IDs: what the lab uses outside tests.
type RandomIDs struct{}

func (RandomIDs) NewID(prefix string) string {
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
