package fakeec2

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// AdminClient is a typed client of the admin API (/_karplab/ on the emulator's endpoint).
// The lab daemon and the graders read audit, billing, policy and faults through it.
type AdminClient struct {
	endpoint string
	http     *http.Client
}

// NewAdminClient returns a client for the emulator at endpoint ("http://127.0.0.1:4566").
func NewAdminClient(endpoint string) *AdminClient {
	return &AdminClient{endpoint: strings.TrimSuffix(endpoint, "/"), http: &http.Client{Timeout: 30 * time.Second}}
}

func (c *AdminClient) do(ctx context.Context, method, route string, query url.Values, in, out any) error {
	u := c.endpoint + adminPrefix + route
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding %s request: %w", route, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("building %s request: %w", route, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("calling fakeec2 admin %s %s: %w", method, route, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading fakeec2 admin %s: %w", route, err)
	}
	if resp.StatusCode/100 != 2 {
		var ae adminError
		if json.Unmarshal(data, &ae) == nil && ae.Error != "" {
			return fmt.Errorf("fakeec2 admin %s %s: %s (HTTP %d)", method, route, ae.Error, resp.StatusCode)
		}
		return fmt.Errorf("fakeec2 admin %s %s: HTTP %d: %s", method, route, resp.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding fakeec2 admin %s: %w", route, err)
		}
	}
	return nil
}

// Health reports whether the emulator is up.
func (c *AdminClient) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.do(ctx, http.MethodGet, "health", nil, nil, &h)
}

// Audit returns the audit events matching q, oldest first.
func (c *AdminClient) Audit(ctx context.Context, q trail.AuditQuery) ([]trail.AuditEvent, error) {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("service", q.Service)
	set("action", q.Action)
	set("caller", q.Caller)
	set("resourceId", q.ResourceID)
	set("errorCode", q.ErrorCode)
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	if q.MutatingOnly {
		v.Set("mutating", "true")
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out []trail.AuditEvent
	return out, c.do(ctx, http.MethodGet, "audit", v, nil, &out)
}

// Billing returns the ledger with costs accrued until now.
func (c *AdminClient) Billing(ctx context.Context) (billing.Billing, error) {
	var b billing.Billing
	return b, c.do(ctx, http.MethodGet, "billing", nil, nil, &b)
}

// CostByTag groups accrued cost by the value of tag key.
func (c *AdminClient) CostByTag(ctx context.Context, key string) (billing.CostReport, error) {
	var r billing.CostReport
	return r, c.do(ctx, http.MethodGet, "billing/by-tag", url.Values{"key": {key}}, nil, &r)
}

// Policy returns the policy in force.
func (c *AdminClient) Policy(ctx context.Context) (authz.Policy, error) {
	var p authz.Policy
	return p, c.do(ctx, http.MethodGet, "policy", nil, nil, &p)
}

// SetPolicy replaces the policy (an empty Policy allows everything).
func (c *AdminClient) SetPolicy(ctx context.Context, p authz.Policy) error {
	return c.do(ctx, http.MethodPut, "policy", nil, p, nil)
}

// Faults lists the active faults.
func (c *AdminClient) Faults(ctx context.Context) ([]Fault, error) {
	var f []Fault
	return f, c.do(ctx, http.MethodGet, "faults", nil, nil, &f)
}

// SetFault adds a fault and returns it with its ID.
func (c *AdminClient) SetFault(ctx context.Context, f Fault) (Fault, error) {
	var out Fault
	return out, c.do(ctx, http.MethodPost, "faults", nil, f, &out)
}

// ClearFaults removes the fault with id, or every fault when id is "".
func (c *AdminClient) ClearFaults(ctx context.Context, id string) error {
	v := url.Values{}
	if id != "" {
		v.Set("id", id)
	}
	return c.do(ctx, http.MethodDelete, "faults", v, nil, nil)
}

// Reset wipes the emulator's resources, ledger, audit trail, policy and faults.
func (c *AdminClient) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "reset", nil, nil, nil)
}

// DecodeAuthorizationMessage returns the policy reason behind an UnauthorizedOperation's
// encoded message.
func (c *AdminClient) DecodeAuthorizationMessage(ctx context.Context, message string) (string, error) {
	var d DecodedMessage
	if err := c.do(ctx, http.MethodGet, "decode", url.Values{"message": {message}}, nil, &d); err != nil {
		return "", err
	}
	return d.Reason, nil
}

// InterruptSpot warns and, warning later, reclaims spot instances as EC2 does (see
// Server.InterruptSpot); it returns the BidEvictedEvent audit events of reclaims done at
// once (warning 0).
func (c *AdminClient) InterruptSpot(ctx context.Context, warning time.Duration, instanceIDs ...string) ([]trail.AuditEvent, error) {
	var out []trail.AuditEvent
	secs := int(warning / time.Second)
	return out, c.do(ctx, http.MethodPost, "interrupt", nil, InterruptRequest{InstanceIDs: instanceIDs, WarningSeconds: &secs}, &out)
}

// AppendConsoleOutput adds lines to what GetConsoleOutput shows for an instance (see
// Server.AppendConsoleOutput).
func (c *AdminClient) AppendConsoleOutput(ctx context.Context, instanceID, text string) error {
	return c.do(ctx, http.MethodPost, "console", nil, ConsoleRequest{InstanceID: instanceID, Text: text}, nil)
}

// RaiseEvent makes EC2 raise kind's event for the instances (see Server.RaiseEvent).
func (c *AdminClient) RaiseEvent(ctx context.Context, kind EventKind, instanceIDs ...string) ([]trail.AuditEvent, error) {
	var out []trail.AuditEvent
	return out, c.do(ctx, http.MethodPost, "events", nil, EventRequest{Kind: kind, InstanceIDs: instanceIDs}, &out)
}

// PublishRelease publishes a new EKS-optimized AL2023 AMI release (see Server.PublishRelease);
// release "" picks the next date.
func (c *AdminClient) PublishRelease(ctx context.Context, release string) ([]PublishedImage, error) {
	var out []PublishedImage
	return out, c.do(ctx, http.MethodPost, "releases", nil, ReleaseRequest{Release: release}, &out)
}

// Import brings a captured account's network, images and running instances in (see
// Server.Import); nothing is imported when any of it cannot be.
func (c *AdminClient) Import(ctx context.Context, imp Import) error {
	return c.do(ctx, http.MethodPost, "import", nil, imp, nil)
}

// Budgets returns the account's AWS Budgets, evaluated now: each budget's limit, spend in
// its current period (actual, forecast, burn rate), its notifications' states and every
// alert it fired, with the emulator time and the spend at that moment.
func (c *AdminClient) Budgets(ctx context.Context) ([]budgets.Budget, error) {
	var out []budgets.Budget
	return out, c.do(ctx, http.MethodGet, "budgets", nil, nil, &out)
}

// SetBudget creates the budget or updates its terms and notifications (see
// budgets.Service.Put) and returns it evaluated.
func (c *AdminClient) SetBudget(ctx context.Context, sp budgets.Spec) (budgets.Budget, error) {
	var out budgets.Budget
	return out, c.do(ctx, http.MethodPut, "budgets", nil, sp, &out)
}

// DeleteBudget deletes a budget with its notifications and alert history.
func (c *AdminClient) DeleteBudget(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "budgets", url.Values{"name": {name}}, nil, nil)
}

// Time returns the account's clock: lab time, the base (wall) clock and the lead.
func (c *AdminClient) Time(ctx context.Context) (LabTime, error) {
	var t LabTime
	return t, c.do(ctx, http.MethodGet, "time", nil, nil, &t)
}

// WaitTimeChange returns the account's clock once its lead differs from known, or after a
// while (the server's limit, 20 s) with the lead unchanged: a long poll to follow lab time.
func (c *AdminClient) WaitTimeChange(ctx context.Context, known time.Duration) (LabTime, error) {
	var t LabTime
	q := url.Values{"waitChangeFrom": {strconv.FormatInt(int64(known), 10)}}
	return t, c.do(ctx, http.MethodGet, "time", q, nil, &t)
}

// SkipTime moves the account's clock d forward (see Server.SkipTime) and returns what
// accrued and which budget alerts fired in the skipped span.
func (c *AdminClient) SkipTime(ctx context.Context, d time.Duration) (TimeSkip, error) {
	var out TimeSkip
	return out, c.do(ctx, http.MethodPost, "time/skip", nil, TimeSkipRequest{Duration: d.String()}, &out)
}
