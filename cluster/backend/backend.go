// Package backend defines the small interface the lab's Kubernetes backends implement (the
// embedded control plane and kind), sized like kind's own node Provider. It is a leaf package:
// backends import it, package cluster picks one by name.
package backend

import (
	"context"
	"io"

	"k8s.io/client-go/rest"
)

// Backend brings up the Kubernetes API the lab runs against.
type Backend interface {
	// Name is the backend's name as `karplab start --backend` spells it.
	Name() string
	// Start brings the cluster up (reusing the data of an earlier run when there is one), writes
	// the admin kubeconfig to kubeconfigPath, and returns once the API server answers /readyz.
	// Progress lines for the user go to status. It fails at once, with a message that says what
	// is missing, when the host cannot run this backend.
	Start(ctx context.Context, kubeconfigPath string, status io.Writer) error
	// RESTConfig is the admin client configuration. Valid only after Start succeeded.
	RESTConfig() *rest.Config
	// Components reports each component of the cluster with its address and health.
	Components(ctx context.Context) []Component
	// Stop stops the cluster and frees its processes and ports. Data that Start reuses is kept
	// where the backend can keep it (the embedded backend keeps etcd; kind deletes its node
	// container, since kind cannot stop a cluster). Calling it twice is safe.
	Stop(ctx context.Context) error
}

// Component is one part of the running lab as `karplab status` shows it.
type Component struct {
	Name    string `json:"name"`
	Address string `json:"address,omitempty"`
	Healthy bool   `json:"healthy"`
	Detail  string `json:"detail,omitempty"`
}
