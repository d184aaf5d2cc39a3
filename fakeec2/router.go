package fakeec2

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/statefile"
	"github.com/karplab/karplab/fakeec2/trail"
)

// ServeHTTP answers every AWS service of the lab's account on one endpoint, routed as
// LocalStack's service router does: by the SigV4 credential scope's service, then by
// X-Amz-Target, then by path. EC2 is the default; /_karplab/ is the admin API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, adminPrefix) {
		s.serveAdmin(w, r)
		return
	}
	name := serviceOf(r)
	if name == "ec2" {
		s.ec2.ServeHTTP(w, r)
		return
	}
	svc := s.services[name]
	if svc == nil {
		e := account.BadRequest("UnknownServiceException",
			"This endpoint serves ec2, %s; it has no %q service.", strings.Join(s.serviceNames(), ", "), name)
		account.Write(w, account.JSONError(account.JSON11, s.ids.NewID(""), e))
		return
	}
	s.serveService(svc, w, r)
}

// targetServices maps an X-Amz-Target prefix to its service's signing name.
var targetServices = map[string]string{
	"AmazonSSM":           "ssm",
	"AmazonSQS":           "sqs",
	"AWSPriceListService": "pricing",
	// AWS Budgets' endpoint is global (budgets.amazonaws.com); the aws CLI with
	// --endpoint-url posts here like any other.
	"AWSBudgetServiceGateway": "budgets",
}

// queryVersions maps a Query-protocol Version to its service, for unsigned requests.
var queryVersions = map[string]string{
	"2016-11-15": "ec2",
	"2010-05-08": "iam",
	"2011-06-15": "sts",
	"2012-11-05": "sqs",
}

// serviceOf names the service a request is for.
func serviceOf(r *http.Request) string {
	if svc := account.ServiceFromAuth(r.Header.Get("Authorization")); svc != "" {
		return svc
	}
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		prefix, _, _ := strings.Cut(t, ".")
		if svc, ok := targetServices[prefix]; ok {
			return svc
		}
	}
	if r.URL.Path == "/clusters" || strings.HasPrefix(r.URL.Path, "/clusters/") {
		return "eks"
	}
	if svc, ok := queryVersions[r.URL.Query().Get("Version")]; ok {
		return svc
	}
	return "ec2"
}

func (s *Server) serviceNames() []string {
	return account.SortedKeys(s.services)
}

// registerService puts a service behind the router.
func (s *Server) registerService(svc account.Service) {
	if s.services == nil {
		s.services = map[string]account.Service{}
	}
	s.services[svc.Name()] = svc
}

// serveService answers a request for one of the account's other services and records
// it in the audit trail beside EC2's calls. A call that changed something answers once
// its audit record is durable, as EC2 mutations do.
func (s *Server) serveService(svc account.Service, w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c, err := account.NewCall(s.host, svc.Name(), r)
	if err != nil {
		status := http.StatusBadRequest
		if mbe := new(http.MaxBytesError); errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
		http.Error(w, "reading the request body: "+err.Error(), status)
		return
	}
	resp := svc.Serve(c)
	ev := &trail.AuditEvent{
		Service: c.Service, Time: c.Now, Action: c.Action, Caller: c.Caller, RequestID: c.RequestID,
		SourceIP: r.RemoteAddr, UserAgent: r.UserAgent(), Parameters: c.Params, ReadOnly: c.ReadOnly,
		Created: c.Created, Terminated: c.Deleted, DenialReason: c.DenialReason,
	}
	if ev.Action == "" {
		ev.Action = "(undecoded)"
	}
	code := ""
	if resp.Err != nil {
		code = resp.Err.Code
		ev.ErrorCode, ev.ErrorMessage = resp.Err.Code, resp.Err.Message
	}
	wait := s.recordAudit(ev)
	if !c.ReadOnly {
		if err := <-wait; err != nil {
			resp = &account.Response{Status: http.StatusInternalServerError, Body: []byte("persisting the audit trail: " + err.Error())}
		}
	}
	s.log.Debug("aws request", "service", c.Service, "action", c.Action, "requestId", c.RequestID, "caller", c.Caller,
		"status", resp.Status, "code", code, "duration", time.Since(start).Round(time.Microsecond))
	if s.log.Enabled(r.Context(), account.LevelBodies) {
		s.log.Log(r.Context(), account.LevelBodies, "aws body", "requestId", c.RequestID, "params", c.Params, "response", string(resp.Body))
	}
	account.Write(w, resp)
}

// accountHost is the Host the account's services share: the server's clock, IDs, policy
// and state file.
type accountHost struct{ s *Server }

func (h accountHost) Region() string    { return h.s.region }
func (h accountHost) AccountID() string { return h.s.account }
func (h accountHost) Now() time.Time    { return h.s.clock.Now() }
func (h accountHost) Store() account.Store {
	return accountStore(h)
}

// NewID mints IAM-style IDs ("AIPA" and 17 upper-case characters) from the server's
// generator, which spells EC2's ("i-" and 17 hex digits).
func (h accountHost) NewID(prefix string) string {
	if prefix == "" {
		return h.s.ids.NewID("")
	}
	lower := strings.ToLower(prefix)
	return prefix + strings.ToUpper(strings.TrimPrefix(h.s.ids.NewID(lower), lower+"-"))
}

func (h accountHost) Authorize(caller, action, resource string) string {
	h.s.policyMu.RLock()
	defer h.s.policyMu.RUnlock()
	return h.s.policy.Authorize(caller, action, resource)
}

// accountStore writes the services' records into the server's state file.
type accountStore struct{ s *Server }

func (a accountStore) Enqueue(ops ...account.Op) <-chan error {
	out := make([]statefile.Op, 0, len(ops))
	for _, o := range ops {
		if o.Value == nil {
			out = append(out, statefile.Op{Bucket: o.Bucket, Key: o.Key})
			continue
		}
		b, err := json.Marshal(o.Value)
		if err != nil {
			c := make(chan error, 1)
			c <- err
			return c
		}
		out = append(out, statefile.Op{Bucket: o.Bucket, Key: o.Key, Val: b})
	}
	a.s.persistMu.RLock()
	defer a.s.persistMu.RUnlock()
	return a.s.persist.Enqueue(out)
}

func (a accountStore) Load(bucket string, fn func(key string, val []byte) error) error {
	a.s.persistMu.RLock()
	defer a.s.persistMu.RUnlock()
	return a.s.persist.Load(bucket, func(k, v []byte) error { return fn(string(k), v) })
}
