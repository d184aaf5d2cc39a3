package labs

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestPollGivesUpOnlyWithoutProgress(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name    string
		status  func(call int) (bool, string)
		wantErr string // "" for success
	}{
		{
			name:   "done at once",
			status: func(int) (bool, string) { return true, "done" },
		},
		{
			// Moving at every call (each 10ms, far more under load), it needs at least twice
			// the timeout and still succeeds.
			name: "keeps moving past the timeout",
			status: func(call int) (bool, string) {
				return call >= 60, fmt.Sprintf("step %d", call)
			},
		},
		{
			name:    "stuck",
			status:  func(int) (bool, string) { return false, "1 of 2 nodes left" },
			wantErr: "gave up after 300ms without progress (last: 1 of 2 nodes left)",
		},
		{
			name:    "moving forever hits the limit",
			status:  func(call int) (bool, string) { return false, fmt.Sprintf("step %d", call) },
			wantErr: "gave up after 900ms (last: step",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := 0
			err := poll(t.Context(), io.Discard, timeout, 10*time.Millisecond, "the test", func(context.Context) (bool, string, error) {
				call++
				ok, status := tt.status(call)
				return ok, status, nil
			})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("poll: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("poll = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPollStopsWithItsCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := poll(ctx, io.Discard, time.Minute, 10*time.Millisecond, "the test", func(context.Context) (bool, string, error) {
		return false, "waiting", nil
	})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("poll = %v, want the caller's cancellation", err)
	}
}
