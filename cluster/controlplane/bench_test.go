package controlplane

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStart measures a cold Start (fresh data dir: PKI, etcd bootstrap, RBAC
// bootstrap) and a warm restart on the same data dir, and the memory the control plane
// holds once ready. Run with -benchtime 1x; each iteration starts two control planes.
func BenchmarkStart(b *testing.B) {
	// The shared test control plane would hold the process's one slot.
	sharedMu.Lock()
	if sharedCP != nil {
		sharedCP.Stop()
		sharedCP = nil
	}
	sharedMu.Unlock()

	var cold, warm time.Duration
	var rss, heap, leaked float64
	baseline := runtime.NumGoroutine()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		logger, err := testLogger(dir)
		if err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		cp, err := Start(context.Background(), Config{DataDir: dir, Logger: logger})
		if err != nil {
			b.Fatalf("cold start: %v", err)
		}
		cold += time.Since(began)
		// Let startup garbage go before measuring what the running control plane holds.
		time.Sleep(5 * time.Second)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap += float64(ms.HeapAlloc) / (1 << 20)
		rss += vmRSSMiB(b)
		if err := cp.Stop(); err != nil {
			b.Fatalf("stop: %v", err)
		}

		began = time.Now()
		cp, err = Start(context.Background(), Config{DataDir: dir, Logger: logger})
		if err != nil {
			b.Fatalf("warm start: %v", err)
		}
		warm += time.Since(began)
		if err := cp.Stop(); err != nil {
			b.Fatalf("stop: %v", err)
		}
		leaked += float64(drainGoroutines(baseline, 15*time.Second) - baseline)
	}
	// To see what outlives Stop: CONTROLPLANE_GOROUTINE_DUMP=/tmp/g.txt.
	if f := os.Getenv("CONTROLPLANE_GOROUTINE_DUMP"); f != "" {
		if out, err := os.Create(f); err == nil {
			pprof.Lookup("goroutine").WriteTo(out, 1)
			out.Close()
		}
	}
	n := float64(b.N)
	b.ReportMetric(cold.Seconds()/n, "s/start")
	b.ReportMetric(warm.Seconds()/n, "s/restart")
	b.ReportMetric(rss/n, "MiB-RSS")
	b.ReportMetric(heap/n, "MiB-heap")
	b.ReportMetric(leaked/n, "goroutines-after-stop")
}

// drainGoroutines waits until at most baseline+2 goroutines run (stopped components
// finish in the background for a few seconds) or timeout passes, and returns the count.
func drainGoroutines(baseline int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for runtime.NumGoroutine() > baseline+2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return runtime.NumGoroutine()
}

// vmRSSMiB reads the process's resident set size from /proc/self/status.
func vmRSSMiB(tb testing.TB) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb / 1024
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}
