package cluster

import (
	"net"
	"strings"
	"testing"
)

// A second lab on one host (or LocalStack) holds 4566: the next lab takes the address its
// home used last, or else a free port, and says so in one line; an address the user named
// stays as named.
func TestChooseEC2AddrWhenTheDefaultIsTaken(t *testing.T) {
	if ln, err := net.Listen("tcp", DefaultEC2Addr); err == nil {
		defer ln.Close() // else something else holds it already, as the test wants
	}
	h := Home(t.TempDir())
	if err := h.Ensure(); err != nil {
		t.Fatal(err)
	}
	addr, note, err := ChooseEC2Addr(h, "")
	if err != nil {
		t.Fatal(err)
	}
	if addr == DefaultEC2Addr || !strings.HasPrefix(addr, "127.0.0.1:") || !strings.Contains(note, DefaultEC2Addr+" is in use") || !strings.Contains(note, addr) {
		t.Fatalf("with %s taken: addr %q, note %q", DefaultEC2Addr, addr, note)
	}
	if err := h.writeEnvFile("http://"+addr, ""); err != nil {
		t.Fatal(err)
	}
	again, note, err := ChooseEC2Addr(h, "")
	if err != nil || again != addr || !strings.Contains(note, "as it did last time") {
		t.Errorf("the next start: addr %q (want %q), note %q, err %v", again, addr, note, err)
	}
	if named, note, _ := ChooseEC2Addr(h, DefaultEC2Addr); named != DefaultEC2Addr || note != "" {
		t.Errorf("a named address: %q, note %q", named, note)
	}
}
