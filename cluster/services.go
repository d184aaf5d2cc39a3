package cluster

import (
	"context"
	"fmt"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/kind"
)

// newBackend returns the Kubernetes backend the config names.
func newBackend(cfg DaemonConfig) (backend.Backend, error) {
	switch cfg.Backend {
	case "kind":
		return kind.New(kind.Options{}), nil
	case "embedded":
		return newEmbedded(cfg), nil
	default:
		return nil, Preflight(context.Background(), cfg.Backend, cfg.Provider)
	}
}

// newServices lists the lab's parts in start order.
func newServices(ctx context.Context, d *daemon) ([]*service, error) {
	cfg := d.cfg
	be, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	kube := &service{
		name: "Kubernetes control plane (" + be.Name() + ")",
		start: func(ctx context.Context) (string, error) {
			if err := be.Start(ctx, cfg.Home.Kubeconfig(), cfg.Status); err != nil {
				return "", err
			}
			host := be.RESTConfig().Host
			d.setEndpoint(func(s *State) { s.APIServer = host })
			return host, nil
		},
		stop:       be.Stop,
		components: be.Components,
	}
	return []*service{kube}, nil
}

// Preflight checks the user's choices before anything starts, so a bad flag or a host that
// cannot run the backend fails at once with the fix in the message.
func Preflight(ctx context.Context, backendName, provider string) error {
	switch provider {
	case "", "ec2", "kwok":
	default:
		return fmt.Errorf("unknown provider %q: use --provider ec2 (the default, machines from the EC2 emulator) or --provider kwok", provider)
	}
	switch backendName {
	case "", "embedded":
		return nil
	case "kind":
		return kind.CheckEngine(ctx, "")
	default:
		return fmt.Errorf("unknown backend %q: use --backend embedded (the default) or --backend kind", backendName)
	}
}
