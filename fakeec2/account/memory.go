package account

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemoryHost is a Host over a MemoryStore, for a service's own tests and for an emulator
// run without a state dir. Its fields may be set before first use.
type MemoryHost struct {
	RegionName, Account string
	Clock               func() time.Time                             // default time.Now
	Policy              func(caller, action, resource string) string // default: allow all
	Records             *MemoryStore
}

// NewMemoryHost returns a host for eu-west-2, account 123456789012, the real clock and an
// empty store.
func NewMemoryHost() *MemoryHost {
	return &MemoryHost{RegionName: "eu-west-2", Account: "123456789012", Records: NewMemoryStore()}
}

func (h *MemoryHost) Region() string    { return h.RegionName }
func (h *MemoryHost) AccountID() string { return h.Account }
func (h *MemoryHost) Store() Store      { return h.Records }

func (h *MemoryHost) Now() time.Time {
	if h.Clock != nil {
		return h.Clock()
	}
	return time.Now()
}

// NewID returns prefix followed by random hex, or a UUID-shaped request ID for "".
func (h *MemoryHost) NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	x := hex.EncodeToString(b[:])
	if prefix == "" {
		return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
	}
	return prefix + strings.ToUpper(x[:17])
}

func (h *MemoryHost) Authorize(caller, action, resource string) string {
	if h.Policy == nil {
		return ""
	}
	return h.Policy(caller, action, resource)
}

// MemoryStore is a Store in memory. A second service opened over the same store sees
// what the first wrote: how a service's tests model a restart.
type MemoryStore struct {
	mu      sync.Mutex
	buckets map[string]map[string][]byte
}

func NewMemoryStore() *MemoryStore {
	return &MemoryStore{buckets: map[string]map[string][]byte{}}
}

var doneChan = func() chan error { c := make(chan error); close(c); return c }()

func (m *MemoryStore) Enqueue(ops ...Op) <-chan error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, op := range ops {
		b := m.buckets[op.Bucket]
		if b == nil {
			b = map[string][]byte{}
			m.buckets[op.Bucket] = b
		}
		if op.Value == nil {
			delete(b, op.Key)
			continue
		}
		v, err := json.Marshal(op.Value)
		if err != nil {
			c := make(chan error, 1)
			c <- err
			return c
		}
		b[op.Key] = v
	}
	return doneChan
}

func (m *MemoryStore) Load(bucket string, fn func(key string, val []byte) error) error {
	m.mu.Lock()
	b := m.buckets[bucket]
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	vals := make([][]byte, len(keys))
	sort.Strings(keys)
	for i, k := range keys {
		vals[i] = b[k]
	}
	m.mu.Unlock()
	for i, k := range keys {
		if err := fn(k, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// LoadJSON decodes every record of bucket into a T and hands it to fn.
func LoadJSON[T any](s Store, bucket string, fn func(key string, v *T)) error {
	return s.Load(bucket, func(k string, b []byte) error {
		v := new(T)
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
		fn(k, v)
		return nil
	})
}
