package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/metrics"
)

// metricsService runs the lab's metrics-server (cluster/metrics): kwok usage profiles,
// metrics.k8s.io for kubectl top, per-pod peaks for the graders, and the kubelet's OOM kills
// and memory-pressure evictions. The embedded backend only: its backend listens on the
// daemon's loopback, which a kind API server cannot reach.
func metricsService(d *daemon, be backend.Backend) *service {
	var srv *metrics.Server
	stop := func(context.Context) error { return nil }
	d.metrics = func() *metrics.Server { return srv }
	return &service{
		name: "metrics API (metrics.k8s.io from kwok usage profiles)",
		start: func(ctx context.Context) (string, error) {
			s, err := metrics.New(metrics.Options{
				RESTConfig: be.RESTConfig(),
				Resolution: d.cfg.MetricsResolution,
				Enforce:    true,
				Logger:     d.cfg.Logger.With("component", "metrics"),
			})
			if err != nil {
				return "", err
			}
			if stop, err = goService("metrics", d.cfg.Logger, s.Run); err != nil {
				return "", err
			}
			srv = s
			return "APIService v1beta1.metrics.k8s.io -> https://" + s.Addr(), nil
		},
		stop: func(ctx context.Context) error { return stop(ctx) },
		components: func(ctx context.Context) []backend.Component {
			rep := srv.Report()
			running := 0
			for _, p := range rep.Pods {
				if p.Running {
					running++
				}
			}
			return []backend.Component{{Name: "metrics-server", Address: "https://" + srv.Addr(), Healthy: true,
				Detail: fmt.Sprintf("every %s: %d pods running, %d recorded, %d nodes", rep.Resolution, running, len(rep.Pods), len(rep.Nodes))}}
		},
	}
}

func (d *daemon) metricsHandlers(mux *http.ServeMux) {
	mux.HandleFunc("GET /usage", func(w http.ResponseWriter, r *http.Request) {
		srv := d.metrics()
		if srv == nil {
			http.Error(w, "the metrics API is not running (it runs on the embedded backend)", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(srv.Report())
	})
}

// Usage returns what the lab's metrics-server recorded: every pod that ran since the lab
// started or was reset (current and peak CPU and memory, per container and in total, with
// requests, limits, OOM kills and evictions; kept after the pod ends) and every Ready node.
// It fails when the lab does not run or runs without the metrics API (kind backend).
func Usage(ctx context.Context, h Home) (*metrics.Report, error) {
	var rep metrics.Report
	if err := h.control(ctx, http.MethodGet, "/usage", nil, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// PodUsage returns the record of pod namespace/name (the running one, else the one that ran
// last); ok is false when no such pod was ever sampled.
func PodUsage(ctx context.Context, h Home, namespace, name string) (u metrics.PodUsage, ok bool, err error) {
	rep, err := Usage(ctx, h)
	if err != nil {
		return u, false, err
	}
	for _, p := range rep.Pods {
		if p.Namespace != namespace || p.Name != name {
			continue
		}
		if !ok || (p.Running && !u.Running) || (p.Running == u.Running && p.LastSampled.After(u.LastSampled)) {
			u, ok = p, true
		}
	}
	return u, ok, nil
}
