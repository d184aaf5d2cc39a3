package karpenter

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Settings are the environment variables Karpenter v1.15.0 and karpenter-provider-aws v1.15.0
// read as their settings (each module's pkg/operator/options; TestSettingsAreKarpentersOwn
// reads them there): what a Deployment's env carries and `karplab start --set` takes.
var Settings = []string{
	"AMI_REFRESH_INTERVAL", "AWS_FEATURE_GATES", "BATCH_IDLE_DURATION", "BATCH_MAX_DURATION", "CLUSTER_CA_BUNDLE",
	"CLUSTER_ENDPOINT", "CLUSTER_NAME", "CPU_REQUESTS", "DISABLE_CLUSTER_STATE_OBSERVABILITY", "DISABLE_CONTROLLER_WARMUP",
	"DISABLE_DRY_RUN", "DISABLE_LEADER_ELECTION", "EKS_CONTROL_PLANE", "ENABLE_PROFILING", "ENABLE_ZONAL_SHIFT",
	"FEATURE_GATES", "HEALTH_PROBE_PORT", "IGNORE_DRA_REQUESTS", "INTERRUPTION_QUEUE", "ISOLATED_VPC", "KARPENTER_SERVICE",
	"KUBE_CLIENT_BURST", "KUBE_CLIENT_QPS", "LEADER_ELECTION_NAME", "LEADER_ELECTION_NAMESPACE", "LEGACY_NODE_REPAIR",
	"LOG_ERROR_OUTPUT_PATHS", "LOG_LEVEL", "LOG_OUTPUT_PATHS", "MEMORY_LIMIT", "METRICS_PORT", "MIN_VALUES_POLICY",
	"PREFERENCE_POLICY", "RESERVED_ENIS", "SCHEDULER_CONFIG", "SECURITY_GROUP_REFRESH_INTERVAL", "SUBNET_REFRESH_INTERVAL",
	"VM_MEMORY_OVERHEAD_PERCENT",
}

// labOwned are the settings the lab sets for its own account and processes, and what to use
// instead.
var labOwned = map[string]string{
	"CLUSTER_NAME":            "the account's cluster: karplab start --cluster-name (at the first start)",
	"CLUSTER_ENDPOINT":        "the lab's API server",
	"CLUSTER_CA_BUNDLE":       "the lab's API server",
	"INTERRUPTION_QUEUE":      "the account's interruption queue",
	"EKS_CONTROL_PLANE":       "the lab's EKS",
	"HEALTH_PROBE_PORT":       "the lab's ports",
	"METRICS_PORT":            "the lab's ports",
	"LOG_OUTPUT_PATHS":        "the lab's Karpenter log",
	"LOG_ERROR_OUTPUT_PATHS":  "the lab's Karpenter log",
	"DISABLE_LEADER_ELECTION": "the lab's one Karpenter",
}

// CheckSetting says why NAME=VALUE cannot be given to the lab's Karpenter, or nil.
func CheckSetting(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	switch {
	case !ok || k == "":
		return fmt.Errorf("setting %q: write NAME=VALUE, as FEATURE_GATES=SpotToSpotConsolidation=true", kv)
	case !slices.Contains(Settings, k):
		return fmt.Errorf("setting %s: Karpenter v1.15.0 reads no such setting; it reads %s", k, strings.Join(Settings, ", "))
	case labOwned[k] != "":
		return fmt.Errorf("setting %s: the lab sets it (%s)", k, labOwned[k])
	case v == "":
		return fmt.Errorf("setting %s: no value", k)
	case strings.HasSuffix(k, "_DURATION") || strings.HasSuffix(k, "_INTERVAL"):
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("setting %s=%s: not a duration (20s, 1m)", k, v)
		}
	case k == "LOG_LEVEL" && v != "debug" && v != "info" && v != "error":
		return fmt.Errorf("setting LOG_LEVEL=%s: debug, info or error", v)
	}
	return nil
}
