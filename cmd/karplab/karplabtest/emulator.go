package karplabtest

import (
	"net"
	"testing"
	"time"

	"github.com/karplab/karplab/fakeec2"
)

// OnRealClock sets the emulator's options for real clients (the aws CLIs, boto3), whose
// waiters poll in real time, which a fake clock would leave polling forever: the real
// clock, short delays and random IDs.
func OnRealClock(o *fakeec2.Options) {
	o.Clock, o.IDs = nil, nil
	o.BootDelay, o.ShutdownDelay, o.VolumeDelay = 200*time.Millisecond, 200*time.Millisecond, 300*time.Millisecond
}

// ServeEmulator serves a new AWS emulator with opts on a loopback port until t ends, and
// returns its endpoint URL.
func ServeEmulator(t testing.TB, opts fakeec2.Options) (*fakeec2.Server, string) {
	t.Helper()
	srv, err := fakeec2.New(opts)
	if err != nil {
		t.Fatalf("fakeec2.New: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("closing the emulator: %v", err)
		}
	})
	return srv, "http://" + l.Addr().String()
}
