package karpenter_test

import (
	"fmt"
	"testing"
	"time"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// BenchmarkProvisioning measures pending-to-running: from creating a Deployment of N pods
// that fit no node to all N Running on machines the real provider bought from the
// emulator, with the AWS calls it made on the way. Targets: 10 pods in 20s, 500 in 120s.
//
//	go test -run '^$' -bench Provisioning -benchtime 1x ./cluster/karpenter/
func BenchmarkProvisioning(b *testing.B) {
	e := lab(b)
	e.applySeed(b)
	for _, bc := range []struct {
		pods        int32
		cpu, memory string
		timeout     time.Duration
	}{
		{pods: 10, cpu: "1", memory: "6Gi", timeout: 90 * time.Second},
		{pods: 500, cpu: "250m", memory: "512Mi", timeout: 5 * time.Minute},
	} {
		b.Run(fmt.Sprintf("pods=%d", bc.pods), func(b *testing.B) {
			var total time.Duration
			var calls, fleets, claims int
			for i := 0; i < b.N; i++ {
				since := time.Now()
				e.createDeployment(b, deployment("bench", "ziba-render-worker", bc.pods, bc.cpu, bc.memory, nil))
				total += e.waitRunning(b, "bench", "ziba-render-worker", int(bc.pods), bc.timeout)
				all := e.karpenterCalls(b, "", since)
				calls += len(all)
				byAction := map[string]int{}
				for _, ev := range all {
					byAction[ev.Action]++
				}
				b.Logf("AWS calls by action: %v", byAction)
				fleets += len(e.karpenterCalls(b, "CreateFleet", since))
				claims += len(e.nodeClaims(b))
				b.StopTimer()
				e.resetCluster(b, "bench")
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(total.Seconds()/n, "s-to-running")
			b.ReportMetric(float64(calls)/n, "ec2-calls")
			b.ReportMetric(float64(fleets)/n, "create-fleets")
			b.ReportMetric(float64(claims)/n, "nodeclaims")
			b.ReportMetric(0, "ns/op") // the wall clock above is the figure
		})
	}
}

// BenchmarkProvisioningRealVsKWOK runs one workload (10 pods that fit no node) to Running
// twice in one run: on the real karpenter-provider-aws against the emulated account, and on
// Karpenter's stock kwok provider (no cloud at all), and prints their ratio. The goal is a
// real provider no more than 1.3 times slower than the floor.
func BenchmarkProvisioningRealVsKWOK(b *testing.B) {
	e := lab(b)
	const pods = 10
	run := func(ns, pool string) time.Duration {
		var total time.Duration
		for i := 0; i < b.N; i++ {
			e.createDeployment(b, deployment(ns, "ziba-render-worker", pods, "1", "6Gi", map[string]string{karpv1.NodePoolLabelKey: pool}))
			total += e.waitRunning(b, ns, "ziba-render-worker", pods, 2*time.Minute)
			b.StopTimer()
			e.resetCluster(b, ns)
			b.StartTimer()
		}
		return total / time.Duration(b.N)
	}
	var real, floor time.Duration
	b.Run("provider=aws", func(b *testing.B) {
		e.applySeed(b)
		b.ResetTimer()
		real = run("bench-aws", "ziba-general")
		b.ReportMetric(real.Seconds(), "s-to-running")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("provider=kwok", func(b *testing.B) {
		e.startKWOKProvider(b)
		b.ResetTimer()
		floor = run("bench-kwok", "kwok")
		b.ReportMetric(floor.Seconds(), "s-to-running")
		b.ReportMetric(0, "ns/op")
	})
	if real > 0 && floor > 0 {
		b.Logf("pending-to-running, %d pods: real provider %s, stock kwok provider %s, ratio %.2f (goal <= 1.3)",
			pods, real.Round(time.Millisecond), floor.Round(time.Millisecond), real.Seconds()/floor.Seconds())
	}
}
