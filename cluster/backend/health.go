package backend

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerComponent probes /readyz of the API server cfg points at.
func APIServerComponent(ctx context.Context, cfg *rest.Config) Component {
	c := Component{Name: "kube-apiserver", Address: cfg.Host}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	c.Healthy = string(body) == "ok"
	if !c.Healthy {
		c.Detail = string(body)
	}
	return c
}
