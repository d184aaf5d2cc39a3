package trail

import (
	"slices"
	"time"
)

// AuditEvent is one EC2 call as the audit trail (CloudTrail-like) records it.
type AuditEvent struct {
	Seq uint64 `json:"seq"`
	// Service is the SigV4 signing name of the service called ("ec2", "iam", "ssm",
	// "sqs", "eks", "pricing", "sts"); empty in trails written before it was recorded: EC2.
	Service    string            `json:"service,omitempty"`
	Time       time.Time         `json:"time"`
	Action     string            `json:"action"`
	Caller     string            `json:"caller"` // the SigV4 access key ID
	RequestID  string            `json:"requestId"`
	SourceIP   string            `json:"sourceIp,omitempty"`
	UserAgent  string            `json:"userAgent,omitempty"`
	Parameters map[string]string `json:"parameters,omitempty"`
	ReadOnly   bool              `json:"readOnly"`
	DryRun     bool              `json:"dryRun,omitempty"`
	// Replay marks a call that repeated an earlier ClientToken: it was answered with the
	// earlier result and changed nothing.
	Replay bool `json:"replay,omitempty"`
	// Result: the resources the call created or terminated, or its error.
	Created      []string `json:"created,omitempty"`
	Terminated   []string `json:"terminated,omitempty"`
	ErrorCode    string   `json:"errorCode,omitempty"`
	ErrorMessage string   `json:"errorMessage,omitempty"`
	// PartialErrors are CreateFleet's per-override errors (code and the override).
	PartialErrors []string `json:"partialErrors,omitempty"`
	// DenialReason is the decoded policy reason behind an UnauthorizedOperation, and
	// EncodedMessage the opaque text the caller saw.
	DenialReason   string `json:"denialReason,omitempty"`
	EncodedMessage string `json:"encodedMessage,omitempty"`
	// Faults names the injected faults that shaped this call (throttle, latency, leak, ...).
	Faults []string `json:"faults,omitempty"`
}

// ServiceName is the event's service, "ec2" for events recorded before services were.
func (e *AuditEvent) ServiceName() string {
	if e.Service == "" {
		return "ec2"
	}
	return e.Service
}

// Disposable events are successful read-only calls: the ones the trail's bound may drop.
func (e *AuditEvent) Disposable() bool { return e.ReadOnly && e.ErrorCode == "" }

// AuditQuery selects audit events; zero fields match everything.
type AuditQuery struct {
	Service    string    `json:"service,omitempty"` // "ec2" also matches events without a service
	Action     string    `json:"action,omitempty"`
	Caller     string    `json:"caller,omitempty"`
	ResourceID string    `json:"resourceId,omitempty"` // created, terminated or named in a parameter
	ErrorCode  string    `json:"errorCode,omitempty"`
	Since      time.Time `json:"since,omitempty"`
	Until      time.Time `json:"until,omitempty"`
	// MutatingOnly leaves out Describe* calls.
	MutatingOnly bool `json:"mutatingOnly,omitempty"`
	// Limit keeps the last Limit matches (0: all).
	Limit int `json:"limit,omitempty"`
}

// Match reports whether q selects e (Limit aside, which applies to a whole answer).
func (q AuditQuery) Match(e *AuditEvent) bool {
	if q.Service != "" && e.ServiceName() != q.Service ||
		q.Action != "" && e.Action != q.Action ||
		q.Caller != "" && e.Caller != q.Caller ||
		q.ErrorCode != "" && e.ErrorCode != q.ErrorCode ||
		!q.Since.IsZero() && e.Time.Before(q.Since) ||
		!q.Until.IsZero() && e.Time.After(q.Until) ||
		q.MutatingOnly && e.ReadOnly {
		return false
	}
	if q.ResourceID != "" {
		if slices.Contains(e.Created, q.ResourceID) || slices.Contains(e.Terminated, q.ResourceID) {
			return true
		}
		for _, v := range e.Parameters {
			if v == q.ResourceID {
				return true
			}
		}
		return false
	}
	return true
}

// Select returns copies of the events q matches, in the events' order, cut to q.Limit.
func Select(events []*AuditEvent, q AuditQuery) []AuditEvent {
	var out []AuditEvent
	for _, e := range events {
		if q.Match(e) {
			out = append(out, *e)
		}
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[len(out)-q.Limit:]
	}
	return out
}

// DenialReason returns the decoded reason behind an encoded UnauthorizedOperation
// message, from the newest event that carries it.
func DenialReason(events []*AuditEvent, encoded string) (string, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if e := events[i]; e.EncodedMessage == encoded {
			return e.DenialReason, true
		}
	}
	return "", false
}
