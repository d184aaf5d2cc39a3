package labs

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestIntegrationListensOnLoopbackOnly: every TCP port the running lab listens on (the
// daemon, which this test process hosts, and its children: etcd, the API server, Karpenter)
// is bound to a loopback address, so nothing of a learner's lab is reachable from the network.
func TestIntegrationListensOnLoopbackOnly(t *testing.T) {
	if len(pool.all) == 0 {
		t.Skipf("no lab: %v", pool.err)
	}
	pids := processTree(t, os.Getpid())
	inodes := map[string]int{} // socket inode -> pid
	for _, pid := range pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = pid
			}
		}
	}
	var listening []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, s := range listeningSockets(t, table) {
			pid, ours := inodes[s.inode]
			if !ours {
				continue
			}
			listening = append(listening, fmt.Sprintf("%s (pid %d, %s)", s.addr, pid, command(pid)))
			if !s.addr.IP.IsLoopback() {
				t.Errorf("pid %d (%s) listens on %s, not on loopback", pid, command(pid), s.addr)
			}
		}
	}
	// The API server, etcd (client and peer), the emulator, the daemon's control endpoint and
	// Karpenter's health and metrics ports at the least.
	if len(listening) < 5 {
		t.Errorf("found only %d listening sockets of the lab (%v) in %d processes: the scan is broken", len(listening), listening, len(pids))
	}
	t.Logf("%d listening sockets, all on loopback:\n%s", len(listening), strings.Join(listening, "\n"))
}

// processTree is pid and all its descendants.
func processTree(t *testing.T, root int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command may hold spaces: the fields after it follow the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			ppid, _ := strconv.Atoi(fields[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

type listenSocket struct {
	addr  *net.TCPAddr
	inode string
}

// listeningSockets parses a /proc/net/tcp table for sockets in LISTEN (state 0A).
func listeningSockets(t *testing.T, table string) []listenSocket {
	t.Helper()
	f, err := os.Open(table)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []listenSocket
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" {
			continue
		}
		host, port, _ := strings.Cut(fields[1], ":")
		raw, err := hex.DecodeString(host)
		if err != nil {
			t.Fatalf("%s: local address %q: %v", table, fields[1], err)
		}
		// The kernel prints each 32-bit word in host (little-endian) order.
		for i := 0; i+4 <= len(raw); i += 4 {
			raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
		}
		p, _ := strconv.ParseUint(port, 16, 16)
		out = append(out, listenSocket{addr: &net.TCPAddr{IP: net.IP(raw), Port: int(p)}, inode: fields[9]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func command(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}
