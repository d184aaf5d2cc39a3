package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/existing"
)

// ClusterName is the kind cluster the lab creates and owns.
const ClusterName = "karplab"

// ErrNoDockerEngine means the docker client may be installed but no engine answers it.
var ErrNoDockerEngine = errors.New("the kind backend needs a running Docker engine")

// Options configure the kind backend.
type Options struct {
	// NodeImage overrides kind's default node image (kindest/node:...).
	NodeImage string
	// WaitForReady bounds how long Start waits for the control-plane node to be Ready.
	WaitForReady time.Duration
	// Docker is the docker command to probe the engine with; empty means "docker".
	Docker string
	// Recorded is passed to the existing backend's checks (existing.Options.Recorded).
	Recorded func(resource, name, uid string) bool
}

// Backend is the kind backend. It implements backend.Backend.
type Backend struct {
	opts     Options
	provider *kindcluster.Provider
	kubecfg  string
	attached *existing.Backend // the cluster once made: the existing backend does the rest
}

var _ backend.Backend = (*Backend)(nil)

// New returns a kind backend; nothing is created until Start.
func New(opts Options) *Backend {
	if opts.Docker == "" {
		opts.Docker = "docker"
	}
	if opts.WaitForReady == 0 {
		opts.WaitForReady = 2 * time.Minute
	}
	return &Backend{opts: opts}
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return "kind" }

// CheckEngine returns nil when a Docker engine answers, and ErrNoDockerEngine (wrapped with
// what docker said) otherwise. kind's own detection only looks for the docker client.
func CheckEngine(ctx context.Context, docker string) error {
	if docker == "" {
		docker = "docker"
	}
	if _, err := exec.LookPath(docker); err != nil {
		return fmt.Errorf("%w: %q is not on PATH; install Docker or use --backend embedded", ErrNoDockerEngine, docker)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, docker, "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s; start the Docker engine or use --backend embedded", ErrNoDockerEngine, lastLine(out))
	}
	return nil
}

// ErrPrivilegedRefused means the engine will not start a privileged container, and every
// kind node is one (kind's docker provisioner always runs its nodes --privileged).
var ErrPrivilegedRefused = errors.New("the Docker engine refuses privileged containers, and every kind node is one")

// probeImage is an empty image CheckPrivileged imports, runs and removes: nothing is pulled.
const probeImage = "karplab/privileged-probe:empty"

// CheckPrivileged starts a privileged container as kind does for each node, from an empty
// image imported here, and returns ErrPrivilegedRefused with what the engine said when it
// refuses. The image holds no program, so an engine that allows it answers that /probe does
// not exist. Nothing is left behind.
func CheckPrivileged(ctx context.Context, docker string) error {
	if docker == "" {
		docker = "docker"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	imp := exec.CommandContext(ctx, docker, "import", "-", probeImage)
	imp.Stdin = bytes.NewReader(make([]byte, 1024)) // an empty tar archive: two zero blocks
	if out, err := imp.CombinedOutput(); err != nil {
		return fmt.Errorf("importing an empty probe image (docker import): %s: %w", lastLine(out), err)
	}
	defer exec.Command(docker, "rmi", probeImage).Run() //nolint:errcheck // best effort: an empty image
	out, err := exec.CommandContext(ctx, docker, "run", "--rm", "--privileged", "--network", "none", probeImage, "/probe").CombinedOutput()
	if err == nil || (strings.Contains(string(out), "/probe") && strings.Contains(string(out), "no such file or directory")) {
		return nil
	}
	return fmt.Errorf("%w: %s; use --backend embedded", ErrPrivilegedRefused, lastLine(out))
}

// lastLine is the last non-empty line of a command's output, without docker's usage hint.
func lastLine(out []byte) string {
	var last string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Run 'docker") {
			last = l
		}
	}
	return last
}

// Start implements backend.Backend: it creates the kind cluster, or reuses it when it exists.
func (b *Backend) Start(ctx context.Context, kubeconfigPath string, status io.Writer) error {
	if err := CheckEngine(ctx, b.opts.Docker); err != nil {
		return err
	}
	if err := CheckPrivileged(ctx, b.opts.Docker); err != nil {
		return err
	}
	b.provider = kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	b.kubecfg = kubeconfigPath

	clusters, err := b.provider.List()
	if err != nil {
		return fmt.Errorf("listing kind clusters: %w", err)
	}
	if contains(clusters, ClusterName) {
		fmt.Fprintf(status, "Reusing kind cluster %q\n", ClusterName)
		if err := b.provider.ExportKubeConfig(ClusterName, kubeconfigPath, false); err != nil {
			return fmt.Errorf("exporting kubeconfig of kind cluster %q: %w", ClusterName, err)
		}
	} else {
		fmt.Fprintf(status, "Creating kind cluster %q (this pulls the node image the first time)\n", ClusterName)
		opts := []kindcluster.CreateOption{
			kindcluster.CreateWithKubeconfigPath(kubeconfigPath),
			kindcluster.CreateWithWaitForReady(b.opts.WaitForReady),
			kindcluster.CreateWithDisplayUsage(false),
			kindcluster.CreateWithDisplaySalutation(false),
		}
		if b.opts.NodeImage != "" {
			opts = append(opts, kindcluster.CreateWithNodeImage(b.opts.NodeImage))
		}
		if err := b.provider.Create(ClusterName, opts...); err != nil {
			return fmt.Errorf("creating kind cluster %q: %w", ClusterName, err)
		}
	}
	if err := b.keepControlPlaneTainted(ctx, kubeconfigPath, status); err != nil {
		return err
	}
	// From here on a kind cluster is any existing cluster: the same checks and kubeconfig.
	attached := existing.New(existing.Options{Kubeconfig: kubeconfigPath, Context: "kind-" + ClusterName, Recorded: b.opts.Recorded})
	if err := attached.Start(ctx, kubeconfigPath, status); err != nil {
		return err
	}
	b.attached = attached
	return nil
}

// keepControlPlaneTainted puts back the control-plane taint kind removes from a cluster
// without workers: EKS runs no workload on its control plane, and the lab's workloads must
// wait for Karpenter's machines instead of landing on kind's node.
func (b *Backend) keepControlPlaneTainted(ctx context.Context, kubeconfigPath string, status io.Writer) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", kubeconfigPath, err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil {
		return fmt.Errorf("listing kind's nodes: %w", err)
	}
	for _, n := range nodes.Items {
		if slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == controlPlaneTaint.Key }) {
			continue
		}
		n.Spec.Taints = append(n.Spec.Taints, controlPlaneTaint)
		if _, err := kube.CoreV1().Nodes().Update(ctx, &n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("tainting kind's node %s: %w", n.Name, err)
		}
		fmt.Fprintf(status, "Tainted kind's node %s %s:%s\n", n.Name, controlPlaneTaint.Key, controlPlaneTaint.Effect)
	}
	return nil
}

var controlPlaneTaint = corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}

// RESTConfig implements backend.Backend.
func (b *Backend) RESTConfig() *rest.Config {
	if b.attached == nil {
		return nil
	}
	return b.attached.RESTConfig()
}

// Components implements backend.Backend: the kind node container and its API server.
func (b *Backend) Components(ctx context.Context) []backend.Component {
	if b.provider == nil || b.attached == nil {
		return []backend.Component{{Name: "kind", Detail: "not started"}}
	}
	nodes, err := b.provider.ListNodes(ClusterName)
	node := backend.Component{Name: "kind node", Healthy: err == nil && len(nodes) > 0}
	switch {
	case err != nil:
		node.Detail = err.Error()
	case len(nodes) == 0:
		node.Detail = "no node containers"
	default:
		node.Address = nodes[0].String()
	}
	return append([]backend.Component{node}, b.attached.Components(ctx)...)
}

// Stop implements backend.Backend. kind cannot stop a cluster, only delete it, so Stop deletes
// the kind cluster; the lab's EC2 state lives outside it and is kept.
func (b *Backend) Stop(ctx context.Context) error {
	if b.provider == nil {
		return nil
	}
	if err := b.provider.Delete(ClusterName, b.kubecfg); err != nil {
		return fmt.Errorf("deleting kind cluster %q: %w", ClusterName, err)
	}
	b.provider, b.attached = nil, nil
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
