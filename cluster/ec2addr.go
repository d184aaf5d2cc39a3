package cluster

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
)

// ChooseEC2Addr is where the lab's EC2 emulator will listen. An address the user named is
// used as it is (the daemon says so if it is taken). Otherwise the default, 127.0.0.1:4566
// (LocalStack's port, which another lab or LocalStack may hold); when that is taken, the
// address this home's last lab used (the learner's shell may still export it), and else a
// free port on 127.0.0.1. note says in one line why the address is not the default ("" when
// it is).
func ChooseEC2Addr(h Home, requested string) (addr, note string, err error) {
	if requested != "" {
		return requested, "", nil
	}
	if free(DefaultEC2Addr) {
		return DefaultEC2Addr, "", nil
	}
	if last := h.lastEC2Addr(); last != "" && last != DefaultEC2Addr && free(last) {
		return last, fmt.Sprintf("%s is in use (another lab, or LocalStack?): the EC2 emulator listens on %s, as it did last time; karplab env exports it", DefaultEC2Addr, last), nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", fmt.Errorf("finding a free port for the EC2 emulator (%s is in use): %w", DefaultEC2Addr, err)
	}
	addr = ln.Addr().String()
	ln.Close()
	return addr, fmt.Sprintf("%s is in use (another lab, or LocalStack?): the EC2 emulator listens on %s instead; karplab env exports it", DefaultEC2Addr, addr), nil
}

// free reports whether addr can be listened on now.
func free(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// lastEC2Addr is the emulator's address in the env file the home's last lab wrote ("" when
// there is none).
func (h Home) lastEC2Addr() string {
	f, err := os.Open(h.EnvFile())
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(strings.TrimPrefix(sc.Text(), "export "), "AWS_ENDPOINT_URL=")
		if !ok {
			continue
		}
		u, err := url.Parse(strings.Trim(v, `'"`))
		if err == nil && u.Host != "" {
			return u.Host
		}
	}
	return ""
}
