package karplabtest

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

// Listener is a TCP socket in LISTEN that one of the scanned processes holds.
type Listener struct {
	Addr    *net.TCPAddr
	PID     int
	Command string
}

func (l Listener) String() string {
	return fmt.Sprintf("%s (pid %d, %s)", l.Addr, l.PID, l.Command)
}

// Listeners are the TCP sockets (IPv4 and IPv6) in LISTEN that the processes pids hold,
// read from /proc: what a test asserts binds to loopback only.
func Listeners(t testing.TB, pids ...int) []Listener {
	t.Helper()
	inodes := map[string]int{} // socket inode -> pid
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = pid
			}
		}
	}
	var out []Listener
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, s := range listeningSockets(t, table) {
			if pid, ours := inodes[s.inode]; ours {
				out = append(out, Listener{Addr: s.addr, PID: pid, Command: command(pid)})
			}
		}
	}
	return out
}

// ProcessTree is root and all its descendants.
func ProcessTree(t testing.TB, root int) []int {
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
func listeningSockets(t testing.TB, table string) []listenSocket {
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
