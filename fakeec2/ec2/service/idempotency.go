package service

import (
	"bytes"
	"encoding/json"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/statefile"
)

// maxIdempotencyEntries bounds the remembered ClientTokens (oldest forgotten first).
const maxIdempotencyEntries = 20000

const bucketIdempotency = "idempotency"

type idempotentRecord struct {
	Seq       uint64 `json:"seq"`
	Key       string `json:"key"`
	RequestID string `json:"requestId"`
	Body      []byte `json:"body"`
}

// idempotentAnswer returns the stored answer for key, re-stamped with requestID.
func (s *Service) idempotentAnswer(key, requestID string) ([]byte, bool) {
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	rec, ok := s.idem[key]
	if !ok {
		return nil, false
	}
	return bytes.Replace(rec.Body, []byte(rec.RequestID), []byte(requestID), 1), true
}

// rememberIdempotent stores a successful mutating answer under its ClientToken key. It is
// queued for disk before the response is released (ServeHTTP waits on the audit record,
// queued after it), so a retry after a crash still finds it.
func (s *Service) rememberIdempotent(key, requestID string, body []byte) {
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	s.idemSeq++
	rec := &idempotentRecord{Seq: s.idemSeq, Key: key, RequestID: requestID, Body: body}
	s.idem[key] = rec
	s.idemOrder = append(s.idemOrder, key)
	ops := []statefile.Op{}
	if s.persist != nil {
		b, _ := json.Marshal(rec) // plain data: cannot fail
		ops = append(ops, statefile.Op{Bucket: bucketIdempotency, Key: key, Val: b})
	}
	for len(s.idemOrder) > maxIdempotencyEntries {
		old := s.idemOrder[0]
		s.idemOrder = s.idemOrder[1:]
		delete(s.idem, old)
		if s.persist != nil {
			ops = append(ops, statefile.Op{Bucket: bucketIdempotency, Key: old})
		}
	}
	s.persist.Enqueue(ops)
}

func (s *Service) loadIdempotency() error {
	var recs []*idempotentRecord
	if err := statefile.LoadJSON(s.persist, bucketIdempotency, func(r *idempotentRecord) { recs = append(recs, r) }); err != nil {
		return err
	}
	ec2.BySeq(recs, func(r *idempotentRecord) uint64 { return r.Seq })
	for _, r := range recs {
		s.idem[r.Key] = r
		s.idemOrder = append(s.idemOrder, r.Key)
		if r.Seq > s.idemSeq {
			s.idemSeq = r.Seq
		}
	}
	return nil
}

// resetIdempotency forgets every token; callers hold s.mu (for the pending ops).
func (s *Service) resetIdempotency() {
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	for _, k := range s.idemOrder {
		s.remove(bucketIdempotency, k)
	}
	s.idem = map[string]*idempotentRecord{}
	s.idemOrder = nil
}
