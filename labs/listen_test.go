package labs

import (
	"os"
	"strings"
	"testing"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// TestIntegrationListensOnLoopbackOnly: every TCP port the running lab listens on (the
// daemon, which this test process hosts, and its children: etcd, the API server, Karpenter)
// is bound to a loopback address, so nothing of a learner's lab is reachable from the network.
func TestIntegrationListensOnLoopbackOnly(t *testing.T) {
	ensurePool(t)
	t.Parallel() // the other tests start on the labs that are ready
	<-pool.started
	pids := karplabtest.ProcessTree(t, os.Getpid())
	var listening []string
	for _, l := range karplabtest.Listeners(t, pids...) {
		listening = append(listening, l.String())
		if !l.Addr.IP.IsLoopback() {
			t.Errorf("pid %d (%s) listens on %s, not on loopback", l.PID, l.Command, l.Addr)
		}
	}
	// The API server, etcd (client and peer), the emulator, the daemon's control endpoint and
	// Karpenter's health and metrics ports at the least.
	if len(listening) < 5 {
		t.Errorf("found only %d listening sockets of the lab (%v) in %d processes: the scan is broken", len(listening), listening, len(pids))
	}
	t.Logf("%d listening sockets, all on loopback:\n%s", len(listening), strings.Join(listening, "\n"))
}
