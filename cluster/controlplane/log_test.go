package controlplane

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
)

func TestComponentLevel(t *testing.T) {
	tests := []struct {
		in, want slog.Level
	}{
		{slog.LevelInfo, slog.LevelDebug},
		{slog.LevelInfo - 2, slog.LevelDebug - 2},
		{slog.LevelWarn, slog.LevelWarn},
		{slog.LevelError, slog.LevelError},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, componentLevel(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRouteGlobalLogs(t *testing.T) {
	var buf bytes.Buffer
	prev := routed.Load() // the shared control plane's logger, if one runs
	defer routed.Store(prev)
	routeGlobalLogs(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	klog.InfoS("component chatter", "k", "v")
	klog.ErrorS(nil, "component failure")
	zapLogger(current()).Warn("etcd warning")
	got := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="component chatter" k=v`,
		`level=ERROR msg="component failure"`,
		`level=WARN msg="etcd warning" component=etcd`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}
