package replay

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kwok/pkg/kwokctl/recording"
	kwokyaml "sigs.k8s.io/kwok/pkg/utils/yaml"
)

// Limits bound what a bundle may hold: it comes from somebody else.
type Limits struct {
	// File is the most one file may hold once decompressed.
	File int64
	// Total is the most a whole bundle may hold once decompressed.
	Total int64
	// Entries is the most files a .tar.gz may hold.
	Entries int
}

// DefaultLimits fit a cluster of some thousands of nodes and tens of thousands of pods.
var DefaultLimits = Limits{File: 512 << 20, Total: 2 << 30, Entries: 1000}

// Bundle is a capture as a replay reads it.
type Bundle struct {
	// Dir holds its files (a .tar.gz is unpacked there first).
	Dir        string
	CapturedAt time.Time
	// CapturedAtInferred is set when the bundle has no captured-at (kubectl get -o yaml):
	// CapturedAt is then the latest time its objects carry.
	CapturedAtInferred bool
	// Objects are the Kubernetes objects, times restored around CapturedAt.
	Objects []*unstructured.Unstructured
	// Karpenter is Karpenter's Deployment, nil when the bundle has none.
	Karpenter *unstructured.Unstructured
	// AWS is the account's side, as far as the bundle has it.
	AWS AWSSide
}

// BundleError is a bundle the lab refuses: which file, and why.
type BundleError struct {
	File string
	Err  error
}

func (e *BundleError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *BundleError) Unwrap() error { return e.Err }

// Open reads a bundle: a directory, or a .tar.gz unpacked into into (which must be empty or
// absent; nothing is written elsewhere). It refuses, naming the file, a tar entry whose path
// leaves the bundle or that is not a plain file or directory, a file past the limits, YAML
// that aliases excessively, and a bundle without its Kubernetes objects.
func Open(src, into string, lim Limits) (*Bundle, error) {
	dir := src
	if st, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("reading the bundle: %w", err)
	} else if !st.IsDir() {
		if !strings.HasSuffix(src, ".tar.gz") && !strings.HasSuffix(src, ".tgz") {
			return nil, &BundleError{src, errors.New("a bundle is a directory or a .tar.gz of one")}
		}
		if err := checkEmpty(into); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(into, 0o755); err != nil {
			return nil, err
		}
		if err := untar(src, into, lim); err != nil {
			return nil, err
		}
		dir = into
	}
	return readDir(dir, lim)
}

// untar unpacks a .tar.gz into dir, refusing what could write outside it.
func untar(src, dir string, lim Limits) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return &BundleError{src, fmt.Errorf("not gzip: %w", err)}
	}
	tr := tar.NewReader(z)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &BundleError{src, fmt.Errorf("corrupt or partial archive: %w", err)}
		}
		if n >= lim.Entries {
			return &BundleError{src, fmt.Errorf("more than %d entries", lim.Entries)}
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if !filepath.IsLocal(name) {
			return &BundleError{src, fmt.Errorf("entry %q leaves the bundle: refused", h.Name)}
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		case tar.TypeReg:
		default:
			return &BundleError{src, fmt.Errorf("entry %q is not a plain file (links and devices are refused)", h.Name)}
		}
		if h.Size > lim.File {
			return &BundleError{src, fmt.Errorf("entry %q holds %d bytes, past the limit of %d", h.Name, h.Size, lim.File)}
		}
		if total += h.Size; total > lim.Total {
			return &BundleError{src, fmt.Errorf("the bundle holds more than %d bytes", lim.Total)}
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, io.LimitReader(tr, h.Size))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return &BundleError{src, fmt.Errorf("entry %q: %w", h.Name, err)}
		}
	}
}

// readDir reads a bundle's directory.
func readDir(dir string, lim Limits) (*Bundle, error) {
	b := &Bundle{Dir: dir}
	at, err := readLimited(filepath.Join(dir, CapturedAtFile), lim.File)
	switch {
	case os.IsNotExist(err):
		// A kubectl get -o yaml bundle: its times are absolute; the base is dated below.
		b.CapturedAt, b.CapturedAtInferred = time.Now().UTC(), true
	case err != nil:
		return nil, err
	default:
		if b.CapturedAt, err = time.Parse(time.RFC3339Nano, strings.TrimSpace(string(at))); err != nil {
			return nil, &BundleError{CapturedAtFile, fmt.Errorf("not an RFC 3339 time: %w", err)}
		}
	}
	cluster, name, err := readFirst(dir, lim, ClusterFile, "cluster.yaml")
	if err != nil {
		return nil, err
	}
	if b.Objects, err = decodeObjects(name, cluster, b.CapturedAt); err != nil {
		return nil, err
	}
	if t := latestTime(b.Objects); b.CapturedAtInferred && !t.IsZero() {
		b.CapturedAt = t
	}
	if k, err := readLimited(filepath.Join(dir, KarpenterFile), lim.File); err == nil {
		objs, err := decodeObjects(KarpenterFile, k, b.CapturedAt)
		if err != nil {
			return nil, err
		}
		if len(objs) == 1 {
			b.Karpenter = objs[0]
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	if b.AWS, err = readAWSSide(dir, lim); err != nil {
		return nil, err
	}
	return b, nil
}

// latestTime is the latest creation or condition transition the objects carry: a capture
// was taken no earlier (zero when they carry none).
func latestTime(objs []*unstructured.Unstructured) time.Time {
	var latest time.Time
	see := func(t time.Time) {
		if t.After(latest) {
			latest = t.UTC()
		}
	}
	for _, o := range objs {
		see(o.GetCreationTimestamp().Time)
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				v, _ := m["lastTransitionTime"].(string)
				t, _ := time.Parse(time.RFC3339, v)
				see(t)
			}
		}
	}
	return latest
}

// readFirst reads the first of names that the bundle has, decompressed.
func readFirst(dir string, lim Limits, names ...string) ([]byte, string, error) {
	for _, n := range names {
		b, err := readLimited(filepath.Join(dir, n), lim.File)
		if os.IsNotExist(err) {
			continue
		}
		return b, n, err
	}
	return nil, "", &BundleError{dir, fmt.Errorf("no %s: the bundle has no Kubernetes objects (karplab capture writes it; or kubectl get ... -o yaml > cluster.yaml)", strings.Join(names, " or "))}
}

// readLimited reads a file, gunzipped when it is a .gz, refusing one past limit.
func readLimited(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, &BundleError{filepath.Base(p), fmt.Errorf("not gzip: %w", err)}
		}
		r = z
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, &BundleError{filepath.Base(p), fmt.Errorf("corrupt or partial: %w", err)}
	}
	if int64(len(b)) > limit {
		return nil, &BundleError{filepath.Base(p), fmt.Errorf("more than %d bytes once decompressed: past the limit", limit)}
	}
	return b, nil
}

// offsetMark is what kwok's export writes for a time; none may be left once they are restored.
const offsetMark = "$(time-offset-nanosecond"

// decodeObjects decodes multi-document YAML or a List, with kwok's decoder, after putting
// kwok's time offsets back around base.
func decodeObjects(name string, data []byte, base time.Time) ([]*unstructured.Unstructured, error) {
	data = recording.RevertTimeFromRelative(base, data)
	if i := bytes.Index(data, []byte(offsetMark)); i >= 0 {
		return nil, &BundleError{name, fmt.Errorf("a malformed time offset at byte %d", i)}
	}
	dec := kwokyaml.NewDecoder(bytes.NewReader(data))
	var out []*unstructured.Unstructured
	for {
		obj, err := dec.DecodeUnstructured()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, &BundleError{name, fmt.Errorf("after %d objects: %w", len(out), err)}
		}
		if obj.GetKind() == "ResourcePatch" {
			return out, nil // kwok's recorded timeline follows the objects; replay starts from them
		}
		out = append(out, obj)
	}
}
