package karpenter_test

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkProvisioning measures pending-to-running: from creating a Deployment of N pods
// that fit no node to all N Running on machines Karpenter bought from the emulator, with
// the EC2 calls Karpenter made on the way. Targets: 10 pods in 20s, 500 in 120s.
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
				b.Logf("EC2 calls by action: %v", byAction)
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
