// Package statefile is the emulator's state file: one bbolt file whose buckets hold JSON
// records by key. One goroutine writes it, committing every batch that waits in one
// transaction (group commit), so concurrent writers share one fsync and a request that
// waits for its batch knows its change is on disk before it answers. It knows nothing of
// what the records are: the server names the buckets and encodes the records.
package statefile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Op is one record write; a nil Val deletes the key.
type Op struct {
	Bucket string
	Key    string
	Val    []byte
}

type batch struct {
	ops  []Op
	done chan error
}

// File is an open state file and its writer. A nil *File is a lab with no state
// directory: writes are done at once and loads find nothing.
type File struct {
	db    *bolt.DB
	queue chan *batch
	exit  chan struct{}
}

// done yields nil at once, forever: the answer when there is nothing to wait for.
var done = func() chan error { c := make(chan error); close(c); return c }()

// Done returns a channel that yields nil at once: what a write with nothing to persist
// answers.
func Done() <-chan error { return done }

// Open opens (or creates) dir/fakeec2.db with buckets created, and starts its writer.
func Open(dir string, buckets []string) (*File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	path := filepath.Join(dir, "fakeec2.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("creating buckets in %s: %w", path, err)
	}
	f := &File{db: db, queue: make(chan *batch, 4096), exit: make(chan struct{})}
	go f.loop()
	return f, nil
}

// Enqueue queues ops; the returned channel yields the commit's result. Callers hold their
// store's lock while enqueueing, so the queue order is the order of the changes in memory.
func (f *File) Enqueue(ops []Op) <-chan error {
	if f == nil || len(ops) == 0 {
		return done
	}
	b := &batch{ops: ops, done: make(chan error, 1)}
	f.queue <- b
	return b.done
}

func (f *File) loop() {
	defer close(f.exit)
	for first := range f.queue {
		group := []*batch{first}
	drain:
		for len(group) < 1024 {
			select {
			case b, ok := <-f.queue:
				if !ok {
					break drain
				}
				group = append(group, b)
			default:
				break drain
			}
		}
		err := f.db.Update(func(tx *bolt.Tx) error {
			for _, b := range group {
				for _, o := range b.ops {
					if err := write(tx, o); err != nil {
						return err
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

func write(tx *bolt.Tx, o Op) error {
	// The services under fakeec2/ name their own buckets.
	bk, err := tx.CreateBucketIfNotExists([]byte(o.Bucket))
	if err != nil {
		return fmt.Errorf("writing %s/%s: %w", o.Bucket, o.Key, err)
	}
	if o.Val == nil {
		err = bk.Delete([]byte(o.Key))
	} else {
		err = bk.Put([]byte(o.Key), o.Val)
	}
	if err != nil {
		return fmt.Errorf("writing %s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// Close stops the writer after the queue is drained and closes the file.
func (f *File) Close() error {
	if f == nil {
		return nil
	}
	close(f.queue)
	<-f.exit
	return f.db.Close()
}

// Load calls fn for every record of bucket.
func (f *File) Load(bucket string, fn func(key, val []byte) error) error {
	if f == nil {
		return nil
	}
	return f.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil { // a service's bucket before its first write
			return nil
		}
		return b.ForEach(fn)
	})
}

// LoadJSON decodes every record of bucket into a new T and calls fn with it.
func LoadJSON[T any](f *File, bucket string, fn func(*T)) error {
	return f.Load(bucket, func(k, v []byte) error {
		rec := new(T)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("decoding %s/%s: %w", bucket, k, err)
		}
		fn(rec)
		return nil
	})
}
