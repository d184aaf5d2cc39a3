package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/apis/v1alpha1"
	"sigs.k8s.io/kwok/pkg/kwok/controllers"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
)

// kwokStages are kwok's default stages (read without kwok's pkg/config, whose remote loading
// would add a module): node-initialize and node-heartbeat-with-lease keep a
// Node Ready, pod-ready/pod-complete/pod-delete run the pods bound to it.
func kwokStages() (map[internalversion.StageResourceRef][]*internalversion.Stage, error) {
	out := map[internalversion.StageResourceRef][]*internalversion.Stage{}
	for _, raw := range []string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	} {
		var v1 v1alpha1.Stage
		if err := yaml.UnmarshalStrict([]byte(raw), &v1); err != nil {
			return nil, fmt.Errorf("loading kwok's default stages: %w", err)
		}
		st, err := internalversion.ConvertToInternalStage(&v1)
		if err != nil {
			return nil, fmt.Errorf("loading kwok's stage %s: %w", v1.Name, err)
		}
		out[st.Spec.ResourceRef] = append(out[st.Spec.ResourceRef], st)
	}
	return out, nil
}

// kwokNode is the configuration of one machine's kubelet, played by a kwok controller.
type kwokNode struct {
	Name          string
	IP            string
	PodCIDR       string
	LeaseDuration time.Duration
	Client        kubernetes.Interface
	Stages        map[internalversion.StageResourceRef][]*internalversion.Stage
	Logger        *kwoklog.Logger
	// LabelSelector, when set, makes one controller manage every Node it selects instead
	// of the single Node Name (Name is then only the lease holder identity).
	LabelSelector string
}

// startKwok starts a kwok controller that manages only this node (kwok's ManageSingleNode:
// watches of the Node, its lease and the pods bound to it, by field selector), as the
// machine's own kubelet would. It runs until ctx is cancelled; then the node stops reporting.
// Its lease holder identity is the node name, as a kubelet's is, so a restarted daemon takes
// the lease straight back.
func startKwok(ctx context.Context, n kwokNode) error {
	leaseSeconds := uint(n.LeaseDuration / time.Second)
	if leaseSeconds == 0 {
		leaseSeconds = 40
	}
	cfg := controllers.Config{
		Clock:                     clock.RealClock{},
		TypedClient:               n.Client,
		RESTClient:                n.Client.CoreV1().RESTClient(),
		ManageSingleNode:          n.Name,
		CIDR:                      n.PodCIDR,
		NodeIP:                    n.IP,
		NodeName:                  n.Name,
		NodePort:                  kubeletPort,
		LocalStages:               n.Stages,
		PodPlayStageParallelism:   2,
		NodePlayStageParallelism:  1,
		NodeLeaseParallelism:      1,
		NodeLeaseDurationSeconds:  leaseSeconds,
		PodsOnNodeSyncParallelism: 1,
		ID:                        n.Name,
	}
	if n.LabelSelector != "" {
		cfg.ManageSingleNode, cfg.NodeName, cfg.NodeIP = "", "", ""
		cfg.ManageNodesWithLabelSelector = n.LabelSelector
		cfg.PodPlayStageParallelism, cfg.NodePlayStageParallelism = 4, 4
		cfg.NodeLeaseParallelism, cfg.PodsOnNodeSyncParallelism = 4, 4
	}
	ctr, err := controllers.NewController(cfg)
	if err != nil {
		return fmt.Errorf("configuring kwok for node %s: %w", n.Name, err)
	}
	if err := ctr.Start(kwoklog.NewContext(ctx, n.Logger)); err != nil {
		return fmt.Errorf("starting kwok for node %s: %w", n.Name, err)
	}
	return nil
}

// kwokLevelShift demotes kwok's own log lines: its Info lines (every lease renewal, every
// patch) are Debug detail for the lab, its errors are warnings the kubelet retries past.
const kwokLevelShift = 4

// newKwokLogger returns a kwok logger that forwards to h. kwok can only write JSON lines to an
// io.Writer (its Logger wraps no foreign slog.Handler), so kwokLogWriter decodes them again.
func newKwokLogger(h slog.Handler) *kwoklog.Logger {
	ctx := context.Background()
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		if h.Enabled(ctx, l-kwokLevelShift) {
			return kwoklog.NewLogger(kwokLogWriter{h: h}, l)
		}
	}
	return kwoklog.NewLogger(nil, slog.LevelError) // discards
}

type kwokLogWriter struct{ h slog.Handler }

// Write takes one JSON record (slog's JSONHandler writes each record in one call).
func (w kwokLogWriter) Write(p []byte) (int, error) {
	var rec map[string]any
	if err := json.Unmarshal(p, &rec); err != nil {
		return len(p), nil
	}
	var level slog.Level
	if s, ok := rec["level"].(string); ok {
		_ = level.UnmarshalText([]byte(s))
	}
	level -= kwokLevelShift
	if e, _ := rec["err"].(string); level > slog.LevelDebug && benignKwokError(e) {
		level = slog.LevelDebug
	}
	ctx := context.Background()
	if !w.h.Enabled(ctx, level) {
		return len(p), nil
	}
	t := time.Now()
	if s, ok := rec["time"].(string); ok {
		if parsed, err := time.Parse(time.RFC3339Nano, s); err == nil {
			t = parsed
		}
	}
	msg, _ := rec["msg"].(string)
	r := slog.NewRecord(t, level, "kwok: "+msg, 0)
	keys := make([]string, 0, len(rec))
	for k := range rec {
		switch k {
		case "time", "level", "msg", "source":
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.AddAttrs(slog.Any(k, rec[k]))
	}
	_ = w.h.Handle(ctx, r)
	return len(p), nil
}

// benignKwokError tells races between kwok's caches and the API server that kwok retries past:
// a pod deleted twice, a lease the previous daemon created, a lease renewed from a stale cache.
func benignKwokError(err string) bool {
	for _, s := range []string{"not found", "already exists", "the object has been modified"} {
		if strings.Contains(err, s) {
			return true
		}
	}
	return false
}
