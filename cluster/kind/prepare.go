package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/kind/nodeimage"
)

// ErrLeftoverCluster means a kind cluster named karplab exists that this lab did not create.
var ErrLeftoverCluster = errors.New("a kind cluster named " + ClusterName + " already exists, and this lab did not create it")

// ErrAPIPortInUse means the port the lab publishes kind's API server on is taken.
var ErrAPIPortInUse = errors.New("the kind cluster's API port is in use")

// ErrNoLibModules means the host lacks /lib/modules, which kind mounts into every node.
var ErrNoLibModules = errors.New("kind mounts the host's /lib/modules into its node, and this host has no /lib/modules")

// Prepared is what Start needs to create or reuse the cluster.
type Prepared struct {
	Engine  *engine.Engine
	Reuse   bool // the cluster exists and this lab made it
	APIPort int
	Image   string
	Config  *v1alpha4.Cluster
}

// Check runs the host's checks: an engine that runs kind's privileged node (its notes go
// to status), /lib/modules, no cluster of someone else's named karplab, and a free API
// port. The engine's environment (podman's CONTAINERS_CONF, KIND_EXPERIMENTAL_PROVIDER) is
// exported to this process, so kind's commands and the daemon it starts use the same.
func Check(ctx context.Context, opts Options, status io.Writer) (*Prepared, error) {
	e, err := engine.Choose(ctx, engine.Options{ContainersConf: filepath.Join(opts.Home, "containers.conf")})
	if err != nil {
		return nil, err
	}
	for _, n := range e.Notes {
		fmt.Fprintln(status, n)
	}
	e.Env = append(e.Env, engine.ProviderEnv+"="+e.Name)
	if err := e.Export(); err != nil {
		return nil, err
	}
	if _, err := os.Stat("/lib/modules"); err != nil {
		return nil, fmt.Errorf("%w: create it (mkdir -p /lib/modules; an empty directory will do) and start again, or use --backend embedded", ErrNoLibModules)
	}
	p := &Prepared{Engine: e}
	rec, err := readRecord(opts.Home)
	if err != nil {
		return nil, err
	}
	clusters, err := kindcluster.NewProvider(e.ProviderOption()).List()
	if err != nil {
		return nil, fmt.Errorf("listing kind clusters on %s: %w", e.Label(), err)
	}
	if slices.Contains(clusters, ClusterName) {
		id, _ := e.Run(ctx, nil, "inspect", "--format", "{{.Id}}", nodeName)
		if rec.Node == "" || rec.Node != trimID(id) {
			return nil, fmt.Errorf("%w (%s container %s): the lab refuses to take it over; delete it (KIND_EXPERIMENTAL_PROVIDER=%s kind delete cluster --name %s) or stop the lab that made it",
				ErrLeftoverCluster, e.Label(), nodeName, e.Name, ClusterName)
		}
		running, _ := e.Run(ctx, nil, "inspect", "--format", "{{.State.Running}}", nodeName)
		if strings.TrimSpace(running) == "true" {
			p.Reuse, p.APIPort = true, rec.APIPort
			return p, nil
		}
		// The lab's own, stopped (a reboot): kind cannot start a cluster again, so it goes.
		fmt.Fprintf(status, "The kind cluster %q this lab created is not running (%s container %s): deleting it to create it anew\n", ClusterName, e.Label(), nodeName)
		// The lab's kubeconfig (cluster.Home's), so kind leaves ~/.kube/config alone.
		if err := kindcluster.NewProvider(e.ProviderOption()).Delete(ClusterName, filepath.Join(opts.Home, "kubeconfig")); err != nil {
			return nil, fmt.Errorf("deleting the lab's stopped kind cluster %q: %w", ClusterName, err)
		}
	}
	if p.APIPort, err = apiPort(opts.Home, rec.APIPort); err != nil {
		return nil, err
	}
	return p, nil
}

// Prepare is Check, then the node image (built when the engine has neither kind's default
// nor the lab's, with progress to status) and the cluster's kind configuration.
func Prepare(ctx context.Context, opts Options, status io.Writer) (*Prepared, error) {
	p, err := Check(ctx, opts, status)
	if err != nil || p.Reuse {
		return p, err
	}
	built := false
	switch {
	case opts.NodeImage != "":
		p.Image = opts.NodeImage
	case p.Engine.ImageExists(ctx, qualified(defaults.Image)):
		p.Image = defaults.Image
	default:
		out, perr := p.Engine.Run(ctx, nil, "pull", qualified(defaults.Image))
		if perr == nil {
			p.Image = defaults.Image
			break
		}
		fmt.Fprintf(status, "kind's node image %s cannot be pulled (%s): the lab uses its own, built offline\n", defaults.Image, engine.LastLines(out, 1))
		if p.Image, err = nodeimage.Ensure(ctx, nodeimage.Options{Engine: p.Engine, Status: status}); err != nil {
			return nil, err
		}
		built = true
	}
	p.Config = clusterConfig(p.APIPort, built)
	return p, nil
}

// qualified is image with Docker Hub's domain when it names none, as kind's podman provider
// pulls it (podman has no default registry for short names).
func qualified(image string) string {
	first, _, found := strings.Cut(image, "/")
	if !found || strings.ContainsAny(first, ".:") || first == "localhost" {
		return image
	}
	return "docker.io/" + image
}

// apiPort is the port the API server is published on: the one the lab used before (so the
// kubeconfig stays the same across starts), else a free one. It fails when that port is
// taken, before anything is created.
func apiPort(home string, port int) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return 0, fmt.Errorf("%w: another process listens on 127.0.0.1:%d, where the lab has published kind's API server since its first start on kind; free it, or delete %s to let the lab pick another port",
			ErrAPIPortInUse, port, recordPath(home))
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
