package replay

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type entry struct {
	name, body string
	typ        byte
	link       string
}

// tarGz writes a .tar.gz of entries and returns its path.
func tarGz(t *testing.T, entries ...entry) string {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	tw := tar.NewWriter(z)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	z.Close()
	p := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const node = `apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-0-1.ec2.internal
  labels:
    topology.kubernetes.io/region: us-east-1
    topology.kubernetes.io/zone: us-east-1a
    node.kubernetes.io/instance-type: m5.large
`

// Bundles come from other people: each way one could write outside the lab's directory, or
// swamp it, is refused in one line naming the file, and nothing is written outside.
func TestOpenRefusesWhatAnUntrustedBundleCouldDo(t *testing.T) {
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n" +
		"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\nkind: Pod\napiVersion: v1\n"
	tests := []struct {
		name    string
		entries []entry
		lim     Limits
		want    string
	}{
		{name: "a path up and out", entries: []entry{{name: "../evil", body: "x"}}, want: `entry "../evil" leaves the bundle`},
		{name: "an absolute path", entries: []entry{{name: "/tmp/evil", body: "x"}}, want: `leaves the bundle`},
		{name: "a symlink", entries: []entry{{name: "cluster.yaml", typ: tar.TypeSymlink, link: "/etc/passwd"}}, want: "is not a plain file"},
		{name: "a hard link", entries: []entry{{name: "cluster.yaml", typ: tar.TypeLink, link: "../x"}}, want: "is not a plain file"},
		{name: "a file past the limit", entries: []entry{{name: "cluster.yaml", body: strings.Repeat(node+"---\n", 10)}}, lim: Limits{File: 100, Total: 1 << 20, Entries: 10}, want: "past the limit of 100"},
		{name: "an alias bomb", entries: []entry{{name: "cluster.yaml", body: bomb}}, want: "cluster.yaml: after 0 objects: error converting YAML to JSON: yaml: document contains excessive aliasing"},
		{name: "no objects at all", entries: []entry{{name: "aws/instances.json", body: "{}"}}, want: "the bundle has no Kubernetes objects"},
		{name: "a broken time offset", entries: []entry{{name: "cluster.yaml", body: node + "  annotations:\n    at: $(time-offset-nanosecond x)\n"}}, want: "a malformed time offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.lim
			if lim.File == 0 {
				lim = DefaultLimits
			}
			src := tarGz(t, tt.entries...)
			into := filepath.Join(t.TempDir(), "lab", "replay")
			_, err := Open(src, into, lim)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Open: %v; want one line with %q", err, tt.want)
			}
			for _, p := range []string{filepath.Join(filepath.Dir(into), "evil"), filepath.Join(filepath.Dir(filepath.Dir(into)), "evil")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written outside the bundle's directory", p)
				}
			}
		})
	}
}

func TestOpenRefusesACorruptArchive(t *testing.T) {
	good := tarGz(t, entry{name: "cluster.yaml", body: node})
	b, _ := os.ReadFile(good)
	for name, data := range map[string][]byte{"not gzip": []byte("PK\x03\x04 a zip"), "cut short": b[:len(b)/2]} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "b.tar.gz")
			os.WriteFile(p, data, 0o644)
			if _, err := Open(p, filepath.Join(t.TempDir(), "x"), DefaultLimits); err == nil || !strings.Contains(err.Error(), "b.tar.gz: ") {
				t.Errorf("Open: %v", err)
			}
		})
	}
}

// A capture writes kwok's export format (times as offsets from the capture); Open puts the
// times back, around the capture's time.
func TestExportRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	created := at.Add(-90 * time.Minute)
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("Node")
	obj.SetName("n1")
	obj.SetCreationTimestamp(metav1Time(created))
	dir := t.TempDir()
	if err := writeObjects(filepath.Join(dir, ClusterFile), at, []*unstructured.Unstructured{obj}); err != nil {
		t.Fatal(err)
	}
	raw, _ := readLimited(filepath.Join(dir, ClusterFile), 1<<20)
	if !strings.Contains(string(raw), "$(time-offset-nanosecond -5400000000000)") {
		t.Errorf("the export does not write times as offsets:\n%s", raw)
	}
	os.WriteFile(filepath.Join(dir, CapturedAtFile), []byte(at.Format(time.RFC3339Nano)), 0o644)
	b, err := Open(dir, "", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Objects) != 1 || !b.Objects[0].GetCreationTimestamp().Time.Equal(created) || !b.CapturedAt.Equal(at) {
		t.Errorf("read back %d objects, created %v (want %v), captured %v", len(b.Objects), b.Objects[0].GetCreationTimestamp(), created, b.CapturedAt)
	}
}

func metav1Time(t time.Time) metav1.Time { return metav1.NewTime(t) }

// TestBundleWithoutCapturedAtIsDatedByItsObjects: a kubectl get -o yaml bundle has no
// captured-at; it reads as captured at the latest time its objects carry, not at the replay.
func TestBundleWithoutCapturedAtIsDatedByItsObjects(t *testing.T) {
	dir := t.TempDir()
	cluster := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: shop, creationTimestamp: "2026-10-01T08:00:00Z"}
- apiVersion: karpenter.sh/v1
  kind: NodeClaim
  metadata: {name: general-abcde, creationTimestamp: "2026-11-20T10:00:00Z"}
  status:
    conditions:
    - {type: Launched, status: "True", reason: Launched, message: "", lastTransitionTime: "2026-11-20T10:00:21Z"}
    - {type: Initialized, status: "True", reason: Initialized, message: "", lastTransitionTime: "2026-11-20T10:01:02Z"}
`
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(cluster), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, "", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 20, 10, 1, 2, 0, time.UTC)
	if !b.CapturedAtInferred || !b.CapturedAt.Equal(want) {
		t.Errorf("captured %s (inferred %v), want %s, the latest time the objects carry", b.CapturedAt, b.CapturedAtInferred, want)
	}
}
