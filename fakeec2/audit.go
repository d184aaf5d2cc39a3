package fakeec2

import (
	"encoding/json"
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

// maxReadOnlyAudit bounds the Describe* events kept: a daemon polled by Karpenter would
// otherwise grow without end. Mutating calls (and any call that failed) are always kept.
const maxReadOnlyAudit = 50000

// recordAudit appends the event and queues it for disk.
func (s *Server) recordAudit(e *AuditEvent) <-chan error {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	s.auditSeq++
	e.Seq = s.auditSeq
	s.audit = append(s.audit, e)
	var ops []op
	if disposable(e) {
		s.auditReads++
		if s.auditReads > maxReadOnlyAudit+maxReadOnlyAudit/10 {
			ops = s.dropOldReadsLocked(s.auditReads - maxReadOnlyAudit)
		}
	}
	if s.persist == nil {
		return closedErrChan
	}
	b, _ := json.Marshal(e) // plain data: cannot fail
	return s.persist.enqueue(append(ops, op{bucket: bucketAudit, key: beUint64(e.Seq), val: b}))
}

// disposable events are successful read-only calls: the ones the bound may drop.
func disposable(e *AuditEvent) bool { return e.ReadOnly && e.ErrorCode == "" }

// dropOldReadsLocked forgets the n oldest disposable events; callers hold auditMu.
func (s *Server) dropOldReadsLocked(n int) []op {
	var ops []op
	kept := s.audit[:0]
	for _, e := range s.audit {
		if n > 0 && disposable(e) {
			n--
			s.auditReads--
			if s.persist != nil {
				ops = append(ops, op{bucket: bucketAudit, key: beUint64(e.Seq)})
			}
			continue
		}
		kept = append(kept, e)
	}
	for i := len(kept); i < len(s.audit); i++ {
		s.audit[i] = nil
	}
	s.audit = kept
	return ops
}

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

func (q AuditQuery) match(e *AuditEvent) bool {
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
