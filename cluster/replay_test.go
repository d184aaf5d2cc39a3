package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// The daemon refuses a bundle as karplab replay's validation would, every problem at once,
// though no CLI checked it: here a report's manifests (a Node pasted without its zone's
// subnet, an EC2NodeClass without status) started by a script.
func TestDaemonRefusesWhatValidationWould(t *testing.T) {
	dir := t.TempDir()
	bundle := `apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-0-1.ec2.internal
  labels: {topology.kubernetes.io/zone: us-east-1a, node.kubernetes.io/instance-type: m5.large, karpenter.sh/nodepool: default}
spec: {providerID: "aws:///us-east-1a/i-0123456789abcdef0"}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec: {role: KarpenterNodeRole-prod}
`
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DaemonConfig{Replay: dir, Account: Account{Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}, ClusterName: "prod"}}
	_, _, err := openReplay(cfg)
	if err == nil || !strings.Contains(err.Error(), "the lab cannot replay") || !strings.Contains(err.Error(), "us-east-1a") {
		t.Fatalf("openReplay = %v, want the validation's refusal naming the node's zone", err)
	}
	t.Log(err)
	cfg.Account.Region = "eu-west-2"
	if _, _, err := openReplay(cfg); err == nil || !strings.Contains(err.Error(), "no node carries label") && !strings.Contains(err.Error(), "zone") {
		t.Fatalf("openReplay in another region = %v, want a refusal", err)
	}
}

// karplab start --set reaches the daemon's command line and Karpenter's options as a
// replay's settings do.
func TestStartSettingsReachKarpenter(t *testing.T) {
	o := StartOptions{Settings: []string{"FEATURE_GATES=SpotToSpotConsolidation=true", "VM_MEMORY_OVERHEAD_PERCENT=0.1"}}
	args := strings.Join(o.DaemonArgs(), " ")
	if !strings.Contains(args, "--set FEATURE_GATES=SpotToSpotConsolidation=true --set VM_MEMORY_OVERHEAD_PERCENT=0.1") {
		t.Errorf("daemon args %q lack the settings", args)
	}
	cfg := DaemonConfig{Settings: o.Settings}
	cfg.defaults()
	if cfg.Karpenter.FeatureGates != "SpotToSpotConsolidation=true" || !slices.Equal(cfg.KarpenterEnv, []string{"VM_MEMORY_OVERHEAD_PERCENT=0.1"}) {
		t.Errorf("Karpenter's options %+v, env %v", cfg.Karpenter, cfg.KarpenterEnv)
	}
}
