package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/deletion"
	"github.com/karplab/karplab/cluster/karpenter"
)

// systemNamespaces survive a reset; every other namespace is the learner's workload.
var systemNamespaces = map[string]bool{
	"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true,
}

var (
	nodePoolsGVR      = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClaimsGVR     = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	ec2NodeClassesGVR = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
	kwokNodeClassGVR  = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
	overlaysGVR       = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1alpha1", Resource: "nodeoverlays"}
)

// resetter brings a running lab back to its starting point without restarting the control
// plane: no workload, no NodePools/NodeClaims/NodeClasses, no nodes, an empty EC2 account
// (the default VPC, subnets, security groups and images stay), a fresh evidence history.
type resetter struct {
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	status io.Writer
	grace  time.Duration // how long Karpenter gets to finalize NodeClaims itself
	ec2    func(context.Context) error
	// hold stops Karpenter for the reset (nothing of it runs or calls AWS meanwhile) and
	// returns what starts it again, with clean in-memory caches.
	hold func(context.Context) (resume func(context.Context) error, err error)
	// settle waits until nothing of the lab still acts on an instance the EC2 reset ended
	// (the simulated kubelet's boots), so no Node registers after the last deleteNodes.
	settle  func(context.Context) error
	after   func(context.Context) error // resets what else keeps in-memory state
	history func() error
	// keep holds the cluster's own objects (nil: the lab owns the whole cluster); labNodes
	// the Nodes lab processes created, by name and UID.
	keep     *baseline
	labNodes func() map[string]string
	mu       sync.Mutex // guards status and last: steps may end side by side
	last     time.Time  // when the previous step ended
}

func newResetter(cfg *rest.Config, status io.Writer) (*resetter, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &resetter{kube: kube, dyn: dyn, status: status, grace: 20 * time.Second, last: time.Now()}, nil
}

// step says what a step did and how long it took (since the step before it ended).
func (r *resetter) step(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	fmt.Fprintf(r.status, " - "+format+" (%s)\n", append(args, now.Sub(r.last).Round(10*time.Millisecond))...)
	r.last = now
}

// run resets the lab, one step after another, each saying what it did and how long it took.
func (r *resetter) run(ctx context.Context) (err error) {
	r.last = time.Now()
	// Karpenter first: held, it launches nothing for the pods being deleted, and no call of
	// its can land in the account after the account's reset.
	resume := func(context.Context) error { return nil }
	if r.hold != nil {
		if resume, err = r.holdKarpenter(ctx); err != nil {
			return err
		}
		defer func() { // on a failed reset too: a lab with no Karpenter would be stuck
			if resume != nil {
				err = errors.Join(err, resume(ctx))
			}
		}()
	}
	if err := r.deleteNodePools(ctx); err != nil {
		return err
	}
	deleted, err := r.deleteWorkloads(ctx)
	if err != nil {
		return err
	}
	if err := r.deleteNodeClaims(ctx); err != nil {
		return err
	}
	if err := r.deleteLabNodes(ctx, deleted); err != nil {
		return err
	}
	if err := r.deleteNodeClasses(ctx); err != nil {
		return err
	}
	if err := r.resetEC2(ctx); err != nil {
		return err
	}
	if err := r.resetInMemoryState(ctx); err != nil {
		return err
	}
	// Karpenter starts while the namespace controller finishes: both mostly wait.
	gone := make(chan error, 1)
	go func() { gone <- r.awaitNamespacesGone(ctx, deleted) }()
	if r.hold != nil {
		// Taken from the deferred call first, so a failed start is not tried twice.
		again := resume
		resume = nil
		if err := r.resumeKarpenter(ctx, again); err != nil {
			return errors.Join(err, <-gone)
		}
	}
	if err := <-gone; err != nil {
		return err
	}
	return r.newHistory()
}

// holdKarpenter stops Karpenter and returns what starts it again.
func (r *resetter) holdKarpenter(ctx context.Context) (resume func(context.Context) error, err error) {
	if resume, err = r.hold(ctx); err != nil {
		return resume, err
	}
	r.step("stopped Karpenter for the reset")
	return resume, nil
}

// deleteNodePools deletes the NodePools first, so Karpenter (if it runs) provisions nothing
// for what the next steps delete.
func (r *resetter) deleteNodePools(ctx context.Context) error {
	n, err := r.deleteAll(ctx, nodePoolsGVR, false)
	if err != nil {
		return err
	}
	r.step("deleted %d NodePools", n)
	return nil
}

// deleteWorkloads deletes every namespace that is neither a system one, the lab's own nor
// the cluster's, and the default namespace's workloads; it returns the namespaces deleted,
// which the later steps clear of pods and wait for.
func (r *resetter) deleteWorkloads(ctx context.Context) ([]string, error) {
	nss, err := r.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	var deleted []string
	for _, ns := range nss.Items {
		if systemNamespaces[ns.Name] || ns.Name == karpenter.LabNamespace || r.keep.keeps(ns.UID) {
			continue
		}
		if err := r.kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting namespace %s: %w", ns.Name, err)
		}
		deleted = append(deleted, ns.Name)
	}
	// At once, while the namespace controller starts: it deletes pods gracefully (no kubelet
	// of a lab pod confirms) and waits about half their grace before looking again. A
	// terminating namespace takes no new pod, so none comes back.
	if err := r.forceDeletePods(ctx, deleted); err != nil {
		return nil, err
	}
	if err := r.deleteDefaultWorkloads(ctx); err != nil {
		return nil, err
	}
	r.step("deleted workload namespaces %v and the default namespace's workloads", deleted)
	return deleted, nil
}

// deleteNodeClaims gives Karpenter, if it runs, the chance to drain and terminate as it
// would; then finishes by force. A held Karpenter finalizes nothing, so they go by force at
// once: the account's reset ends the instances.
func (r *resetter) deleteNodeClaims(ctx context.Context) error {
	held := r.hold != nil
	n, err := r.deleteAll(ctx, nodeClaimsGVR, held)
	if err != nil {
		return err
	}
	if !held && !r.waitGone(ctx, nodeClaimsGVR, r.grace) {
		if _, err := r.deleteAll(ctx, nodeClaimsGVR, true); err != nil {
			return err
		}
	}
	r.step("deleted %d NodeClaims", n)
	return nil
}

// deleteLabNodes deletes the lab's nodes (see deleteNodes), then the deleted namespaces'
// pods again: those on deleted nodes have no kubelet left to confirm them.
func (r *resetter) deleteLabNodes(ctx context.Context, deleted []string) error {
	n, err := r.deleteNodes(ctx)
	if err != nil {
		return err
	}
	if err := r.forceDeletePods(ctx, deleted); err != nil {
		return err
	}
	r.step("deleted %d nodes and the pods left on them", n)
	return nil
}

// deleteNodeClasses deletes the EC2NodeClasses, KWOKNodeClasses and NodeOverlays, by force
// (finalizers removed), once the NodeClaims that used them are gone.
func (r *resetter) deleteNodeClasses(ctx context.Context) error {
	for _, gvr := range []schema.GroupVersionResource{ec2NodeClassesGVR, kwokNodeClassGVR, overlaysGVR} {
		if _, err := r.deleteAll(ctx, gvr, true); err != nil {
			return err
		}
	}
	r.step("deleted EC2NodeClasses, KWOKNodeClasses and NodeOverlays")
	return nil
}

// resetEC2 empties the emulator's account (if the lab has one), then deletes the Nodes
// that registered meanwhile.
func (r *resetter) resetEC2(ctx context.Context) error {
	if r.ec2 == nil {
		return nil
	}
	if err := r.ec2(ctx); err != nil {
		return fmt.Errorf("resetting the EC2 emulator: %w", err)
	}
	r.step("reset the EC2 account: instances, volumes, ENIs, launch templates, billing, audit trail, policy, faults")
	// A kubelet still booting on an instance the reset ended may have registered its
	// Node meanwhile; left, it would block the next instance given the same IP (and so
	// the same node name). Once the simulated kubelet has seen the instances gone and
	// its boots have ended, every Node left is stale.
	if r.settle != nil {
		if err := r.settle(ctx); err != nil {
			return fmt.Errorf("waiting for the simulated kubelet: %w", err)
		}
	}
	if n, err := r.deleteNodes(ctx); err != nil {
		return err
	} else if n > 0 {
		r.step("deleted %d nodes registered during the reset", n)
	}
	return nil
}

// resetInMemoryState resets what other parts of the lab keep in memory (bootstrap faults,
// usage records), now that the account is empty.
func (r *resetter) resetInMemoryState(ctx context.Context) error {
	if r.after == nil {
		return nil
	}
	if err := r.after(ctx); err != nil {
		return err
	}
	r.step("cleared bootstrap faults and usage records")
	return nil
}

// resumeKarpenter starts the held Karpenter again, after the account's reset, so it starts
// with clean caches.
func (r *resetter) resumeKarpenter(ctx context.Context, resume func(context.Context) error) error {
	if err := resume(ctx); err != nil {
		return fmt.Errorf("starting Karpenter again: %w", err)
	}
	r.step("started Karpenter again, with clean caches")
	return nil
}

// newHistory truncates the evidence history: what happened before the reset is not the
// new start's evidence.
func (r *resetter) newHistory() error {
	if r.history == nil {
		return nil
	}
	if err := r.history(); err != nil {
		return fmt.Errorf("truncating the evidence history: %w", err)
	}
	r.step("started a new evidence history")
	return nil
}

// awaitNamespacesGone waits, while Karpenter restarts, for the deleted namespaces to finish
// terminating, so the next lab may create them again. The namespace controller ends them: it
// starts 5 s after a deletion and deletes by namespace name, so a namespace ended here
// earlier would let its pass delete the next lab's objects.
func (r *resetter) awaitNamespacesGone(ctx context.Context, deleted []string) error {
	if err := r.waitNamespacesGone(ctx, deleted, 2*time.Minute); err != nil {
		return err
	}
	if len(deleted) > 0 {
		r.step("namespaces %v gone", deleted)
	}
	return nil
}

// deleteDefaultWorkloads deletes the default namespace's workloads and pods, except the
// cluster's own: those in the baseline and what they own (a Deployment's later ReplicaSets
// and pods).
func (r *resetter) deleteDefaultWorkloads(ctx context.Context) error {
	objs, err := defaultWorkloads(ctx, r.dyn)
	if err != nil {
		return err
	}
	background := metav1.DeletePropagationBackground // a Job's pods go with it
	var errs []error
	for _, o := range r.labsOwn(objs) {
		err := r.dyn.Resource(o.gvr).Namespace(metav1.NamespaceDefault).Delete(ctx, o.name, metav1.DeleteOptions{PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s in namespace default: %w", o.gvr.Resource, o.name, err))
		}
	}
	return errors.Join(errs...)
}

// labsOwn filters objs (owners listed before what they own) down to what is not the
// cluster's own.
func (r *resetter) labsOwn(objs []namespacedObject) []namespacedObject {
	kept := map[types.UID]bool{}
	var out []namespacedObject
	for _, o := range objs {
		own := r.keep.keeps(o.uid)
		for _, ow := range o.owners {
			own = own || kept[ow]
		}
		if own {
			kept[o.uid] = true
			continue
		}
		out = append(out, o)
	}
	return out
}

// labsDefaultPods are the UIDs of the default namespace's pods that are not the cluster's
// own (nil without a baseline: every pod is the lab's).
func (r *resetter) labsDefaultPods(ctx context.Context) (map[types.UID]bool, error) {
	if r.keep == nil {
		return nil, nil
	}
	objs, err := defaultWorkloads(ctx, r.dyn)
	if err != nil {
		return nil, err
	}
	labs := map[types.UID]bool{}
	for _, o := range r.labsOwn(objs) {
		labs[o.uid] = true
	}
	return labs, nil
}

// deleteAll deletes every object of gvr (cluster-scoped); with force it first removes their
// finalizers, so nothing waits on a controller. A missing CRD counts as nothing to delete.
func (r *resetter) deleteAll(ctx context.Context, gvr schema.GroupVersionResource, force bool) (int, error) {
	list, err := r.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	objs := make([]deletion.Object, len(list.Items))
	for i, item := range list.Items {
		objs[i] = deletion.Object{GVR: gvr, Name: item.GetName()}
	}
	return len(objs), deletion.DeleteAll(ctx, r.dyn, objs, force)
}

// waitGone reports whether every object of gvr (cluster-scoped) is gone within timeout.
func (r *resetter) waitGone(ctx context.Context, gvr schema.GroupVersionResource, timeout time.Duration) bool {
	return deletion.WaitGone(ctx, timeout, func(ctx context.Context) ([]string, error) {
		list, err := r.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return []string{gvr.Resource}, nil // not known to be gone: look again
		}
		var left []string
		for _, item := range list.Items {
			left = append(left, item.GetName())
		}
		return left, nil
	}) == nil
}

func (r *resetter) forceDeletePods(ctx context.Context, namespaces []string) error {
	zero := int64(0)
	labsDefault, err := r.labsDefaultPods(ctx)
	if err != nil {
		return err
	}
	for _, ns := range append(namespaces, "default") {
		pods, err := r.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing pods in %s: %w", ns, err)
		}
		var names []string
		for _, p := range pods.Items {
			if ns == "default" && labsDefault != nil && !labsDefault[p.UID] {
				continue // the cluster's own
			}
			names = append(names, p.Name)
		}
		err = deletion.Each(ctx, len(names), func(ctx context.Context, i int) error {
			err := r.kube.CoreV1().Pods(ns).Delete(ctx, names[i], metav1.DeleteOptions{GracePeriodSeconds: &zero})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting pod %s/%s: %w", ns, names[i], err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *resetter) waitNamespacesGone(ctx context.Context, names []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var left []string
		for _, ns := range names {
			if _, err := r.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
				left = append(left, ns)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespaces %s are still terminating after %s", strings.Join(left, ", "), timeout)
		}
		// The namespace controller deletes pods gracefully; no kubelet confirms them.
		if err := r.forceDeletePods(ctx, left); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Reset asks the running daemon to reset the lab, streaming its progress lines to status.
func Reset(ctx context.Context, h Home, status io.Writer) error {
	base, err := h.controlURL()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/reset", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking the daemon to reset: %w", err)
	}
	defer resp.Body.Close()
	// The daemon streams progress lines and ends with a JSON result line.
	var last string
	dec := json.NewDecoder(resp.Body)
	for {
		var line controlLine
		if err := dec.Decode(&line); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("reading reset progress: %w", err)
		}
		if line.Progress != "" {
			fmt.Fprint(status, line.Progress)
		}
		if line.Error != "" {
			return errors.New(line.Error)
		}
		last = line.Done
	}
	if last == "" {
		return errors.New("the daemon ended the reset without a result (see the daemon log)")
	}
	return nil
}

// controlLine is one line of a streamed control response.
type controlLine struct {
	Progress string `json:"progress,omitempty"`
	Error    string `json:"error,omitempty"`
	Done     string `json:"done,omitempty"`
}

// lineWriter streams progress writes to the HTTP response as controlLines.
type lineWriter struct {
	enc *json.Encoder
	fl  http.Flusher
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if err := w.enc.Encode(controlLine{Progress: string(p)}); err != nil {
		return 0, err
	}
	if w.fl != nil {
		w.fl.Flush()
	}
	return len(p), nil
}

// deleteNodes deletes the lab's Nodes, finalizers stripped (no kubelet will confirm them):
// those lab processes created and any other Karpenter node the cluster did not have before.
// The cluster's own nodes stay.
func (r *resetter) deleteNodes(ctx context.Context) (int, error) {
	nodes, err := r.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing nodes: %w", err)
	}
	var recorded map[string]string
	if r.labNodes != nil {
		recorded = r.labNodes()
	}
	var objs []deletion.Object
	for _, node := range nodes.Items {
		_, karpenterNode := node.Labels[karpv1.NodePoolLabelKey]
		labs := r.keep == nil || recorded[node.Name] == string(node.UID) || karpenterNode
		if !labs || r.keep.keeps(node.UID) {
			continue
		}
		objs = append(objs, deletion.Object{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Name: node.Name})
	}
	return len(objs), deletion.DeleteAll(ctx, r.dyn, objs, true)
}
