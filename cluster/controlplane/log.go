package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

// The Kubernetes components log through klog and grpclog, which are process-wide. They are
// pointed once at a forwarding handler; each Start swaps the logger it forwards to.
var (
	routeOnce sync.Once
	routed    atomic.Pointer[slog.Logger]
)

// routeGlobalLogs sends klog and grpclog output of the whole process to logger.
func routeGlobalLogs(logger *slog.Logger) {
	routed.Store(logger)
	routeOnce.Do(func() {
		klog.SetLogger(logr.FromSlogHandler(componentHandler{}))
		grpclog.SetLoggerV2(grpcLogger{})
	})
}

func current() *slog.Logger {
	if l := routed.Load(); l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// componentLevel lowers component chatter by one slog step: their routine V(0) info
// becomes Debug (V(n) becomes Debug-n); warnings and errors keep their level.
func componentLevel(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return l + slog.LevelDebug
	}
	return l
}

// componentHandler forwards to the currently routed logger, replaying WithAttrs/WithGroup.
type componentHandler struct {
	ops []func(slog.Handler) slog.Handler
}

func (h componentHandler) target() slog.Handler {
	t := current().Handler()
	for _, op := range h.ops {
		t = op(t)
	}
	return t
}

func (h componentHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return current().Handler().Enabled(ctx, componentLevel(l))
}

func (h componentHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = componentLevel(r.Level)
	return h.target().Handle(ctx, r)
}

func (h componentHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithAttrs(attrs) })
}

func (h componentHandler) WithGroup(name string) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithGroup(name) })
}

func (h componentHandler) with(op func(slog.Handler) slog.Handler) componentHandler {
	ops := make([]func(slog.Handler) slog.Handler, len(h.ops), len(h.ops)+1)
	copy(ops, h.ops)
	return componentHandler{ops: append(ops, op)}
}

// grpcLogger drops gRPC info and keeps its warnings and errors.
type grpcLogger struct{}

func (grpcLogger) log(l slog.Level, msg string) {
	current().Log(context.Background(), l, msg, "component", "grpc")
}
func (grpcLogger) Info(...any)             {}
func (grpcLogger) Infoln(...any)           {}
func (grpcLogger) Infof(string, ...any)    {}
func (g grpcLogger) Warning(args ...any)   { g.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (g grpcLogger) Warningln(args ...any) { g.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (g grpcLogger) Warningf(format string, args ...any) {
	g.log(slog.LevelWarn, fmt.Sprintf(format, args...))
}
func (g grpcLogger) Error(args ...any)   { g.log(slog.LevelError, fmt.Sprint(args...)) }
func (g grpcLogger) Errorln(args ...any) { g.log(slog.LevelError, fmt.Sprint(args...)) }
func (g grpcLogger) Errorf(format string, args ...any) {
	g.log(slog.LevelError, fmt.Sprintf(format, args...))
}
func (g grpcLogger) Fatal(args ...any)   { g.log(slog.LevelError, fmt.Sprint(args...)) }
func (g grpcLogger) Fatalln(args ...any) { g.log(slog.LevelError, fmt.Sprint(args...)) }
func (g grpcLogger) Fatalf(format string, args ...any) {
	g.log(slog.LevelError, fmt.Sprintf(format, args...))
}
func (grpcLogger) V(int) bool { return false }

// zapLogger builds the zap logger embedded etcd requires, writing to logger.
func zapLogger(logger *slog.Logger) *zap.Logger {
	return zap.New(zapCore{logger: logger})
}

// zapCore is a zapcore.Core over slog, with the same level lowering as componentHandler.
type zapCore struct {
	logger *slog.Logger
	fields []zapcore.Field
}

func zapToSlog(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func (c zapCore) Enabled(l zapcore.Level) bool {
	return c.logger.Enabled(context.Background(), componentLevel(zapToSlog(l)))
}

func (c zapCore) With(fields []zapcore.Field) zapcore.Core {
	all := make([]zapcore.Field, 0, len(c.fields)+len(fields))
	return zapCore{logger: c.logger, fields: append(append(all, c.fields...), fields...)}
}

func (c zapCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c zapCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields)+1)
	attrs = append(attrs, slog.String("component", "etcd"))
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	c.logger.LogAttrs(context.Background(), componentLevel(zapToSlog(e.Level)), e.Message, attrs...)
	return nil
}

func (zapCore) Sync() error { return nil }
