package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/metrics"
)

// metricsService runs the lab's metrics-server (cluster/metrics): kwok usage profiles,
// metrics.k8s.io for kubectl top, per-pod peaks for the graders, and the kubelet's OOM kills
// and memory-pressure evictions. It listens on the daemon's loopback, so it serves a cluster
// whose API server runs on this host (the embedded one, or another here) and that has no
// metrics API of its own; elsewhere it does not run and says why.
func metricsService(d *daemon, be backend.Backend) *service {
	var srv *metrics.Server
	stop := func(context.Context) error { return nil }
	d.metrics = func() *metrics.Server { return srv }
	return &service{
		name: "metrics API (metrics.k8s.io from kwok usage profiles)",
		start: func(ctx context.Context) (string, error) {
			if why := metricsUnreachable(ctx, be, d.cfg.Home); why != "" {
				return "not run: " + why, nil
			}
			s, err := metrics.New(metrics.Options{
				RESTConfig: d.restConfig(),
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
			if srv == nil {
				return nil
			}
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

// metricsUnreachable says why the lab's metrics API cannot serve the cluster ("" when it can).
func metricsUnreachable(ctx context.Context, be backend.Backend, h Home) string {
	switch be.Name() {
	case "embedded":
		return ""
	case "kind":
		// Published on this host's 127.0.0.1, but it runs in kind's node container.
		return "kind's API server runs in its node container, which cannot reach the lab's metrics API on this host's loopback (kubectl top and the requests-truth lab need it)"
	}
	u, err := url.Parse(be.RESTConfig().Host)
	if err != nil {
		return err.Error()
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "the cluster's API server is not on this host, so it cannot reach the lab's metrics API on loopback (kubectl top and the requests-truth lab need it)"
	}
	agg, err := aggregator.NewForConfig(be.RESTConfig())
	if err != nil {
		return err.Error()
	}
	svc, err := agg.ApiregistrationV1().APIServices().Get(ctx, metrics.APIServiceName, metav1.GetOptions{})
	if err == nil && !h.recordedBy()("apiservices", svc.Name, string(svc.UID)) {
		return "the cluster serves metrics.k8s.io itself, and the lab leaves it alone"
	}
	return ""
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
