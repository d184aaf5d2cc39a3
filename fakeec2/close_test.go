package fakeec2_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/karplab/karplab/fakeec2"
)

// TestCloseCutsStuckClients: a client that never finishes its request cannot hold Close
// (and with it the lab's stop) beyond the grace period, and Close reports no error.
func TestCloseCutsStuckClients(t *testing.T) {
	srv, err := fakeec2.New(fakeec2.Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers promise a body that never comes: the handler blocks reading it.
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nAction=Describe", l.Addr())
	time.Sleep(200 * time.Millisecond)

	begin := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatalf("Close with a stuck client: %v", err)
	}
	if took := time.Since(begin); took > 8*time.Second {
		t.Errorf("Close took %s with a stuck client, want the 5 s grace period", took)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
}
