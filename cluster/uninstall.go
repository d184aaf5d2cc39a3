package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/cluster/installs"
	"github.com/karplab/karplab/cluster/karpenter"
)

// Uninstall removes the lab from the cluster it ran on, once the daemon has stopped: what a
// lab left (workload namespaces, NodePools, NodeClaims, lab nodes), then every object lab
// processes created (the install record: CRDs, the lab's namespace, kube-dns if the lab made
// it, the metrics API, Events about the lab's objects), then the home's record of the
// cluster. The cluster's own objects (the baseline) are never touched. The embedded and kind
// clusters are the lab's own, so there is nothing to remove from them.
func Uninstall(ctx context.Context, h Home, status io.Writer) error {
	if _, err := h.daemonPID(); err == nil {
		return errors.New("the lab is running: karplab stop --uninstall stops it first")
	}
	b, err := readBaseline(h)
	if err != nil {
		return err
	}
	if b == nil {
		fmt.Fprintln(status, "Nothing to uninstall: no lab has run on a cluster from "+string(h))
		return nil
	}
	if b.Backend != "existing" {
		fmt.Fprintf(status, "The %s cluster is the lab's own: nothing was installed on a cluster of yours (its data stays in %s until you remove it)\n", b.Backend, h)
		return nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", h.Kubeconfig())
	if err != nil {
		return fmt.Errorf("reading the lab's kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200 // client-go's 5 per second would take minutes over the events
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if uid, err := clusterUID(ctx, kube); err != nil {
		return fmt.Errorf("cannot reach the cluster at %s to uninstall: %w", cfg.Host, err)
	} else if uid != b.Cluster {
		return fmt.Errorf("the lab's kubeconfig reaches another cluster than the one the lab ran on (%s): nothing removed", b.Server)
	}
	fmt.Fprintf(status, "Removing the lab from the cluster at %s\n", cfg.Host)
	r, err := newResetter(cfg, status)
	if err != nil {
		return err
	}
	r.keep, r.labNodes, r.grace = b, h.recordedNodes, time.Second // no Karpenter left to finalize
	if err := r.run(ctx); err != nil {
		return fmt.Errorf("removing what the lab left: %w", err)
	}
	entries, err := installs.Read(h.InstallRecord())
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	swept := time.Now()
	n, err := deleteEventsAbout(ctx, kube, entries)
	if err != nil {
		return err
	}
	if _, err := installs.Remove(ctx, dyn, entries, status, 2*time.Minute); err != nil {
		return err
	}
	// The cluster's node lifecycle controller notices a deleted Node at its next monitor pass
	// (every 5 s by default) and only then writes its RemovingNode event: sweep again once a
	// whole pass has gone by since the last sweep, until one finds nothing more (ten at most).
	for round := 0; round < 10; round++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(swept.Add(nodeMonitorPass))):
		}
		swept = time.Now()
		more, err := deleteEventsAbout(ctx, kube, entries)
		if err != nil {
			return err
		}
		if n += more; more == 0 {
			break
		}
	}
	fmt.Fprintf(status, " - deleted %d events about the lab's objects\n", n)
	for _, f := range []string{h.InstallRecord(), h.BaselineFile(), h.Kubeconfig(), karpenter.LabViewKubeconfig(h.Kubeconfig()), h.EnvFile()} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	fmt.Fprintln(status, "The cluster is as the lab found it; the EC2 account stays in "+h.EC2Dir())
	return nil
}

// nodeMonitorPass is kube-controller-manager's --node-monitor-period (5 s) with a margin.
const nodeMonitorPass = 6 * time.Second

// deleteEventsAbout deletes the Events the cluster's own controllers wrote about objects the
// lab created (a scheduler or node controller event about a lab Node, say) and counts them.
func deleteEventsAbout(ctx context.Context, kube kubernetes.Interface, entries []installs.Entry) (int, error) {
	labs, nodes := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		labs[e.UID] = true
		if e.Group == "" && e.Resource == "nodes" {
			nodes[e.Name] = true
		}
	}
	events, err := kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing events: %w", err)
	}
	n := 0
	for _, ev := range events.Items {
		// Kubelets and the node controller name a Node by its name in the UID field.
		about := labs[string(ev.InvolvedObject.UID)] || (ev.InvolvedObject.Kind == "Node" && nodes[ev.InvolvedObject.Name])
		if !about || labs[string(ev.UID)] {
			continue // not about the lab's objects, or recorded itself (removed with the rest)
		}
		if err := kube.CoreV1().Events(ev.Namespace).Delete(ctx, ev.Name, metav1.DeleteOptions{}); err == nil {
			n++
		}
	}
	return n, nil
}
