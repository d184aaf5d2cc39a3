package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/karplab/karplab/cluster/kubelet"
)

// The simulated kubelet's bootstrap faults and node view, and Karpenter restarts, served by
// the daemon: both live under the daemon's process, so the CLI reaches them through the
// control endpoint.

// KubeletView is what `karplab kubelet status` shows.
type KubeletView struct {
	Nodes  []kubelet.NodeStatus     `json:"nodes"`
	Faults []kubelet.BootstrapFault `json:"faults"`
}

func (d *daemon) kubeletHandlers(mux *http.ServeMux) {
	mux.HandleFunc("GET /kubelet", func(w http.ResponseWriter, r *http.Request) {
		kl := d.kubelet()
		if kl == nil {
			http.Error(w, "the simulated kubelet is not running", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(KubeletView{Nodes: kl.Nodes(), Faults: kl.BootstrapFaults()})
	})
	mux.HandleFunc("POST /kubelet/break-bootstrap", func(w http.ResponseWriter, r *http.Request) {
		kl := d.kubelet()
		if kl == nil {
			http.Error(w, "the simulated kubelet is not running", http.StatusServiceUnavailable)
			return
		}
		var f kubelet.BootstrapFault
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
			http.Error(w, "decoding the fault: "+err.Error(), http.StatusBadRequest)
			return
		}
		kl.BreakBootstrap(f)
		d.cfg.Logger.Info("bootstrap fault set", "instances", f.InstanceIDs, "tags", f.Tags, "reason", f.Reason)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /karpenter/restart", func(w http.ResponseWriter, r *http.Request) {
		if d.restartKarpenter == nil {
			http.Error(w, "Karpenter is not running", http.StatusServiceUnavailable)
			return
		}
		d.cfg.Logger.Info("restarting Karpenter on request")
		if err := d.restartKarpenter(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /kubelet/repair-bootstrap", func(w http.ResponseWriter, r *http.Request) {
		if kl := d.kubelet(); kl != nil {
			kl.RepairBootstrap()
		}
		d.cfg.Logger.Info("bootstrap faults cleared")
		w.WriteHeader(http.StatusNoContent)
	})
}

// controlURL returns the running daemon's control endpoint.
func (h Home) controlURL() (string, error) {
	if _, err := h.daemonPID(); err != nil {
		return "", err
	}
	st, err := h.ReadState()
	if err != nil {
		return "", fmt.Errorf("reading daemon state: %w", err)
	}
	if st.Phase != PhaseReady || st.ControlURL == "" {
		return "", fmt.Errorf("the lab is %s, not ready; wait for karplab start to finish", st.Phase)
	}
	return st.ControlURL, nil
}

func (h Home) control(ctx context.Context, method, path string, in, out any) error {
	base, err := h.controlURL()
	if err != nil {
		return err
	}
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, &body)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking the daemon: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var msg bytes.Buffer
		msg.ReadFrom(resp.Body)
		return fmt.Errorf("the daemon answered %s: %s", resp.Status, bytes.TrimSpace(msg.Bytes()))
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// Kubelet returns the simulated kubelet's view of every instance and the faults in force.
func Kubelet(ctx context.Context, h Home) (*KubeletView, error) {
	var v KubeletView
	if err := h.control(ctx, http.MethodGet, "/kubelet", nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// BreakBootstrap makes instances that boot from now on (and match f) run without ever
// registering a Node, as a broken bootstrap would.
func BreakBootstrap(ctx context.Context, h Home, f kubelet.BootstrapFault) error {
	if len(f.InstanceIDs) == 0 && len(f.Tags) == 0 {
		return errors.New("name the instances (--instance) or a NodePool (--nodepool) whose bootstrap breaks")
	}
	return h.control(ctx, http.MethodPost, "/kubelet/break-bootstrap", f, nil)
}

// RepairBootstrap clears every bootstrap fault; instances that boot from now on register.
func RepairBootstrap(ctx context.Context, h Home) error {
	return h.control(ctx, http.MethodPost, "/kubelet/repair-bootstrap", nil, nil)
}

// RestartKarpenter restarts the Karpenter controller and waits until it is ready again, as
// a rollout restart of its Deployment would: its in-memory caches (SSM parameters, unavailable
// offerings, instance types) start empty.
func RestartKarpenter(ctx context.Context, h Home) error {
	return h.control(ctx, http.MethodPost, "/karpenter/restart", nil, nil)
}
