package fakeec2

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bucket names of the state file. Every record is JSON keyed by its ID (audit events by
// their big-endian sequence number).
const (
	bucketInstances = "instances"
	bucketVolumes   = "volumes"
	bucketENIs      = "enis"
	bucketTemplates = "launch-templates"
	bucketVPCs      = "vpcs"
	bucketSubnets   = "subnets"
	bucketGroups    = "security-groups"
	bucketImages    = "images"
	bucketFleets    = "fleets"
	bucketLedger    = "ledger"
	bucketAudit     = "audit"
	bucketMeta      = "meta"
)

var allBuckets = []string{bucketInstances, bucketVolumes, bucketENIs, bucketTemplates, bucketVPCs,
	bucketSubnets, bucketGroups, bucketImages, bucketFleets, bucketLedger, bucketAudit, bucketMeta, bucketIdempotency}

// op is one record write (val nil deletes the key).
type op struct {
	bucket string
	key    string
	val    []byte
}

type batch struct {
	ops  []op
	done chan error
}

// persister writes ops to bbolt in the order they were enqueued. One goroutine drains
// the queue and commits everything waiting in one transaction (group commit), so many
// concurrent writers share one fsync, and a request that waits for its batch knows its
// change is on disk before it answers.
type persister struct {
	db    *bolt.DB
	queue chan *batch
	exit  chan struct{}
}

// closedErrChan yields nil at once, forever: the answer when there is nothing to wait for.
var closedErrChan = func() chan error { c := make(chan error); close(c); return c }()

func openPersister(dir string) (*persister, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	path := filepath.Join(dir, "fakeec2.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("creating buckets in %s: %w", path, err)
	}
	p := &persister{db: db, queue: make(chan *batch, 4096), exit: make(chan struct{})}
	go p.loop()
	return p, nil
}

// enqueue queues ops; the returned channel yields the commit's result. Callers hold the
// store lock while enqueueing, so the queue order is the order of the changes in memory.
func (p *persister) enqueue(ops []op) <-chan error {
	if p == nil || len(ops) == 0 {
		return closedErrChan
	}
	b := &batch{ops: ops, done: make(chan error, 1)}
	p.queue <- b
	return b.done
}

func (p *persister) loop() {
	defer close(p.exit)
	for first := range p.queue {
		group := []*batch{first}
	drain:
		for len(group) < 1024 {
			select {
			case b, ok := <-p.queue:
				if !ok {
					break drain
				}
				group = append(group, b)
			default:
				break drain
			}
		}
		err := p.db.Update(func(tx *bolt.Tx) error {
			for _, b := range group {
				for _, o := range b.ops {
					// The services under fakeec2/ name their own buckets.
					bk, err := tx.CreateBucketIfNotExists([]byte(o.bucket))
					if err != nil {
						return fmt.Errorf("writing %s/%s: %w", o.bucket, o.key, err)
					}
					if o.val == nil {
						err = bk.Delete([]byte(o.key))
					} else {
						err = bk.Put([]byte(o.key), o.val)
					}
					if err != nil {
						return fmt.Errorf("writing %s/%s: %w", o.bucket, o.key, err)
					}
				}
			}
			return nil
		})
		for _, b := range group {
			b.done <- err
		}
	}
}

// close stops the writer after the queue is drained and closes the file.
func (p *persister) close() error {
	if p == nil {
		return nil
	}
	close(p.queue)
	<-p.exit
	return p.db.Close()
}

// load calls fn for every record of bucket.
func (p *persister) load(bucket string, fn func(key, val []byte) error) error {
	return p.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil { // a service's bucket before its first write
			return nil
		}
		return b.ForEach(fn)
	})
}

func loadJSON[T any](p *persister, bucket string, fn func(*T)) error {
	return p.load(bucket, func(k, v []byte) error {
		rec := new(T)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("decoding %s/%s: %w", bucket, k, err)
		}
		fn(rec)
		return nil
	})
}
