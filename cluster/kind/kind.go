package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/existing"
	"github.com/karplab/karplab/cluster/kind/engine"
)

// ClusterName is the kind cluster the lab creates and owns.
const ClusterName = "karplab"

// nodeName is the container of the cluster's one node, as kind names it.
const nodeName = ClusterName + "-control-plane"

// Options configure the kind backend.
type Options struct {
	// Home is the lab home: the backend keeps its record there (kind.json), and podman's
	// containers.conf when the lab needs one of its own.
	Home string
	// NodeImage overrides the node image (kind's default when the engine has it, else the
	// one nodeimage builds).
	NodeImage string
	// WaitForReady bounds how long Start waits for the control-plane node to be Ready.
	WaitForReady time.Duration
	// Recorded is passed to the existing backend's checks (existing.Options.Recorded).
	Recorded func(resource, name, uid string) bool
}

// Backend is the kind backend. It implements backend.Backend.
type Backend struct {
	opts     Options
	engine   *engine.Engine
	provider *kindcluster.Provider
	kubecfg  string
	attached *existing.Backend // the cluster once made: the existing backend does the rest
}

var _ backend.Backend = (*Backend)(nil)

// New returns a kind backend; nothing is created until Start.
func New(opts Options) *Backend {
	if opts.WaitForReady == 0 {
		opts.WaitForReady = 3 * time.Minute
	}
	return &Backend{opts: opts}
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return "kind" }

// Start implements backend.Backend: it creates the kind cluster, or reuses the one this lab
// made before. Every refusal (no engine, no privileged container, a cluster of someone
// else's, the API port taken, a failed image build) comes before anything is created.
func (b *Backend) Start(ctx context.Context, kubeconfigPath string, status io.Writer) error {
	p, err := Prepare(ctx, b.opts, status)
	if err != nil {
		return err
	}
	b.engine, b.kubecfg = p.Engine, kubeconfigPath
	b.provider = kindcluster.NewProvider(p.Engine.ProviderOption(), kindcluster.ProviderWithLogger(statusLogger{status}))
	if p.Reuse {
		fmt.Fprintf(status, "Reusing the kind cluster %q this lab created (%s container %s)\n", ClusterName, p.Engine.Label(), nodeName)
		if err := b.provider.ExportKubeConfig(ClusterName, kubeconfigPath, false); err != nil {
			return fmt.Errorf("exporting the kubeconfig of kind cluster %q: %w", ClusterName, err)
		}
	} else if err := b.create(ctx, p, kubeconfigPath, status); err != nil {
		return err
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

// create makes the cluster with p's image and configuration and records it as the lab's.
func (b *Backend) create(ctx context.Context, p *Prepared, kubeconfigPath string, status io.Writer) error {
	fmt.Fprintf(status, "Creating kind cluster %q on %s from %s (API server on 127.0.0.1:%d)\n", ClusterName, p.Engine.Label(), p.Image, p.APIPort)
	err := b.provider.Create(ClusterName,
		kindcluster.CreateWithV1Alpha4Config(p.Config),
		kindcluster.CreateWithNodeImage(p.Image),
		kindcluster.CreateWithKubeconfigPath(kubeconfigPath),
		kindcluster.CreateWithWaitForReady(b.opts.WaitForReady),
		kindcluster.CreateWithDisplayUsage(false),
		kindcluster.CreateWithDisplaySalutation(false),
	)
	if err != nil {
		// kind deletes what it made when Create fails.
		if re := kindexec.RunErrorForError(err); re != nil {
			return fmt.Errorf("creating kind cluster %q: %v: %s", ClusterName, err, engine.LastLines(string(re.Output), 3))
		}
		return fmt.Errorf("creating kind cluster %q: %w", ClusterName, err)
	}
	id, err := p.Engine.Run(ctx, nil, "inspect", "--format", "{{.Id}}", nodeName)
	if err != nil {
		return errors.Join(fmt.Errorf("reading the id of kind's node: %w", err), b.provider.Delete(ClusterName, kubeconfigPath))
	}
	return writeRecord(b.opts.Home, record{Engine: p.Engine.Name, Node: trimID(id), APIPort: p.APIPort, Image: p.Image})
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
		// The node controller and kubelet update a new node too; a conflict means read it again.
		tainted := false
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if slices.ContainsFunc(cur.Spec.Taints, func(t corev1.Taint) bool { return t.Key == controlPlaneTaint.Key }) {
				return nil
			}
			cur.Spec.Taints = append(cur.Spec.Taints, controlPlaneTaint)
			_, err = kube.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
			tainted = err == nil
			return err
		})
		if err != nil {
			return fmt.Errorf("tainting kind's node %s: %w", n.Name, err)
		}
		if tainted {
			fmt.Fprintf(status, "Tainted kind's node %s %s:%s\n", n.Name, controlPlaneTaint.Key, controlPlaneTaint.Effect)
		}
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
		node.Detail = b.engine.Label() + " container"
	}
	return append([]backend.Component{node}, b.attached.Components(ctx)...)
}

// Stop implements backend.Backend. kind cannot stop a cluster, only delete it, so Stop deletes
// the kind cluster; the lab's EC2 state lives outside it and is kept, and so is the API port
// for the next start.
func (b *Backend) Stop(ctx context.Context) error {
	if b.provider == nil {
		return nil
	}
	if err := b.provider.Delete(ClusterName, b.kubecfg); err != nil {
		return fmt.Errorf("deleting kind cluster %q: %w", ClusterName, err)
	}
	b.provider, b.attached = nil, nil
	rec, _ := readRecord(b.opts.Home)
	rec.Node = ""
	return writeRecord(b.opts.Home, rec)
}
