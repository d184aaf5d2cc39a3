package karpenter

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/fakeec2"
)

// decodeLines decodes each line of a JSON body (one, or a watch stream's events).
func decodeLines(t *testing.T, body string) []any {
	t.Helper()
	var out []any
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, v)
	}
	return out
}

// TestLabViewRewritesNodeClaims: through the plugin's transport, a NodeClaim created after a
// 720h skip reads as created in lab time, in an object, a list and each event of a watch
// stream, and so do its conditions dated on the wall clock (an initial Registered=Unknown),
// while those Karpenter dated on its lab clock keep their time; a NodeClaim created before
// the skip keeps its times; other resources pass untouched.
func TestLabViewRewritesNodeClaims(t *testing.T) {
	wall := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	v := &labView{}
	v.set([]fakeec2.LabSkip{{Wall: wall, From: wall, To: wall.Add(720 * time.Hour)}})
	claim := func(created, registered, launched string) string {
		return fmt.Sprintf(`{"kind":"NodeClaim","metadata":{"name":"c","creationTimestamp":%q},"status":{"conditions":[`+
			`{"type":"Registered","status":"Unknown","lastTransitionTime":%q},{"type":"Launched","status":"True","lastTransitionTime":%q}]}}`,
			created, registered, launched)
	}
	before := claim("2026-12-04T09:59:00Z", "2026-12-04T09:59:00Z", "2026-12-04T09:59:02Z")
	after := claim("2026-12-04T10:01:00Z", "2026-12-04T10:01:00Z", "2027-01-03T10:01:02Z")
	afterLab := claim("2027-01-03T10:01:00Z", "2027-01-03T10:01:00Z", "2027-01-03T10:01:02Z")
	pods := `{"kind":"PodList","items":[{"metadata":{"creationTimestamp":"2026-12-04T10:01:00Z"}}]}`
	bodies := map[string][2]string{ // response, want
		"/apis/karpenter.sh/v1/nodeclaims/c": {after, afterLab},
		"/apis/karpenter.sh/v1/nodeclaims": {`{"kind":"NodeClaimList","items":[` + before + `,` + after + `]}`,
			`{"kind":"NodeClaimList","items":[` + before + `,` + afterLab + `]}`},
		"/apis/karpenter.sh/v1/nodeclaims?watch=true": {
			`{"type":"ADDED","object":` + after + "}\n" + `{"type":"MODIFIED","object":` + before + "}\n",
			`{"type":"ADDED","object":` + afterLab + "}\n" + `{"type":"MODIFIED","object":` + before + "}\n"},
		"/api/v1/pods": {pods, pods},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, bodies[r.URL.RequestURI()][0])
	}))
	defer srv.Close()
	get := func(rt http.RoundTripper, uri string) string {
		resp, err := (&http.Client{Transport: rt}).Get(srv.URL + uri)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	for uri, b := range bodies {
		got := get(v.WrapTransport(http.DefaultTransport), uri)
		if diff := cmp.Diff(decodeLines(t, b[1]), decodeLines(t, got)); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", uri, diff)
		}
	}
	// Without a skip nothing is rewritten.
	if got := get((&labView{}).WrapTransport(http.DefaultTransport), "/apis/karpenter.sh/v1/nodeclaims/c"); got != after {
		t.Errorf("no skip, yet the NodeClaim changed: %s", got)
	}
}

// TestLabViewSecondOfTheSkip: the API server keeps whole seconds, so a NodeClaim made just
// after a skip reads as made in the second the skip happened in: it takes the new lead (with
// the old one a 15m skip made it 15 minutes old at birth, past the registration TTL, and
// Karpenter deleted it 1.2 s after its launch), as does one in the skip's second before it.
func TestLabViewSecondOfTheSkip(t *testing.T) {
	skip := time.Date(2026, 12, 4, 10, 0, 0, 600_000_000, time.UTC) // 10:00:00.6
	v := &labView{}
	v.set([]fakeec2.LabSkip{{Wall: skip, From: skip, To: skip.Add(15 * time.Minute)}})
	tests := []struct {
		name    string
		created time.Time // as the API server writes it
		want    time.Time
	}{
		{"made 0.3 s after the skip (10:00:00.9)", time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 4, 10, 15, 0, 0, time.UTC)},
		{"the second after", time.Date(2026, 12, 4, 10, 0, 1, 0, time.UTC), time.Date(2026, 12, 4, 10, 15, 1, 0, time.UTC)},
		{"the second before", time.Date(2026, 12, 4, 9, 59, 59, 0, time.UTC), time.Date(2026, 12, 4, 9, 59, 59, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := v.lab(tt.created); !got.Equal(tt.want) {
				t.Errorf("lab(%s) = %s, want %s", tt.created.Format(time.TimeOnly), got.Format(time.TimeOnly), tt.want.Format(time.TimeOnly))
			}
		})
	}
}

// TestNodeClaimsInLabTime: the daemon's typed conversion follows the same rule.
func TestNodeClaimsInLabTime(t *testing.T) {
	wall := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	nc := claim("c", map[string]time.Duration{karpv1.ConditionTypeLaunched: 2 * time.Second}, karpv1.ConditionTypeLaunched)
	nc.CreationTimestamp = metav1.NewTime(wall.Add(time.Minute))
	nc.Spec.ExpireAfter = karpv1.MustParseNillableDuration("720h")
	nc.Status.Conditions[0].LastTransitionTime = metav1.NewTime(wall.Add(time.Minute))
	claims := []karpv1.NodeClaim{nc}
	if err := NodeClaimsInLabTime(claims, []fakeec2.LabSkip{{Wall: wall, From: wall, To: wall.Add(720 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	want := wall.Add(720*time.Hour + time.Minute)
	if got := claims[0].CreationTimestamp.Time; !got.Equal(want) {
		t.Errorf("creation %s, want %s", got, want)
	}
	if d := claims[0].Spec.ExpireAfter.Duration; d == nil || *d != 720*time.Hour {
		t.Errorf("expireAfter %v after the conversion, want 720h", d)
	}
	if got := claims[0].Status.Conditions[0].LastTransitionTime.Time; !got.Equal(want) {
		t.Errorf("Launched=Unknown dated %s on the wall clock, want %s in lab time", got, want)
	}
}
