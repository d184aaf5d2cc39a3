package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/controlplane"
)

// embedded adapts cluster/controlplane (etcd, kube-apiserver, kube-scheduler and
// kube-controller-manager in this process) to backend.Backend.
type embedded struct {
	dataDir string
	logger  *slog.Logger
	cp      *controlplane.ControlPlane
	// hold keeps the scheduler and the controller manager stopped until release (a replay).
	hold bool
}

func newEmbedded(dataDir string, logger *slog.Logger, hold bool) *embedded {
	return &embedded{dataDir: dataDir, logger: logger, hold: hold}
}

// release starts the scheduler and the controller manager that hold kept stopped.
func (e *embedded) release(ctx context.Context) error {
	if e.cp == nil {
		return nil
	}
	return e.cp.ReleaseControllers(ctx)
}

func (e *embedded) Name() string { return "embedded" }

func (e *embedded) Start(ctx context.Context, kubeconfigPath string, status io.Writer) error {
	cp, err := controlplane.Start(ctx, controlplane.Config{DataDir: e.dataDir, Logger: e.logger, HoldControllers: e.hold})
	if err != nil {
		return err
	}
	if err := cp.WriteKubeconfig(kubeconfigPath); err != nil {
		cp.Stop()
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	e.cp = cp
	return nil
}

func (e *embedded) RESTConfig() *rest.Config {
	if e.cp == nil {
		return nil
	}
	return e.cp.RESTConfig()
}

func (e *embedded) Components(ctx context.Context) []backend.Component {
	if e.cp == nil {
		return nil
	}
	var out []backend.Component
	for _, c := range e.cp.Components(ctx) {
		out = append(out, backend.Component{Name: c.Name, Address: c.Address, Healthy: c.Healthy, Detail: c.Detail})
	}
	return out
}

func (e *embedded) Stop(ctx context.Context) error {
	if e.cp == nil {
		return nil
	}
	return e.cp.Stop()
}
