package fakeec2_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/statefile"
)

// A state file written before the account kept its own record holds the policy and the
// lab clock's lead in EC2's "meta" record. A daemon of this version must keep both, and
// keep them through the next restart too, after EC2 has rewritten its record without them.
func TestStateFromBeforeTheAccountRecordKeepsPolicyAndClock(t *testing.T) {
	dir := t.TempDir()
	f, err := statefile.Open(dir, []string{"meta"})
	if err != nil {
		t.Fatal(err)
	}
	old := `{"seq":7,"auditSeq":0,"policy":{"statements":[{"denyActions":["ec2:RunInstances"]}]},"faults":null,"offset":7200000000000}`
	if err := <-f.Enqueue([]statefile.Op{{Bucket: "meta", Key: "meta", Val: []byte(old)}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		srv, err := fakeec2.New(fakeec2.Options{StateDir: dir})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round == 1 { // EC2 rewrites its record
			if _, err := srv.SetFault(fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, InstanceType: "m5.large"}); err != nil {
				t.Fatal(err)
			}
		}
		want := authz.Policy{Statements: []authz.PolicyStatement{{DenyActions: []string{"ec2:RunInstances"}}}}
		if diff := cmp.Diff(want, srv.Policy()); diff != "" {
			t.Errorf("round %d: the policy is not the old file's (-want +got):\n%s", round, diff)
		}
		if lead := srv.LabTime().Offset; lead != 2*time.Hour {
			t.Errorf("round %d: lab clock leads by %s, want the old file's 2h0m0s", round, lead)
		}
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
