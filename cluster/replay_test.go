package cluster

import (
	"slices"
	"testing"
	"time"
)

// A replay runs Karpenter with the captured Deployment's settings, as flags where the lab
// passes flags and as env otherwise; what names the lab's own account stays the lab's.
func TestCarryKarpenterSettings(t *testing.T) {
	var cfg DaemonConfig
	said := carryKarpenterSettings(&cfg, map[string]string{
		"FEATURE_GATES": "SpotToSpotConsolidation=true", "BATCH_MAX_DURATION": "20s", "BATCH_IDLE_DURATION": "2s",
		"LOG_LEVEL": "debug", "VM_MEMORY_OVERHEAD_PERCENT": "0.1", "CLUSTER_NAME": "prod", "AWS_REGION": "us-east-1",
		"INTERRUPTION_QUEUE": "prod-queue",
	})
	k := cfg.Karpenter
	if k.FeatureGates != "SpotToSpotConsolidation=true" || k.BatchMaxDuration != 20*time.Second || k.BatchIdleDuration != 2*time.Second || k.LogLevel != "debug" {
		t.Errorf("Karpenter's options: %+v", k)
	}
	if !slices.Equal(cfg.KarpenterEnv, []string{"VM_MEMORY_OVERHEAD_PERCENT=0.1"}) {
		t.Errorf("Karpenter's extra env: %v", cfg.KarpenterEnv)
	}
	if len(said) != 5 || slices.ContainsFunc(said, func(s string) bool { return s == "CLUSTER_NAME=prod" || s == "AWS_REGION=us-east-1" }) {
		t.Errorf("said carried over: %v", said)
	}
}
