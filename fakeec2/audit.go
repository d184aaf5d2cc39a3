package fakeec2

import (
	"encoding/json"
	"time"
)

// AuditEvent is one EC2 call as the audit trail (CloudTrail-like) records it.
type AuditEvent struct {
	Seq        uint64            `json:"seq"`
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

// recordAudit appends the event and queues it for disk.
func (s *Server) recordAudit(e *AuditEvent) <-chan error {
	b := []byte(nil)
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	s.auditSeq++
	e.Seq = s.auditSeq
	s.audit = append(s.audit, e)
	if s.persist == nil {
		return closedErrChan
	}
	b, _ = json.Marshal(e) // plain data: cannot fail
	return s.persist.enqueue([]op{{bucket: bucketAudit, key: beUint64(e.Seq), val: b}})
}

// AuditQuery selects audit events; zero fields match everything.
type AuditQuery struct {
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

func (q AuditQuery) match(e *AuditEvent) bool {
	if q.Action != "" && e.Action != q.Action ||
		q.Caller != "" && e.Caller != q.Caller ||
		q.ErrorCode != "" && e.ErrorCode != q.ErrorCode ||
		!q.Since.IsZero() && e.Time.Before(q.Since) ||
		!q.Until.IsZero() && e.Time.After(q.Until) ||
		q.MutatingOnly && e.ReadOnly {
		return false
	}
	if q.ResourceID != "" {
		for _, id := range e.Created {
			if id == q.ResourceID {
				return true
			}
		}
		for _, id := range e.Terminated {
			if id == q.ResourceID {
				return true
			}
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

// Audit returns the events matching q, oldest first.
func (s *Server) Audit(q AuditQuery) []AuditEvent {
	s.auditMu.RLock()
	defer s.auditMu.RUnlock()
	var out []AuditEvent
	for _, e := range s.audit {
		if q.match(e) {
			out = append(out, *e)
		}
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[len(out)-q.Limit:]
	}
	return out
}
