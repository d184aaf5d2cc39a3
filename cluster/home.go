package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// Home is the lab's state directory ($KARPLAB_HOME, default ~/.karplab) and the names of
// what lives in it. Every process of the lab (CLI, daemon, Karpenter child) agrees on these.
type Home string

// DefaultHome returns $KARPLAB_HOME, or ~/.karplab when it is unset.
func DefaultHome() (Home, error) {
	if h := os.Getenv("KARPLAB_HOME"); h != "" {
		abs, err := filepath.Abs(h)
		if err != nil {
			return "", fmt.Errorf("resolving KARPLAB_HOME: %w", err)
		}
		return Home(abs), nil
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home directory (set KARPLAB_HOME): %w", err)
	}
	return Home(filepath.Join(dir, ".karplab")), nil
}

// Ensure creates the directory (0700: it holds keys and credentials).
func (h Home) Ensure() error {
	if err := os.MkdirAll(string(h), 0o700); err != nil {
		return fmt.Errorf("creating lab home %s: %w", h, err)
	}
	return nil
}

func (h Home) path(name string) string { return filepath.Join(string(h), name) }

// Kubeconfig is the admin kubeconfig of the lab's cluster.
func (h Home) Kubeconfig() string { return h.path("kubeconfig") }

// EnvFile holds shell exports (KUBECONFIG, AWS_ENDPOINT_URL, AWS_REGION, dummy credentials).
func (h Home) EnvFile() string { return h.path("env") }

// PIDFile holds the daemon's process ID while it runs.
func (h Home) PIDFile() string { return h.path("daemon.pid") }

// DaemonLog is the daemon's log (stderr of the background process).
func (h Home) DaemonLog() string { return h.path("daemon.log") }

// StateFile records the running daemon's endpoints and backend (JSON).
func (h Home) StateFile() string { return h.path("daemon.json") }

// ControlPlaneDir is the embedded backend's directory: etcd data, PKI, component kubeconfigs.
func (h Home) ControlPlaneDir() string { return h.path("controlplane") }

// EC2Dir is the EC2 emulator's state directory.
func (h Home) EC2Dir() string { return h.path("ec2") }

// KarpenterLog is the supervised Karpenter process's log.
func (h Home) KarpenterLog() string { return h.path("karpenter.log") }

// History is the recorder's JSON-lines history of Kubernetes object changes.
func (h Home) History() string { return h.path("k8s-history.jsonl") }
