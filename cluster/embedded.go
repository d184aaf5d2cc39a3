package cluster

import (
	"context"
	"errors"
	"io"

	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/backend"
)

// embedded adapts cluster/controlplane to backend.Backend.
type embedded struct {
	cfg DaemonConfig
}

func newEmbedded(cfg DaemonConfig) *embedded { return &embedded{cfg: cfg} }

func (e *embedded) Name() string { return "embedded" }

func (e *embedded) Start(ctx context.Context, kubeconfigPath string, status io.Writer) error {
	return errors.New("the embedded control plane is not wired yet")
}

func (e *embedded) RESTConfig() *rest.Config { return nil }

func (e *embedded) Components(ctx context.Context) []backend.Component { return nil }

func (e *embedded) Stop(ctx context.Context) error { return nil }
