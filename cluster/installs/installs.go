// Package installs keeps the record of what the lab created on a cluster: every object a lab
// process made (the CRDs, the kube-dns Service, the metrics API's objects, Nodes, Leases,
// Events, NodeClaims), so that `karplab stop --uninstall` removes exactly those and nothing of
// the cluster's own. Processes record through a client transport that notes each 201 Created
// answer; the record is a JSON-lines file appended under an exclusive lock, so the daemon and
// the Karpenter child can share it and a crash loses at most the line being written.
package installs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/deletion"
)

// Entry is one object a lab process created.
type Entry struct {
	At        time.Time `json:"at"`
	By        string    `json:"by,omitempty"`
	Group     string    `json:"group,omitempty"`
	Version   string    `json:"version"`
	Resource  string    `json:"resource"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	UID       string    `json:"uid"`
}

// GVR is the entry's resource.
func (e Entry) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: e.Group, Version: e.Version, Resource: e.Resource}
}

// object is the entry's object, without its UID.
func (e Entry) object() deletion.Object {
	return deletion.Object{GVR: e.GVR(), Namespace: e.Namespace, Name: e.Name}
}

func (e Entry) String() string { return e.object().String() }

// Record is the record file; by names the process that writes (daemon, karpenter).
type Record struct {
	path string
	by   string
}

// Open returns the record at path, written as by. Nothing is touched until Add.
func Open(path, by string) *Record { return &Record{path: path, by: by} }

// Path is the record file's path.
func (r *Record) Path() string { return r.path }

// Add appends e under an exclusive lock (other processes append to the same file).
func (r *Record) Add(e Entry) error {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	if e.By == "" {
		e.By = r.by
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the install record: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking the install record: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	return err
}

// Read returns the record's entries in the order they were made, each object once (its
// last UID). A missing file is an empty record; a torn last line (a crash mid-write) is
// skipped.
func Read(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the install record: %w", err)
	}
	var out []Entry
	index := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.UID == "" {
			continue
		}
		key := e.String()
		if i, ok := index[key]; ok {
			out[i] = e
			continue
		}
		index[key] = len(out)
		out = append(out, e)
	}
	return out, nil
}

// WrapConfig returns a copy of cfg whose clients record what they create in r.
func WrapConfig(cfg *rest.Config, r *Record) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(r.Transport)
	return out
}

// Transport wraps next so that every object created through it (a 201 answer to a POST or
// a server-side apply) is added to r. Subresources (evictions, bindings) create nothing.
func (r *Record) Transport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusCreated || (req.Method != http.MethodPost && req.Method != http.MethodPatch) {
			return resp, err
		}
		e, ok := parsePath(req.URL.Path)
		if !ok {
			return resp, nil
		}
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if rerr != nil {
			return resp, nil
		}
		meta, ok := objectMeta(body, resp.Header.Get("Content-Type"))
		if !ok || meta.UID == "" {
			return resp, nil
		}
		e.Name, e.Namespace, e.UID = meta.Name, meta.Namespace, string(meta.UID)
		if err := r.Add(e); err != nil {
			// The object exists; failing the call would make the caller retry into a conflict.
			fmt.Fprintf(os.Stderr, "karplab: could not record %s: %v\n", e, err)
		}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// parsePath reads the resource from an API path: /api/v1/[namespaces/NS/]RESOURCE[/NAME] or
// /apis/GROUP/VERSION/...; ok is false for subresources and anything else.
func parsePath(p string) (Entry, bool) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	var e Entry
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		e.Version, segs = segs[1], segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		e.Group, e.Version, segs = segs[1], segs[2], segs[3:]
	default:
		return e, false
	}
	if len(segs) == 3 && segs[0] == "namespaces" && (segs[2] == "finalize" || segs[2] == "status") {
		return e, false // a namespace's own subresources
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		e.Namespace, segs = segs[1], segs[2:]
	}
	if len(segs) == 0 || len(segs) > 2 {
		return e, false
	}
	e.Resource = segs[0]
	return e, true
}

// protobufMagic starts every Kubernetes protobuf body (runtime.Unknown follows).
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// objectMeta decodes the metadata of a created object from its JSON or protobuf body.
func objectMeta(body []byte, contentType string) (metav1.ObjectMeta, bool) {
	if strings.Contains(contentType, "protobuf") && bytes.HasPrefix(body, protobufMagic) {
		var u runtime.Unknown
		if u.Unmarshal(body[len(protobufMagic):]) != nil {
			return metav1.ObjectMeta{}, false
		}
		// Every built-in object's field 1 is its ObjectMeta, as in PartialObjectMetadata.
		var pom metav1.PartialObjectMetadata
		if pom.Unmarshal(u.Raw) != nil {
			return metav1.ObjectMeta{}, false
		}
		return pom.ObjectMeta, true
	}
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) != nil {
		return metav1.ObjectMeta{}, false
	}
	return obj.Metadata, true
}
