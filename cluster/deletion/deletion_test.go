package deletion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var nodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

// apiServer answers each request with the status code answers gives its method (200 when
// none) and notes "METHOD PATH BODY" for every request.
func apiServer(t *testing.T, answers map[string]int) (dynamic.Interface, *[]string) {
	var seen []string
	var mu sync.Mutex // DeleteAll's requests come side by side
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+string(body)))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		code := answers[r.Method]
		switch code {
		case 0:
			fmt.Fprint(w, `{"apiVersion":"karpenter.sh/v1","kind":"NodeClaim","metadata":{"name":"a"}}`)
		default:
			reason := map[int]string{http.StatusNotFound: "NotFound", http.StatusConflict: "Conflict", http.StatusForbidden: "Forbidden"}[code]
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":%q,"code":%d}`, reason, code)
		}
	}))
	t.Cleanup(srv.Close)
	dyn, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return dyn, &seen
}

// TestDelete: what Delete asks of the API server, and which answers it takes for done.
func TestDelete(t *testing.T) {
	const (
		strip      = `PATCH /apis/karpenter.sh/v1/nodeclaims/a {"metadata":{"finalizers":null}}`
		stripRV    = `PATCH /apis/karpenter.sh/v1/nodeclaims/a {"metadata":{"finalizers":null,"resourceVersion":"41"}}`
		del        = `DELETE /apis/karpenter.sh/v1/nodeclaims/a {"kind":"DeleteOptions","apiVersion":"v1"}`
		delUID     = `DELETE /apis/karpenter.sh/v1/nodeclaims/a {"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"u1"}}`
		recordedAs = "u1"
	)
	tests := []struct {
		name    string
		strip   bool
		pre     Precondition
		answers map[string]int
		want    []string
		wantErr string
	}{
		{name: "delete", want: []string{del}},
		{name: "force", strip: true, want: []string{strip, del}},
		{name: "recorded object", strip: true, pre: Precondition{UID: recordedAs, ResourceVersion: "41"}, want: []string{stripRV, delUID}},
		{name: "already gone", strip: true, answers: map[string]int{"PATCH": 404, "DELETE": 404}, want: []string{strip, del}},
		{name: "someone else's now", strip: true, pre: Precondition{UID: recordedAs, ResourceVersion: "41"},
			answers: map[string]int{"PATCH": 409, "DELETE": 409}, want: []string{stripRV, delUID}},
		{name: "conflict without a precondition", strip: true, answers: map[string]int{"PATCH": 409}, want: []string{strip},
			wantErr: "removing the finalizers of nodeclaims.karpenter.sh a: "},
		{name: "refused", answers: map[string]int{"DELETE": 403}, want: []string{del}, wantErr: "deleting nodeclaims.karpenter.sh a: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dyn, seen := apiServer(t, tt.answers)
			err := Delete(t.Context(), dyn, Object{GVR: nodeClaims, Name: "a"}, tt.strip, tt.pre)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Errorf("Delete error = %v, want %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, *seen); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectString(t *testing.T) {
	for _, tt := range []struct {
		o    Object
		want string
	}{
		{Object{GVR: nodeClaims, Name: "a"}, "nodeclaims.karpenter.sh a"},
		{Object{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "ziba", Name: "w"}, "pods ziba/w"},
	} {
		if got := tt.o.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.o, got, tt.want)
		}
	}
}

// TestWaitGone: the wait ends once nothing is left, names what is left after the timeout,
// and ends on left's error.
func TestWaitGone(t *testing.T) {
	calls := 0
	err := WaitGone(t.Context(), time.Minute, func(context.Context) ([]string, error) {
		calls++
		if calls < 2 {
			return []string{"a"}, nil
		}
		return nil, nil
	})
	if err != nil || calls != 2 {
		t.Errorf("gone on the second look: %v after %d looks", err, calls)
	}
	err = WaitGone(t.Context(), 0, func(context.Context) ([]string, error) { return []string{"a", "b"}, nil })
	if want := "still being deleted after 0s: [a b]"; err == nil || err.Error() != want {
		t.Errorf("timed out: %v, want %q", err, want)
	}
	broken := errors.New("listing: refused")
	err = WaitGone(t.Context(), time.Minute, func(context.Context) ([]string, error) { return nil, broken })
	if !errors.Is(err, broken) {
		t.Errorf("left's error: %v, want %v", err, broken)
	}
}

// TestEachKeepsCallsInFlight: Each has InFlight calls in flight at once, never more, and
// calls every index once.
func TestEachKeepsCallsInFlight(t *testing.T) {
	const n = 3 * InFlight
	var inFlight, most atomic.Int32
	var called [n]atomic.Int32
	full := make(chan struct{}) // closed once InFlight calls are in flight
	var once sync.Once
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := Each(ctx, n, func(ctx context.Context, i int) error {
		called[i].Add(1)
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		if now == InFlight {
			once.Do(func() { close(full) })
		}
		select { // one call at a time would wait here until ctx ends
		case <-full:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("call %d: only %d in flight: %w", i, now, ctx.Err())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m != InFlight {
		t.Errorf("at most %d calls in flight, want %d", m, InFlight)
	}
	for i := range called {
		if c := called[i].Load(); c != 1 {
			t.Errorf("index %d called %d times, want once", i, c)
		}
	}
}

// TestDeleteAll: every object's finalizers are removed before it is deleted, and a refusal
// is the answer.
func TestDeleteAll(t *testing.T) {
	var objs []Object
	var want []string
	for i := range 20 {
		name := fmt.Sprintf("n%d", i)
		objs = append(objs, Object{GVR: nodeClaims, Name: name})
		want = append(want, "PATCH /apis/karpenter.sh/v1/nodeclaims/"+name+` {"metadata":{"finalizers":null}}`,
			"DELETE /apis/karpenter.sh/v1/nodeclaims/"+name+` {"kind":"DeleteOptions","apiVersion":"v1"}`)
	}
	dyn, seen := apiServer(t, nil)
	if err := DeleteAll(t.Context(), dyn, objs, true); err != nil {
		t.Fatal(err)
	}
	// Side by side, so in any order; each object's PATCH comes before its DELETE.
	patched := map[string]bool{}
	for _, req := range *seen {
		path := strings.Fields(req)[1]
		switch strings.Fields(req)[0] {
		case "PATCH":
			patched[path] = true
		case "DELETE":
			if !patched[path] {
				t.Errorf("%s deleted before its finalizers were removed", path)
			}
		}
	}
	if diff := cmp.Diff(want, *seen, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	dyn, _ = apiServer(t, map[string]int{"DELETE": 403})
	if err := DeleteAll(t.Context(), dyn, objs, false); err == nil || !strings.Contains(err.Error(), "deleting nodeclaims.karpenter.sh n") {
		t.Errorf("a refused deletion: %v, want the refusal", err)
	}
}
