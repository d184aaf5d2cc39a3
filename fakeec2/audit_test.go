package fakeec2

import (
	"testing"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
	"github.com/karplab/karplab/fakeec2/trail"
)

func TestAuditBoundKeepsMutations(t *testing.T) {
	s, err := New(Options{IDs: account.NewSequentialIDs()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	total := maxReadOnlyAudit + maxReadOnlyAudit/10 + 1
	for i := 0; i < total; i++ {
		e := &trail.AuditEvent{Action: "DescribeInstances", ReadOnly: true}
		switch {
		case i%1000 == 0:
			e = &trail.AuditEvent{Action: "RunInstances", Created: []string{"i-1"}}
		case i%1000 == 1:
			e.ErrorCode = wire.CodeRequestLimitExceeded
		}
		s.recordAudit(e)
	}
	var reads, kept, failed int
	for _, e := range s.Audit(trail.AuditQuery{}) {
		switch {
		case e.Action == "RunInstances":
			kept++
		case e.ErrorCode != "":
			failed++
		default:
			reads++
		}
	}
	wantMut := (total + 999) / 1000
	if kept != wantMut || failed != wantMut-1 && failed != wantMut {
		t.Errorf("kept %d mutations and %d failures, want every one (%d)", kept, failed, wantMut)
	}
	if reads > maxReadOnlyAudit+maxReadOnlyAudit/10 || reads < maxReadOnlyAudit-1 {
		t.Errorf("%d read events kept, want about %d", reads, maxReadOnlyAudit)
	}
	if last := s.Audit(trail.AuditQuery{Limit: 1}); last[0].Seq != uint64(total) {
		t.Errorf("newest event has seq %d, want %d", last[0].Seq, total)
	}
}
