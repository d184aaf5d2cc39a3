package service

import (
	"time"

	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/ssm"
	"github.com/karplab/karplab/fakeec2/statefile"
	"github.com/karplab/karplab/fakeec2/trail"
)

// testAccount is the account around EC2 in this package's tests: a fixed clock, a policy
// the test sets, an audit trail in memory and no other services.
type testAccount struct {
	now    time.Time
	policy authz.Policy
	audit  []*trail.AuditEvent
}

func (a *testAccount) Now() time.Time { return a.now }
func (a *testAccount) Authorize(caller, action, resource string) string {
	return a.policy.Authorize(caller, action, resource)
}
func (a *testAccount) CheckLaunch(caller string, lc authz.Launch, live func() int) string {
	return a.policy.CheckLaunch(caller, lc, live)
}
func (a *testAccount) CheckPlacement(caller, instanceType, zone, capacityType string) string {
	return a.policy.CheckPlacement(caller, instanceType, zone, capacityType)
}
func (a *testAccount) Record(e *trail.AuditEvent) <-chan error {
	a.audit = append(a.audit, e)
	return statefile.Done()
}
func (a *testAccount) SendEvent(string) error             { return nil }
func (a *testAccount) PublishImages([]ssm.EKSImage) error { return nil }
func (a *testAccount) LedgerChanged()                     {}
