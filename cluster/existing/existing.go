package existing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karplab/karplab/cluster/backend"
)

// Options name the cluster.
type Options struct {
	// Kubeconfig is the cluster's kubeconfig file; empty means $KUBECONFIG or ~/.kube/config,
	// as kubectl reads it.
	Kubeconfig string
	// Context is the kubeconfig context; empty means its current context.
	Context string
	// Recorded says whether the lab itself created the object (in its install record), so
	// Karpenter's CRDs from the lab's own earlier start are not taken for another Karpenter.
	Recorded func(resource, name, uid string) bool
	// Checked says the caller has run Check on this cluster just before (the daemon's
	// preflight, or the CLI's that started it): Start does not check again, it only asks
	// the cluster's version.
	Checked bool
}

// Backend is the existing-cluster backend. It implements backend.Backend.
type Backend struct {
	opts Options
	rest *rest.Config
}

var _ backend.Backend = (*Backend)(nil)

// New returns the backend; nothing is checked until Start.
func New(opts Options) *Backend { return &Backend{opts: opts} }

// Name implements backend.Backend.
func (b *Backend) Name() string { return "existing" }

// Start implements backend.Backend: it checks the cluster and writes the lab's kubeconfig
// (the chosen context alone, credentials inlined) to kubeconfigPath.
func (b *Backend) Start(ctx context.Context, kubeconfigPath string, status io.Writer) error {
	cfg, raw, err := Load(b.opts.Kubeconfig, b.opts.Context)
	if err != nil {
		return err
	}
	version, err := b.check(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(status, "Using the cluster at %s (context %q, Kubernetes %s)\n", cfg.Host, raw.CurrentContext, version)
	if open := untaintedNodes(ctx, cfg); len(open) > 0 {
		fmt.Fprintf(status, "Note: the cluster's nodes %s take any pod (no NoSchedule taint): the labs' workloads may run there instead of waiting for Karpenter's machines; taint them for the lab (kubectl taint nodes NAME dedicated=system:NoSchedule)\n", strings.Join(open, ", "))
	}
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		return fmt.Errorf("inlining the kubeconfig's credentials: %w", err)
	}
	if err := clientcmd.WriteToFile(raw, kubeconfigPath); err != nil {
		return fmt.Errorf("writing the lab's kubeconfig: %w", err)
	}
	if err := os.Chmod(kubeconfigPath, 0o600); err != nil {
		return err
	}
	// A reset or an install makes dozens of calls at once; at client-go's default of 5 a
	// second (a kubeconfig cannot set it) each waited about 200 ms on its own limiter.
	// kubectl's discovery asks as hard: 50 a second, bursts of 100.
	cfg.QPS, cfg.Burst = 50, 100
	b.rest = cfg
	return nil
}

// check runs Check, unless the caller has (Options.Checked); it returns the cluster's version.
func (b *Backend) check(ctx context.Context, cfg *rest.Config) (string, error) {
	if !b.opts.Checked {
		return Check(ctx, cfg, b.opts.Recorded)
	}
	_, _, v, err := connect(cfg)
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// RESTConfig implements backend.Backend.
func (b *Backend) RESTConfig() *rest.Config { return b.rest }

// Components implements backend.Backend.
func (b *Backend) Components(ctx context.Context) []backend.Component {
	if b.rest == nil {
		return []backend.Component{{Name: "kube-apiserver", Detail: "not started"}}
	}
	return []backend.Component{backend.APIServerComponent(ctx, b.rest)}
}

// Stop implements backend.Backend: the cluster is not the lab's, so it keeps running.
func (b *Backend) Stop(context.Context) error {
	b.rest = nil
	return nil
}

// untaintedNodes are the cluster's Ready nodes that any pod may land on.
func untaintedNodes(ctx context.Context, cfg *rest.Config) []string {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var open []string
	for _, n := range nodes.Items {
		blocked := n.Spec.Unschedulable || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		})
		if !blocked {
			open = append(open, n.Name)
		}
	}
	return open
}

// Load reads the kubeconfig (kubectl's rules when path is empty) and returns the client
// configuration of context (its current one when empty) and the kubeconfig reduced to that
// context.
func Load(path, context string) (*rest.Config, clientcmdapi.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	name := "$KUBECONFIG or ~/.kube/config"
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return nil, clientcmdapi.Config{}, fmt.Errorf("--kubeconfig %s: %w; name the kubeconfig of the cluster the lab should use", path, errors.Unwrap(err))
		}
		rules.ExplicitPath, name = path, path
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, clientcmdapi.Config{}, fmt.Errorf("reading kubeconfig %s: %s", name, oneLine(err))
	}
	if context == "" {
		context = raw.CurrentContext
	}
	if context == "" {
		return nil, clientcmdapi.Config{}, fmt.Errorf("kubeconfig %s has no current context: name one with --context (it has: %s)", name, contextNames(raw))
	}
	if raw.Contexts[context] == nil {
		return nil, clientcmdapi.Config{}, fmt.Errorf("--context %q is not in kubeconfig %s (it has: %s)", context, name, contextNames(raw))
	}
	raw.CurrentContext = context
	if err := clientcmdapi.MinifyConfig(raw); err != nil {
		return nil, clientcmdapi.Config{}, fmt.Errorf("kubeconfig %s, context %q: %s", name, context, oneLine(err))
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, clientcmdapi.Config{}, fmt.Errorf("kubeconfig %s, context %q: %s", name, context, oneLine(err))
	}
	return cfg, *raw, nil
}

func contextNames(c *clientcmdapi.Config) string {
	var names []string
	for n := range c.Contexts {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "no contexts"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// oneLine keeps an error to the single line the CLI prints.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
