package recorder

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Change types, as a watch names them.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
)

// Record is one observed change of one object.
type Record struct {
	// Time is when the recorder saw the change.
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
	Type string    `json:"type"`
	// Object is the object as it was after the change (before deletion for Deleted), without
	// managedFields.
	Object *unstructured.Unstructured `json:"object"`
}

// Watched lists the resources recorded, by Kind.
var Watched = map[string]schema.GroupVersionResource{
	"Pod":          {Version: "v1", Resource: "pods"},
	"Node":         {Version: "v1", Resource: "nodes"},
	"Event":        {Version: "v1", Resource: "events"},
	"NodeClaim":    {Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"},
	"NodePool":     {Group: "karpenter.sh", Version: "v1", Resource: "nodepools"},
	"EC2NodeClass": {Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"},
	// PodDisruptionBudgets as they were while nodes were disrupted, not only as they are now.
	"PodDisruptionBudget": {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
}

// Options configure a Recorder.
type Options struct {
	Config *rest.Config
	// Path is the history file; records are appended to it.
	Path   string
	Logger *slog.Logger
	// FlushInterval bounds how much history a crash can lose (default 500ms).
	FlushInterval time.Duration
}

// Recorder appends observed changes to the history file.
type Recorder struct {
	opts Options
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
}

// New opens (or creates) the history file.
func New(opts Options) (*Recorder, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.FlushInterval == 0 {
		opts.FlushInterval = 500 * time.Millisecond
	}
	f, err := os.OpenFile(opts.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening history %s: %w", opts.Path, err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	return &Recorder{opts: opts, f: f, w: w, enc: json.NewEncoder(w)}, nil
}

// Run watches until ctx ends, then flushes and closes the file. It closes ready (if non-nil)
// once the initial lists are recorded.
func (r *Recorder) Run(ctx context.Context, ready chan<- struct{}) error {
	defer r.close()
	client, err := dynamic.NewForConfig(r.opts.Config)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	var streams []*stream
	var wg sync.WaitGroup
	defer wg.Wait()
	for kind, gvr := range Watched {
		s := newStream(r, kind)
		streams = append(streams, s)
		res := client.Resource(gvr)
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return res.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return res.Watch(ctx, o)
			},
		}
		refl := cache.NewReflectorWithOptions(lw, &unstructured.Unstructured{}, s, cache.ReflectorOptions{Name: "recorder " + gvr.Resource})
		wg.Go(func() { refl.RunWithContext(ctx) })
	}
	synced := func() bool {
		for _, s := range streams {
			if !s.synced.Load() {
				return false
			}
		}
		return true
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		return ctx.Err()
	}
	if ready != nil {
		close(ready)
	}
	tick := time.NewTicker(r.opts.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := r.Flush(); err != nil {
				r.opts.Logger.Warn("flushing history", "err", err)
			}
		}
	}
}

// write appends one record whose object is already JSON.
func (r *Recorder) write(kind, typ string, object []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := struct {
		Time   time.Time       `json:"time"`
		Kind   string          `json:"kind"`
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}{time.Now().UTC(), kind, typ, object}
	if err := r.enc.Encode(rec); err != nil {
		r.opts.Logger.Warn("recording", "kind", kind, "err", err)
	}
}

// Flush writes buffered records to the file and syncs it.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.Flush(); err != nil {
		return err
	}
	return r.f.Sync()
}

func (r *Recorder) close() {
	if err := r.Flush(); err != nil {
		r.opts.Logger.Warn("flushing history", "err", err)
	}
	r.f.Close()
}

// Truncate empties the history (karplab reset starts a new one).
func (r *Recorder) Truncate() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Reset(r.f)
	return r.f.Truncate(0)
}

// Read returns the records of the history file in order, skipping repeats of the same object
// version (a daemon restart lists every object again). A torn last line from a crash is ignored.
func Read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening history: %w", err)
	}
	defer f.Close()
	type version struct{ uid, rv, typ string }
	seen := map[version]bool{}
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Object == nil {
			continue
		}
		v := version{string(rec.Object.GetUID()), rec.Object.GetResourceVersion(), rec.Type}
		if v.typ == Modified {
			v.typ = Added // an update to an already seen version is the same state
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading history: %w", err)
	}
	return out, nil
}
