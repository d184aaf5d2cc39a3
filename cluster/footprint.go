package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/installs"
)

// The lab's footprint on a cluster: the baseline (what was there before the lab first
// started on it, which reset and uninstall never touch) and the install record (what lab
// processes created, which uninstall removes). Both live in the home and belong to one
// cluster, known by its kube-system namespace's UID.

// InstallRecord is the record of every object the lab's processes created (installs package).
func (h Home) InstallRecord() string { return h.path("installed.jsonl") }

// BaselineFile is what the cluster held before the lab first started on it.
func (h Home) BaselineFile() string { return h.path("cluster-baseline.json") }

// baseline is the cluster's own objects among the kinds a reset deletes.
type baseline struct {
	Backend string    `json:"backend"`
	Server  string    `json:"server"`
	Cluster types.UID `json:"cluster"` // kube-system's UID
	TakenAt time.Time `json:"takenAt"`
	// UIDs of the cluster's namespaces, nodes, and the workloads and pods of its default
	// namespace.
	Namespaces []types.UID `json:"namespaces"`
	Nodes      []types.UID `json:"nodes"`
	Default    []types.UID `json:"default"`
}

// keeps reports whether uid is one of the cluster's own objects.
func (b *baseline) keeps(uid types.UID) bool {
	if b == nil {
		return false
	}
	for _, list := range [][]types.UID{b.Namespaces, b.Nodes, b.Default} {
		for _, u := range list {
			if u == uid {
				return true
			}
		}
	}
	return false
}

// clusterUID identifies a cluster by its kube-system namespace.
func clusterUID(ctx context.Context, kube kubernetes.Interface) (types.UID, error) {
	ns, err := kube.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading namespace kube-system: %w", err)
	}
	return ns.UID, nil
}

// ensureBaseline returns the home's baseline for the cluster cfg reaches, taking it now when
// the home has none. A baseline of another cluster means the home still holds a lab there.
func ensureBaseline(ctx context.Context, h Home, backendName string, cfg *rest.Config) (*baseline, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	uid, err := clusterUID(ctx, kube)
	if err != nil {
		return nil, err
	}
	if b, err := readBaseline(h); err != nil {
		return nil, err
	} else if b != nil {
		switch {
		case b.Cluster == uid:
			return b, nil
		case b.Backend == "kind" && backendName == "kind":
			// kind's stop deletes the cluster: each start makes a new one, the lab's own again.
		default:
			return nil, fmt.Errorf("%s holds a lab on another cluster (%s): run karplab stop --uninstall there first, or use another KARPLAB_HOME", h, b.Server)
		}
	}
	b := &baseline{Backend: backendName, Server: cfg.Host, Cluster: uid, TakenAt: time.Now().UTC()}
	nss, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	for _, ns := range nss.Items {
		b.Namespaces = append(b.Namespaces, ns.UID)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		b.Nodes = append(b.Nodes, n.UID)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	objs, err := defaultWorkloads(ctx, dyn)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		b.Default = append(b.Default, o.uid)
	}
	return b, writeJSONAtomic(h.BaselineFile(), b)
}

func readBaseline(h Home) (*baseline, error) {
	raw, err := os.ReadFile(h.BaselineFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var b baseline
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("reading %s: %w", h.BaselineFile(), err)
	}
	return &b, nil
}

// recordedBy returns the lookup existing.Check uses: whether the home's record holds the object.
func (h Home) recordedBy() func(resource, name, uid string) bool {
	entries, _ := installs.Read(h.InstallRecord())
	return func(resource, name, uid string) bool {
		for _, e := range entries {
			if e.Resource == resource && e.Name == name && e.UID == uid {
				return true
			}
		}
		return false
	}
}

// recordedNodes are the names of the Nodes lab processes created (with their UIDs).
func (h Home) recordedNodes() map[string]string {
	entries, _ := installs.Read(h.InstallRecord())
	out := map[string]string{}
	for _, e := range entries {
		if e.Group == "" && e.Resource == "nodes" {
			out[e.Name] = e.UID
		}
	}
	return out
}
