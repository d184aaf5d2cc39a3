package fakeec2

import (
	"encoding/json"

	"github.com/karplab/karplab/fakeec2/statefile"
	"github.com/karplab/karplab/fakeec2/trail"
)

// maxReadOnlyAudit bounds the Describe* events kept: a daemon polled by Karpenter would
// otherwise grow without end. Mutating calls (and any call that failed) are always kept.
const maxReadOnlyAudit = 50000

// recordAudit appends the event and queues it for disk.
func (s *Server) recordAudit(e *trail.AuditEvent) <-chan error {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	s.auditSeq++
	e.Seq = s.auditSeq
	s.audit = append(s.audit, e)
	var ops []statefile.Op
	if e.Disposable() {
		s.auditReads++
		if s.auditReads > maxReadOnlyAudit+maxReadOnlyAudit/10 {
			ops = s.dropOldReadsLocked(s.auditReads - maxReadOnlyAudit)
		}
	}
	if s.persist == nil {
		return statefile.Done()
	}
	b, _ := json.Marshal(e) // plain data: cannot fail
	return s.persist.Enqueue(append(ops, statefile.Op{Bucket: bucketAudit, Key: beUint64(e.Seq), Val: b}))
}

// dropOldReadsLocked forgets the n oldest disposable events; callers hold auditMu.
func (s *Server) dropOldReadsLocked(n int) []statefile.Op {
	var ops []statefile.Op
	kept := s.audit[:0]
	for _, e := range s.audit {
		if n > 0 && e.Disposable() {
			n--
			s.auditReads--
			if s.persist != nil {
				ops = append(ops, statefile.Op{Bucket: bucketAudit, Key: beUint64(e.Seq)})
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

// Audit returns the events matching q, oldest first.
func (s *Server) Audit(q trail.AuditQuery) []trail.AuditEvent {
	s.auditMu.RLock()
	defer s.auditMu.RUnlock()
	return trail.Select(s.audit, q)
}
