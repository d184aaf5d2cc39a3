package controlplane

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLockDataDir(t *testing.T) {
	dir := t.TempDir()
	first, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(dir)
	if !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second lock: got %v, want ErrDataDirInUse", err)
	}
	if want := fmt.Sprintf("(pid %d)", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder %s", err, want)
	}
	if err := unlockDataDir(first); err != nil {
		t.Fatal(err)
	}
	again, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlockDataDir(again)
}

func TestListenAPIServerPersistsPort(t *testing.T) {
	dir := t.TempDir()
	lo := net.ParseIP("127.0.0.1")
	ln, err := listenAPIServer(dir, lo, 0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(state{APIServerPort: port}, s); diff != "" {
		t.Errorf("persisted state (-want +got):\n%s", diff)
	}
	ln, err = listenAPIServer(dir, lo, 0)
	if err != nil {
		t.Fatalf("reopening the persisted port %d: %v", port, err)
	}
	if got := ln.Addr().(*net.TCPAddr).Port; got != port {
		t.Errorf("second listen on port %d, want persisted %d", got, port)
	}
	// While it is held, a start must fail clearly rather than move.
	if _, err := listenAPIServer(dir, lo, 0); err == nil || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("listening on a taken port: got %v", err)
	}
	ln.Close()
}

func TestLastLines(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "keeps failing checks", in: "[+]ping ok\n[-]etcd failed: reason withheld\n[+]log ok\nreadyz check failed", want: "[-]etcd failed: reason withheld"},
		{name: "tail otherwise", in: "a\nb\nc\nd", want: "c; d"},
		{name: "short", in: "ok\n", want: "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lastLines(tt.in, 2)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
