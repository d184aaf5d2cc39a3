package trail

import (
	"testing"
	"time"
)

func TestAuditQueryMatch(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	run := &AuditEvent{Time: t0, Action: "RunInstances", Caller: "karpenter", Created: []string{"i-1"}}
	term := &AuditEvent{Service: "ec2", Time: t0.Add(time.Minute), Action: "TerminateInstances", Caller: "learner",
		Parameters: map[string]string{"InstanceId.1": "i-1"}, Terminated: []string{"i-1"}}
	read := &AuditEvent{Service: "ssm", Time: t0.Add(2 * time.Minute), Action: "GetParameter", ReadOnly: true}
	tests := []struct {
		name string
		q    AuditQuery
		e    *AuditEvent
		want bool
	}{
		{name: "zero query matches all", e: read, want: true},
		{name: "ec2 matches an event without a service", q: AuditQuery{Service: "ec2"}, e: run, want: true},
		{name: "ec2 leaves other services", q: AuditQuery{Service: "ec2"}, e: read},
		{name: "resource created", q: AuditQuery{ResourceID: "i-1"}, e: run, want: true},
		{name: "resource named in a parameter", q: AuditQuery{ResourceID: "i-1", Caller: "learner"}, e: term, want: true},
		{name: "resource absent", q: AuditQuery{ResourceID: "i-2"}, e: term},
		{name: "since is inclusive", q: AuditQuery{Since: t0.Add(time.Minute)}, e: term, want: true},
		{name: "before since", q: AuditQuery{Since: t0.Add(time.Second)}, e: run},
		{name: "after until", q: AuditQuery{Until: t0.Add(time.Minute - time.Nanosecond)}, e: term},
		{name: "mutating only", q: AuditQuery{MutatingOnly: true}, e: read},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.q.Match(tt.e); got != tt.want {
				t.Errorf("%+v.Match(%s) = %v, want %v", tt.q, tt.e.Action, got, tt.want)
			}
		})
	}
}

func TestSelectKeepsTheNewest(t *testing.T) {
	events := []*AuditEvent{{Seq: 1, Action: "RunInstances"}, {Seq: 2, Action: "DescribeInstances", ReadOnly: true},
		{Seq: 3, Action: "RunInstances"}, {Seq: 4, Action: "RunInstances"}}
	got := Select(events, AuditQuery{Action: "RunInstances", Limit: 2})
	if len(got) != 2 || got[0].Seq != 3 || got[1].Seq != 4 {
		t.Errorf("Select with Limit 2 = %+v, want seqs 3 and 4", got)
	}
	got[0].Action = "changed"
	if events[2].Action != "RunInstances" {
		t.Error("Select's answer shares its events with the trail")
	}
}

func TestDenialReasonAndDisposable(t *testing.T) {
	events := []*AuditEvent{{EncodedMessage: "m", DenialReason: "old"}, {ReadOnly: true},
		{ReadOnly: true, ErrorCode: "RequestLimitExceeded"}, {EncodedMessage: "m", DenialReason: "new"}}
	if r, ok := DenialReason(events, "m"); !ok || r != "new" {
		t.Errorf("DenialReason = %q, %v, want the newest (new)", r, ok)
	}
	if _, ok := DenialReason(events, "other"); ok {
		t.Error("DenialReason found a message never sent")
	}
	for i, want := range []bool{false, true, false, false} {
		if got := events[i].Disposable(); got != want {
			t.Errorf("event %d Disposable = %v, want %v (only successful reads may be dropped)", i, got, want)
		}
	}
}
