package installs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestRemoveDeletesOnlyTheRecordedObjects: Remove deletes a recorded object that still has
// its UID, finalizers first and only from the version it read, under a UID precondition;
// one of the same name made since by someone else, and one already gone, are left alone.
func TestRemoveDeletesOnlyTheRecordedObjects(t *testing.T) {
	type cm struct{ uid, rv, finalizers string }
	var (
		mu       sync.Mutex
		live     = map[string]cm{"mine": {"u1", "7", `["karplab/keep"]`}, "reused": {"u2-theirs", "9", "null"}}
		requests []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/karplab/configmaps/")
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/configmaps":
			var items []string
			for n, o := range live {
				items = append(items, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"karplab","uid":%q,"resourceVersion":%q,"finalizers":%s}}`, n, o.uid, o.rv, o.finalizers))
			}
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":"ConfigMapList","items":[%s]}`, strings.Join(items, ","))
		case r.Method == http.MethodPatch || r.Method == http.MethodDelete:
			var compact bytes.Buffer
			_ = json.Compact(&compact, body)
			requests = append(requests, r.Method+" "+name+" "+compact.String())
			if r.Method == http.MethodDelete {
				delete(live, name)
			}
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dyn, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	entry := func(name, uid string) Entry {
		return Entry{Version: "v1", Resource: "configmaps", Namespace: "karplab", Name: name, UID: uid}
	}
	removal, err := Remove(t.Context(), dyn, []Entry{entry("mine", "u1"), entry("reused", "u2"), entry("gone", "u3")}, io.Discard, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Removal{Deleted: []Entry{entry("mine", "u1")}, Gone: 2}, removal); diff != "" {
		t.Errorf("removal (-want +got):\n%s", diff)
	}
	want := []string{
		`PATCH mine {"metadata":{"finalizers":null,"resourceVersion":"7"}}`,
		`DELETE mine {"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"u1"}}`,
	}
	if diff := cmp.Diff(want, requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
