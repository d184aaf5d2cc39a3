package karpenter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/installs"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

// Karpenter's view of NodeClaims in lab time. The API server dates creationTimestamp on the
// wall clock, and core compares it with its own (lab) clock: expiration adds expireAfter to
// it, drift and disruption cost age NodeClaims by it. After a skip, a NodeClaim created then
// would look older by the whole lead, and a skip past expireAfter would expire every
// replacement at birth. So the Karpenter process reads each NodeClaim's creationTimestamp
// (and the conditions dated on the wall clock, see toLab) in lab time (the wall time plus
// the lead in force then), as if the API server kept lab time. The view is a client-go auth-provider plugin, the hook client-go offers to wrap a
// client's transport, named in the kubeconfig Karpenter is given; writes are untouched,
// and the API server ignores a changed creationTimestamp on update.

// labViewProvider is the auth-provider name the plugin is registered under.
const labViewProvider = "karplab-lab-time"

// labView holds the skips of lab time so far; safe for concurrent use.
type labView struct {
	mu    sync.RWMutex
	skips []fakeec2.LabSkip

	log              *slog.Logger // nil: silent
	rewrote, foreign sync.Once
	// record, when set, notes every object the process creates (for stop --uninstall).
	record *installs.Record
}

func (v *labView) set(skips []fakeec2.LabSkip) {
	v.mu.Lock()
	v.skips = skips
	v.mu.Unlock()
}

// skipped says whether lab time ever ran ahead: until then the view changes nothing.
func (v *labView) skipped() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.skips) > 0
}

func (v *labView) once(o *sync.Once, msg string, args ...any) {
	if v.log != nil {
		o.Do(func() { v.log.Info(msg, args...) })
	}
}

// lab puts a wall time of the API server's (whole seconds: metav1.Time drops the fraction)
// into lab time. A time in the second of a skip takes the lead after it: a NodeClaim made
// 0.3 s after the skip reads its creation as the second before, and with the lead before the
// skip it would be born older than the registration TTL and deleted at once. One made in
// that second before the skip reads under a second younger than it is.
func (v *labView) lab(w time.Time) time.Time {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return w.Add(fakeec2.LeadAt(v.skips, w.Truncate(time.Second).Add(time.Second-time.Nanosecond)))
}

// refresh reads the skips off the lab account's audit trail until they add up to offset,
// the clock's lead: the account moves its clock first and records the skip a moment later.
func (v *labView) refresh(ctx context.Context, admin *fakeec2.AdminClient, offset time.Duration) error {
	var lead time.Duration
	for range 100 {
		audit, err := admin.Audit(ctx, trail.AuditQuery{Service: "karplab", Action: "SkipTime"})
		if err != nil {
			return fmt.Errorf("reading the skips of lab time: %w", err)
		}
		skips := fakeec2.LabSkips(audit)
		if lead = fakeec2.Lead(skips); lead == offset {
			v.set(skips)
			return nil
		}
		sleepCtx(ctx, 50*time.Millisecond)
	}
	return fmt.Errorf("the audit trail's skips add up to %s, the lab clock's lead is %s", lead, offset)
}

var registerLabView sync.Once

// labViewKubeconfig registers v (once per process) and writes a copy of the kubeconfig at
// path whose user also names the plugin; it returns the copy's path (beside the original,
// owner-only: it holds the same credentials).
func labViewKubeconfig(path string, v *labView) (string, error) {
	var regErr error
	registerLabView.Do(func() {
		regErr = rest.RegisterAuthProviderPlugin(labViewProvider, func(string, map[string]string, rest.AuthProviderConfigPersister) (rest.AuthProvider, error) {
			return v, nil
		})
	})
	if regErr != nil {
		return "", regErr
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", fmt.Errorf("reading kubeconfig: %w", err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil {
		return "", fmt.Errorf("kubeconfig %s: no user for its current context %q", path, cfg.CurrentContext)
	}
	cfg.AuthInfos[ctx.AuthInfo].AuthProvider = &clientcmdapi.AuthProviderConfig{Name: labViewProvider}
	out := LabViewKubeconfig(path)
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		return "", fmt.Errorf("writing Karpenter's kubeconfig: %w", err)
	}
	return out, os.Chmod(out, 0o600)
}

// LabViewKubeconfig is where the Karpenter process writes its copy of the kubeconfig at path.
func LabViewKubeconfig(path string) string {
	return filepath.Join(filepath.Dir(path), "karpenter-lab-time.kubeconfig")
}

// WrapTransport and Login make labView a client-go AuthProvider.
func (v *labView) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	if v.record != nil {
		rt = v.record.Transport(rt)
	}
	return &labViewTransport{next: rt, view: v}
}

func (v *labView) Login() error { return nil }

type labViewTransport struct {
	next http.RoundTripper
	view *labView
}

// RoundTrip rewrites NodeClaim responses (objects, lists and watch streams, which are JSON
// for custom resources) into lab time.
func (t *labViewTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || !strings.HasPrefix(req.URL.Path, "/apis/karpenter.sh/") || !strings.Contains(req.URL.Path, "/nodeclaims") {
		return resp, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
		t.view.once(&t.view.foreign, "NodeClaims arrive in a form the lab-time view cannot read", "contentType", ct)
		return resp, nil
	}
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	pr, pw := io.Pipe()
	body := resp.Body
	go func() {
		r := bufio.NewReaderSize(body, 64<<10)
		for {
			// A watch stream writes one event per line; an object or list is one line.
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if _, werr := pw.Write(t.rewrite(line)); werr != nil {
					body.Close()
					return
				}
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				pw.CloseWithError(err)
				body.Close()
				return
			}
		}
	}()
	resp.Body = pipeBody{PipeReader: pr, orig: body}
	return resp, nil
}

func (t *labViewTransport) rewrite(b []byte) []byte {
	if !t.view.skipped() || !bytes.Contains(b, []byte(`"creationTimestamp"`)) {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return b
	}
	t.view.toLab(v)
	t.view.once(&t.view.rewrote, "Karpenter reads NodeClaims in lab time")
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// toLab puts the NodeClaims in v (an object, a list's items, a watch event's object) into
// lab time: creationTimestamp by the lead in force then, and every condition dated before
// that lab creation time. Karpenter dates conditions on its lab clock, but operatorpkg
// initialises missing ones (Launched, Registered, ... Unknown) on the real clock unless
// given one, and core reads them with its lab clock: the 15-minute registration timeout
// would count the whole lead. A lab-dated condition can never precede the NodeClaim's lab
// creation, so one that does was dated on the wall clock.
func (v *labView) toLab(x any) {
	m, ok := x.(map[string]any)
	if !ok {
		return
	}
	if obj, ok := m["object"]; ok {
		v.toLab(obj)
	}
	if items, ok := m["items"].([]any); ok {
		for _, it := range items {
			v.toLab(it)
		}
	}
	meta, _ := m["metadata"].(map[string]any)
	created, ok := v.shift(meta, "creationTimestamp", time.Time{})
	if !ok {
		return
	}
	status, _ := m["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if cm, ok := c.(map[string]any); ok {
			v.shift(cm, "lastTransitionTime", created)
		}
	}
}

// shift puts m[key], a wall time, into lab time if it is before limit (always for a zero
// limit); it returns the time as it stands after.
func (v *labView) shift(m map[string]any, key string, limit time.Time) (time.Time, bool) {
	s, _ := m[key].(string)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	if !limit.IsZero() && !t.Before(limit) {
		return t, true
	}
	lab := v.lab(t)
	m[key] = lab.UTC().Format(time.RFC3339)
	return lab, true
}

// NodeClaimsInLabTime puts NodeClaims read from the API server into lab time, as the
// Karpenter process reads them (toLab), given the skips so far. It goes through JSON, as
// the view does: the unstructured converter would not keep NillableDuration's raw form.
func NodeClaimsInLabTime(claims []karpv1.NodeClaim, skips []fakeec2.LabSkip) error {
	v := &labView{skips: skips}
	for i := range claims {
		b, err := json.Marshal(&claims[i])
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var m any
		if err := dec.Decode(&m); err != nil {
			return err
		}
		v.toLab(m)
		if b, err = json.Marshal(m); err != nil {
			return err
		}
		var nc karpv1.NodeClaim
		if err := json.Unmarshal(b, &nc); err != nil {
			return fmt.Errorf("reading NodeClaim %s in lab time: %w", claims[i].Name, err)
		}
		claims[i] = nc
	}
	return nil
}

// pipeBody closes the API server's stream with the rewritten one, so an idle watch the
// client stops does not linger.
type pipeBody struct {
	*io.PipeReader
	orig io.Closer
}

func (p pipeBody) Close() error {
	p.orig.Close()
	return p.PipeReader.Close()
}
