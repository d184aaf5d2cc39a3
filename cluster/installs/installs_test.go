package installs

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		path string
		want Entry
		ok   bool
	}{
		{"/api/v1/namespaces", Entry{Version: "v1", Resource: "namespaces"}, true},
		{"/api/v1/namespaces/karplab", Entry{Version: "v1", Resource: "namespaces"}, true},
		{"/api/v1/namespaces/kube-system/services", Entry{Version: "v1", Namespace: "kube-system", Resource: "services"}, true},
		{"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.karpenter.sh", Entry{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, true},
		{"/apis/karpenter.sh/v1/nodeclaims", Entry{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}, true},
		{"/api/v1/namespaces/ziba/pods/w-1/eviction", Entry{}, false},
		{"/api/v1/namespaces/ziba/pods/w-1/binding", Entry{}, false},
		{"/api/v1/namespaces/ziba/finalize", Entry{}, false},
		{"/apis/authorization.k8s.io", Entry{}, false},
		{"/version", Entry{}, false},
	}
	for _, tt := range tests {
		got, ok := parsePath(tt.path)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parsePath(%q) = %+v, %t; want %+v, %t", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

// TestTransportRecordsCreations: a real client-go clientset through the recording transport;
// what the API server says it created (JSON or protobuf) is recorded, nothing else is.
func TestTransportRecordsCreations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/configmaps"):
			cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "clock", Namespace: "karplab", UID: "uid-cm"}}
			if strings.Contains(r.Header.Get("Accept"), "protobuf") {
				raw, _ := cm.Marshal()
				u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Raw: raw, ContentType: "application/vnd.kubernetes.protobuf"}
				b, _ := u.Marshal()
				w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
				w.WriteHeader(http.StatusCreated)
				w.Write(append([]byte{0x6b, 0x38, 0x73, 0x00}, b...))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"clock","namespace":"karplab","uid":"uid-cm"}}`))
		case r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"AlreadyExists","code":409}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, contentType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(contentType, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "installed.jsonl")
			cfg := WrapConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}}, Open(path, "test"))
			cs := kubernetes.NewForConfigOrDie(cfg)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "clock"}}
			if _, err := cs.CoreV1().ConfigMaps("karplab").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CoreV1().Secrets("karplab").Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err == nil {
				t.Fatal("want the conflict back")
			}
			got, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			want := []Entry{{By: "test", Version: "v1", Resource: "configmaps", Namespace: "karplab", Name: "clock", UID: "uid-cm"}}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Entry{}, "At")); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadKeepsLastUIDAndSkipsATornLine: a recreated object is one entry with its newest UID;
// a line cut short by a crash is skipped, not fatal.
func TestReadKeepsLastUIDAndSkipsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "installed.jsonl")
	r := Open(path, "daemon")
	for _, uid := range []string{"a", "b"} {
		if err := r.Add(Entry{Version: "v1", Resource: "services", Namespace: "kube-system", Name: "kube-dns", UID: uid}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Add(Entry{Version: "v1", Resource: "namespaces", Name: "karplab", UID: "ns"}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"version":"v1","resource":"nodes","na`)
	f.Close()
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UID != "b" || got[1].Name != "karplab" {
		t.Errorf("Read = %+v, want kube-dns with uid b, then namespace karplab", got)
	}
}
