// Package existingtest plays somebody else's cluster for the existing backend's tests: an
// embedded control plane started on its own, holding a namespace, a node and a workload of
// its own that a lab must never touch, with a stand-in kubelet that keeps that node Ready
// and its pods Running. Snapshot and Diff tell whether the cluster is as it was.
package existingtest

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/karplab/karplab/cluster/controlplane"
)

// The cluster's own objects.
const (
	Namespace = "team-a"
	Node      = "team-a-node-1"
	Workload  = "team-a-api"
	// DefaultWorkload runs in namespace default, where a lab's reset deletes the learner's
	// workloads but must keep the cluster's.
	DefaultWorkload = "team-a-hello"
)

// taint keeps everything but the team's pods off its node, as a dedicated node group is.
var taint = corev1.Taint{Key: "dedicated", Value: Namespace, Effect: corev1.TaintEffectNoSchedule}

// Cluster is the running foreign cluster.
type Cluster struct {
	Kubeconfig string
	cp         *controlplane.ControlPlane
	kube       kubernetes.Interface
	stop       context.CancelFunc
	done       chan struct{}
}

// Start starts the control plane in dir, creates the cluster's own objects and waits until
// its workload runs.
func Start(ctx context.Context, dir string, log *slog.Logger) (*Cluster, error) {
	cp, err := controlplane.Start(ctx, controlplane.Config{DataDir: filepath.Join(dir, "controlplane"), Logger: log})
	if err != nil {
		return nil, err
	}
	c := &Cluster{Kubeconfig: filepath.Join(dir, "kubeconfig"), cp: cp, done: make(chan struct{})}
	fail := func(err error) (*Cluster, error) { cp.Stop(); return nil, err }
	if err := cp.WriteKubeconfig(c.Kubeconfig); err != nil {
		return fail(err)
	}
	if c.kube, err = kubernetes.NewForConfig(cp.RESTConfig()); err != nil {
		return fail(err)
	}
	if err := c.createOwnObjects(ctx); err != nil {
		return fail(fmt.Errorf("creating the cluster's own objects: %w", err))
	}
	hbCtx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go c.kubelet(hbCtx)
	if err := c.waitRunning(ctx, 2); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop stops the stand-in kubelet and the control plane.
func (c *Cluster) Stop() error {
	if c.stop != nil {
		c.stop()
		<-c.done
	}
	return c.cp.Stop()
}

func (c *Cluster) createOwnObjects(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{"team": Namespace}}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: Node, Labels: map[string]string{"kubernetes.io/hostname": Node, "team": Namespace}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{taint}},
	}
	if _, err := c.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := c.heartbeat(ctx); err != nil {
		return err
	}
	for _, d := range []struct{ ns, name string }{{Namespace, Workload}, {metav1.NamespaceDefault, DefaultWorkload}} {
		if _, err := c.kube.AppsV1().Deployments(d.ns).Create(ctx, deployment(d.ns, d.name), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func deployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"team": Namespace},
					Tolerations:  []corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: taint.Value, Effect: taint.Effect}},
					Containers: []corev1.Container{{Name: "app", Image: "registry.example/" + name + ":1",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
				},
			},
		},
	}
}

// kubelet keeps the node's lease and Ready condition fresh and marks its pods Running, every
// 5 seconds, until ctx ends.
func (c *Cluster) kubelet(ctx context.Context) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
		_ = c.heartbeat(ctx)
		_ = c.runPods(ctx)
	}
}

func (c *Cluster) heartbeat(ctx context.Context) error {
	now := metav1.NowMicro()
	leases := c.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	lease, err := leases.Get(ctx, Node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: Node, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(Node), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now}}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
	} else if err == nil {
		lease.Spec.RenewTime = &now
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	// The cluster's node controller writes the node too: retry on its conflicts.
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error { return c.nodeReady(ctx) })
}

func (c *Cluster) nodeReady(ctx context.Context) error {
	node, err := c.kube.CoreV1().Nodes().Get(ctx, Node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	beat := metav1.Now()
	node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node.Status.Allocatable = node.Status.Capacity
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "the team's own kubelet", LastHeartbeatTime: beat, LastTransitionTime: firstTransition(node, beat)}}
	_, err = c.kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

func firstTransition(n *corev1.Node, now metav1.Time) metav1.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime
		}
	}
	return now
}

func (c *Cluster) runPods(ctx context.Context) error {
	pods, err := c.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + Node})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		now := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &now
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: p.Spec.Containers[0].Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
		if _, err := c.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// waitRunning waits until n pods run on the node.
func (c *Cluster) waitRunning(ctx context.Context, n int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		_ = c.runPods(ctx)
		pods, err := c.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + Node + ",status.phase=Running"})
		if err == nil && len(pods.Items) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster's own workload did not run within a minute (%v)", err)
		}
		time.Sleep(time.Second)
	}
}
