package fakeec2

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/statefile"
	"github.com/karplab/karplab/fakeec2/trail"
)

// adminPrefix is where the admin API lives: JSON over HTTP, not part of the EC2 API.
//
//	GET    /_karplab/health                   Health
//	GET    /_karplab/audit?action=&caller=&resourceId=&errorCode=&since=&until=&mutating=true&limit=
//	GET    /_karplab/billing                  Billing
//	GET    /_karplab/billing/by-tag?key=K     CostReport
//	GET    /_karplab/policy                   Policy
//	PUT    /_karplab/policy                   Policy in, Policy out
//	GET    /_karplab/faults                   []Fault
//	POST   /_karplab/faults                   Fault in, Fault (with ID) out
//	DELETE /_karplab/faults[?id=ID]           clear one or all
//	POST   /_karplab/reset                    wipe instances, volumes, ENIs, templates, ledger, audit, policy, faults; lab time back to wall time
//	GET    /_karplab/decode?message=M         DecodedMessage
//	POST   /_karplab/interrupt                InterruptRequest in, []AuditEvent out (spot warning, then reclaim)
//	POST   /_karplab/events                   EventRequest in, []AuditEvent out (rebalance, scheduled change)
//	POST   /_karplab/console                  ConsoleRequest in: lines for an instance's GetConsoleOutput
//	POST   /_karplab/releases                 ReleaseRequest in, []PublishedImage out (new AMIs)
//	POST   /_karplab/import                   Import in: a captured account's network, images and instances (all or nothing)
//	GET    /_karplab/budgets                  []budgets.Budget (spend as of now, alerts fired)
//	PUT    /_karplab/budgets                  budgets.Spec in, budgets.Budget out (create or update)
//	DELETE /_karplab/budgets?name=N           delete one budget
//	GET    /_karplab/time                     LabTime (the account's clock and its lead); ?waitChangeFrom=NANOS
//	                                          answers once the lead differs from NANOS (or after 20 s)
//	POST   /_karplab/time/skip                TimeSkipRequest in, TimeSkip out (400: a bad duration)
//
// Errors come back as {"error": "..."} with a 4xx/5xx status.
const adminPrefix = "/_karplab/"

// Health is the answer of GET /_karplab/health.
type Health struct {
	Status    string    `json:"status"` // "ok"
	Region    string    `json:"region"`
	Zones     []string  `json:"zones"`
	Time      time.Time `json:"time"`
	Instances int       `json:"instances"`
	Persisted bool      `json:"persisted"`
}

// DecodedMessage is the answer of GET /_karplab/decode.
type DecodedMessage struct {
	Message string `json:"message"`
	Reason  string `json:"reason"`
}

type adminError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func adminFail(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, adminError{Error: fmt.Sprintf(format, args...)})
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	route := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, adminPrefix), "/")
	s.log.Debug("admin request", "method", r.Method, "path", r.URL.Path)
	serve, ok := adminRoutes[route]
	if !ok {
		adminFail(w, http.StatusNotFound, "no admin route %q", r.URL.Path)
		return
	}
	serve(s, w, r)
}

// adminRoutes are the admin API's routes under /_karplab/.
var adminRoutes = map[string]func(*Server, http.ResponseWriter, *http.Request){
	"health":         (*Server).serveAdminHealth,
	"audit":          (*Server).serveAdminAudit,
	"billing":        func(s *Server, w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Billing()) },
	"billing/by-tag": (*Server).serveAdminCostByTag,
	"policy":         (*Server).serveAdminPolicy,
	"faults":         (*Server).serveAdminFaults,
	"reset":          (*Server).serveAdminReset,
	"interrupt": func(s *Server, w http.ResponseWriter, r *http.Request) {
		adminAction(w, r, func(req InterruptRequest) (any, error) {
			warning := DefaultSpotWarning
			if req.WarningSeconds != nil {
				warning = time.Duration(*req.WarningSeconds) * time.Second
			}
			return s.InterruptSpot(req.InstanceIDs, warning)
		})
	},
	"events": func(s *Server, w http.ResponseWriter, r *http.Request) {
		adminAction(w, r, func(req EventRequest) (any, error) { return s.RaiseEvent(req.Kind, req.InstanceIDs) })
	},
	"console": func(s *Server, w http.ResponseWriter, r *http.Request) {
		adminAction(w, r, func(req ConsoleRequest) (any, error) {
			return map[string]string{"status": "appended"}, s.AppendConsoleOutput(req.InstanceID, req.Text)
		})
	},
	"releases": func(s *Server, w http.ResponseWriter, r *http.Request) {
		adminAction(w, r, func(req ReleaseRequest) (any, error) { return s.PublishRelease(req.Release) })
	},
	"import": func(s *Server, w http.ResponseWriter, r *http.Request) {
		adminAction(w, r, func(req Import) (any, error) {
			return map[string]int{"instances": len(req.Instances)}, s.Import(req)
		})
	},
	"budgets":   (*Server).serveAdminBudgets,
	"time":      (*Server).serveAdminTime,
	"time/skip": (*Server).serveAdminSkip,
	"decode":    (*Server).serveAdminDecode,
}

// adminAction serves a POST route: it decodes the body into a T, runs do and answers its
// result, or do's error as a 400.
func adminAction[T any](w http.ResponseWriter, r *http.Request, do func(T) (any, error)) {
	var req T
	if !decodeAdminPost(w, r, &req) {
		return
	}
	out, err := do(req)
	if err != nil {
		adminFail(w, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) serveAdminHealth(w http.ResponseWriter, _ *http.Request) {
	n := s.ec2.InstanceCount()
	writeJSON(w, http.StatusOK, Health{Status: "ok", Region: s.region, Zones: s.Zones(), Time: s.clock.Now(),
		Instances: n, Persisted: s.persist != nil})
}

func (s *Server) serveAdminAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	aq := trail.AuditQuery{Service: q.Get("service"), Action: q.Get("action"), Caller: q.Get("caller"), ResourceID: q.Get("resourceId"),
		ErrorCode: q.Get("errorCode"), MutatingOnly: q.Get("mutating") == "true"}
	var err error
	if aq.Since, err = parseAdminTime(q.Get("since")); err != nil {
		adminFail(w, http.StatusBadRequest, "since: %v", err)
		return
	}
	if aq.Until, err = parseAdminTime(q.Get("until")); err != nil {
		adminFail(w, http.StatusBadRequest, "until: %v", err)
		return
	}
	if l := q.Get("limit"); l != "" {
		if aq.Limit, err = strconv.Atoi(l); err != nil || aq.Limit < 0 {
			adminFail(w, http.StatusBadRequest, "limit: want a non-negative integer, got %q", l)
			return
		}
	}
	events := s.Audit(aq)
	if events == nil {
		events = []trail.AuditEvent{}
	}
	writeJSON(w, http.StatusOK, events)
}

func (s *Server) serveAdminCostByTag(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		adminFail(w, http.StatusBadRequest, "key: a tag key is required")
		return
	}
	writeJSON(w, http.StatusOK, s.CostByTag(key))
}

func (s *Server) serveAdminPolicy(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, s.Policy())
	case http.MethodPut, http.MethodPost:
		var p authz.Policy
		if !decodeAdminBody(w, r, &p, "policy") {
			return
		}
		if err := s.SetPolicy(p); err != nil {
			adminFail(w, http.StatusInternalServerError, "saving policy: %v", err)
			return
		}
		writeJSON(w, http.StatusOK, s.Policy())
	default:
		adminFail(w, http.StatusMethodNotAllowed, "use GET or PUT")
	}
}

func (s *Server) serveAdminFaults(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, s.Faults())
	case http.MethodPost, http.MethodPut:
		var f Fault
		if !decodeAdminBody(w, r, &f, "fault") {
			return
		}
		out, err := s.SetFault(f)
		if err != nil {
			adminFail(w, http.StatusBadRequest, "%v", err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	case http.MethodDelete:
		if err := s.ClearFaults(r.URL.Query().Get("id")); err != nil {
			adminFail(w, http.StatusInternalServerError, "clearing faults: %v", err)
			return
		}
		writeJSON(w, http.StatusOK, s.Faults())
	default:
		adminFail(w, http.StatusMethodNotAllowed, "use GET, POST or DELETE")
	}
}

func (s *Server) serveAdminReset(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		adminFail(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	if err := s.Reset(); err != nil {
		adminFail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "reset"})
}

func (s *Server) serveAdminTime(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		adminFail(w, http.StatusMethodNotAllowed, "use GET")
		return
	}
	if known := r.URL.Query().Get("waitChangeFrom"); known != "" {
		// A long poll: Karpenter's lab clock follows the account's this way.
		n, err := strconv.ParseInt(known, 10, 64)
		if err != nil {
			adminFail(w, http.StatusBadRequest, "waitChangeFrom %q: want the offset in nanoseconds", known)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeWaitLimit)
		defer cancel()
		s.clock.waitChange(ctx, time.Duration(n))
	}
	writeJSON(w, http.StatusOK, s.LabTime())
}

func (s *Server) serveAdminDecode(w http.ResponseWriter, r *http.Request) {
	msg := r.URL.Query().Get("message")
	reason, ok := s.DecodeAuthorizationMessage(msg)
	if !ok {
		adminFail(w, http.StatusNotFound, "no denial with that message in the audit trail")
		return
	}
	writeJSON(w, http.StatusOK, DecodedMessage{Message: msg, Reason: reason})
}

// serveAdminBudgets answers /_karplab/budgets: the account's AWS Budgets as the lab sets
// and grades them.
func (s *Server) serveAdminBudgets(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		list, err := s.svc.budgets.List()
		if err != nil {
			adminFail(w, http.StatusInternalServerError, "%v", err)
			return
		}
		writeJSON(w, http.StatusOK, list)
	case http.MethodPut, http.MethodPost:
		var sp budgets.Spec
		if !decodeAdminBody(w, r, &sp, "budget") {
			return
		}
		b, err := s.svc.budgets.Put(sp)
		if ae := new(account.Error); errors.As(err, &ae) {
			adminFail(w, ae.HTTPStatus, "%s: %s", ae.Code, ae.Message)
			return
		} else if err != nil {
			adminFail(w, http.StatusInternalServerError, "%v", err)
			return
		}
		writeJSON(w, http.StatusOK, b)
	case http.MethodDelete:
		name := r.URL.Query().Get("name")
		err := s.svc.budgets.Delete(name)
		switch {
		case errors.Is(err, budgets.ErrNotFound):
			adminFail(w, http.StatusNotFound, "%v", err)
		case err != nil:
			adminFail(w, http.StatusInternalServerError, "%v", err)
		default:
			writeJSON(w, http.StatusOK, map[string]string{"status": "deleted"})
		}
	default:
		adminFail(w, http.StatusMethodNotAllowed, "use GET, PUT or DELETE")
	}
}

// serveAdminSkip answers POST /_karplab/time/skip.
func (s *Server) serveAdminSkip(w http.ResponseWriter, r *http.Request) {
	var req TimeSkipRequest
	if !decodeAdminPost(w, r, &req) {
		return
	}
	d, err := time.ParseDuration(req.Duration)
	if err != nil {
		adminFail(w, http.StatusBadRequest, "duration %q: want a Go duration (e.g. 5m, 2h, 720h)", req.Duration)
		return
	}
	if err := CheckSkip(d); err != nil {
		adminFail(w, http.StatusBadRequest, "%v", err)
		return
	}
	sk, err := s.SkipTime(d)
	if err != nil {
		adminFail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, sk)
}

// InterruptRequest is the body of POST /_karplab/interrupt.
type InterruptRequest struct {
	InstanceIDs []string `json:"instanceIds"`
	// WarningSeconds is how long after the interruption warning EC2 reclaims the
	// instances; absent: AWS's two minutes, 0: at once.
	WarningSeconds *int `json:"warningSeconds,omitempty"`
}

// ConsoleRequest is the body of POST /_karplab/console: lines the instance's OS printed
// (the simulated kubelet's nodeadm and cloud-init output), for GetConsoleOutput.
type ConsoleRequest struct {
	InstanceID string `json:"instanceId"`
	Text       string `json:"text"`
}

// EventRequest is the body of POST /_karplab/events: an event EC2 raises on instances.
type EventRequest struct {
	Kind        EventKind `json:"kind"`
	InstanceIDs []string  `json:"instanceIds"`
}

// ReleaseRequest is the body of POST /_karplab/releases; an empty Release picks the next date.
type ReleaseRequest struct {
	Release string `json:"release,omitempty"`
}

// decodeAdminPost decodes a POST body into v, answering the error itself when it fails.
func decodeAdminPost(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.Method != http.MethodPost {
		adminFail(w, http.StatusMethodNotAllowed, "use POST")
		return false
	}
	return decodeAdminBody(w, r, v, "request")
}

// decodeAdminBody decodes a request's JSON body (at most 1 MiB, no unknown fields) into v,
// or answers 400 naming what it held.
func decodeAdminBody(w http.ResponseWriter, r *http.Request, v any, what string) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		adminFail(w, http.StatusBadRequest, "decoding %s: %v", what, err)
		return false
	}
	return true
}

func parseAdminTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, v)
}

// Reset wipes instances, volumes, ENIs, launch templates, fleets, the ledger, the audit
// trail, the policy and the faults, and puts the lab clock back on the base clock. The
// default VPC, subnets, security groups and images stay, with their IDs.
func (s *Server) Reset() error {
	s.skipMu.Lock() // not while a skip walks the budgets through lab time
	defer s.skipMu.Unlock()
	if err := s.ec2.Reset(); err != nil {
		return fmt.Errorf("persisting reset: %w", err)
	}
	s.auditMu.Lock()
	var ops []statefile.Op
	for _, e := range s.audit {
		ops = append(ops, statefile.Op{Bucket: bucketAudit, Key: beUint64(e.Seq)})
	}
	s.audit, s.auditReads = nil, 0
	s.persistMu.RLock()
	cleared := s.persist.Enqueue(ops)
	s.persistMu.RUnlock()
	s.auditMu.Unlock()
	// The account is fresh: nothing dated in lab time survives, so its clock goes back to
	// the base clock (wall time in a lab).
	s.policyMu.Lock()
	s.policy = s.defaultPolicy.Clone()
	s.clock.setOffset(0)
	saved := s.saveMeta()
	s.policyMu.Unlock()
	if err := errors.Join(<-cleared, <-saved); err != nil {
		return fmt.Errorf("persisting reset: %w", err)
	}
	return s.resetServices()
}
