package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/karplab/karplab/cluster/backend"
)

// Phase is where the daemon is in its life.
type Phase string

const (
	PhaseStarting Phase = "starting"
	PhaseReady    Phase = "ready"
	PhaseFailed   Phase = "failed"
	PhaseStopping Phase = "stopping"
)

// Step is one finished start-up step, shown to the user as progress.
type Step struct {
	Name   string        `json:"name"`
	Took   time.Duration `json:"took"`
	Detail string        `json:"detail,omitempty"`
}

// State is what the daemon publishes in $KARPLAB_HOME/daemon.json for the CLI: how far start-up
// got, and where each endpoint is. It is rewritten atomically at every change.
type State struct {
	PID         int       `json:"pid"`
	Phase       Phase     `json:"phase"`
	Error       string    `json:"error,omitempty"`
	Backend     string    `json:"backend"`
	Provider    string    `json:"provider"`
	StartedAt   time.Time `json:"startedAt"`
	Steps       []Step    `json:"steps,omitempty"`
	Kubeconfig  string    `json:"kubeconfig,omitempty"`
	APIServer   string    `json:"apiServer,omitempty"`
	EC2Endpoint string    `json:"ec2Endpoint,omitempty"`
	// ControlURL is the daemon's own loopback HTTP endpoint (live status).
	ControlURL string `json:"controlURL,omitempty"`
}

// Status is the live view `karplab status` prints.
type Status struct {
	State      State               `json:"state"`
	Components []backend.Component `json:"components"`
}

// writeJSONAtomic writes v to path through a temporary file and a rename, so a reader never
// sees half a file and a crash never leaves one.
func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadState reads the daemon's published state. It returns an error wrapping fs.ErrNotExist
// when no daemon has written one.
func (h Home) ReadState() (*State, error) {
	b, err := os.ReadFile(h.StateFile())
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("reading %s: %w", h.StateFile(), err)
	}
	return &s, nil
}

// ErrNotRunning means no lab daemon is running for this home.
var ErrNotRunning = errors.New("the lab is not running (start it with: karplab start)")
