package app

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/karplab/karplab/fakeec2"
)

func TestEC2ServeUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"extra argument", []string{"karplab", "ec2", "serve", "now"}},
		{"negative delay", []string{"karplab", "ec2", "serve", "--boot-delay", "-1s"}},
		{"unknown flag", []string{"karplab", "ec2", "serve", "--colour"}},
		{"bad address", []string{"karplab", "ec2", "serve", "--addr", "not-an-address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			if code := Run(tt.args, strings.NewReader(""), io.Discard, &stderr); code != ExitError {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitError, stderr.String())
			}
		})
	}
}

// TestEC2Serve runs `karplab ec2 serve` on a free port with a state directory, checks the
// admin API answers, and stops it with SIGINT as a user's Ctrl-C would.
func TestEC2Serve(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run([]string{"karplab", "ec2", "serve", "--addr", "127.0.0.1:0", "--state", t.TempDir(), "--boot-delay", "0"},
			strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("no output from ec2 serve (exit %d)", <-done)
	}
	m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+) `).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("no address in %q", lines.Text())
	}
	go func() { // keep draining stderr
		for lines.Scan() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := fakeec2.NewAdminClient(m[1]).Health(ctx)
	if err != nil || h.Status != "ok" || !h.Persisted {
		t.Fatalf("health %+v, %v", h, err)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != ExitPass {
			t.Errorf("exit %d after SIGINT, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ec2 serve did not stop on SIGINT")
	}
}
