package metrics

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
)

// What the kubelet does when usage outgrows what was reserved (Options.Enforce), after
// k8s.io/kubernetes pkg/kubelet/eviction and pkg/kubelet/nodestatus:
//
//   - A container whose memory demand exceeds its limit is OOM-killed by the kernel:
//     lastState.terminated {reason OOMKilled, exitCode 137}. The kubelet restarts it at
//     once the first time (restartCount+1); after a later kill it waits in
//     state.waiting {reason CrashLoopBackOff, message "back-off 10s restarting failed
//     container=render pod=NAME_NAMESPACE(UID)"}, not ready, with a Warning event BackOff,
//     10s doubling to 5m, then restarts it. With restartPolicy Never the pod fails. A
//     restarted container's profile is not restarted: kwok's expressions know the pod's
//     age, not the container's, so a worker that always needs too much is killed again.
//   - The signal allocatableMemory.available (the pods' cgroup: allocatable plus the
//     memory.available hard threshold, minus the pods' working set) below that threshold,
//     that is the pods using more than the node's allocatable memory, sets the node's
//     MemoryPressure condition (reason KubeletHasInsufficientMemory, event
//     NodeHasInsufficientMemory) and evicts one pod per sample, ranked as the kubelet
//     ranks them: usage above request first, then lower priority, then the most usage
//     above request. The pod gets phase Failed, reason Evicted, the kubelet's message
//     ("The node was low on resource: memory. Threshold quantity: 100Mi, available: ...
//     Container render was using 4Gi, request is 1Gi, has larger consumption of memory. "),
//     a DisruptionTarget condition (reason TerminationByKubelet) and a Warning event
//     Evicted. The condition turns False again (KubeletHasSufficientMemory) once the pressure
//     has been gone for PressureTransitionPeriod. The node lifecycle controller adds the
//     node.kubernetes.io/memory-pressure:NoSchedule taint from the condition, as in a cluster.

// enforce OOM-kills and restarts the containers of events and evicts under node memory
// pressure.
func (s *Server) enforce(ctx context.Context, in sampleInput, events []containerEvent) {
	for _, ev := range events {
		if err := s.containerEvent(ctx, ev, in.now); err != nil && ctx.Err() == nil {
			s.log.Warn("updating a container's state", "pod", ev.pod.Namespace+"/"+ev.pod.Name, "container", ev.container, "err", err)
		}
	}
	for _, n := range in.nodes {
		if !nodeReady(n) {
			continue
		}
		if err := s.nodePressure(ctx, n, in); err != nil && ctx.Err() == nil {
			s.log.Warn("acting on node memory pressure", "node", n.Name, "err", err)
		}
	}
}

// containerEvent writes an OOM kill or a restart into the pod's status, as the kubelet's
// status manager would.
func (s *Server) containerEvent(ctx context.Context, ev containerEvent, now time.Time) error {
	pod, err := s.kube.CoreV1().Pods(ev.pod.Namespace).Get(ctx, ev.pod.Name, metav1.GetOptions{})
	if err != nil || pod.UID != ev.pod.UID || pod.Status.Phase != corev1.PodRunning {
		return client(err)
	}
	i := slices.IndexFunc(pod.Status.ContainerStatuses, func(c corev1.ContainerStatus) bool { return c.Name == ev.container })
	if i < 0 {
		return nil
	}
	cs := &pod.Status.ContainerStatuses[i]
	t := metav1.NewTime(now)
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}
	var backOff string
	switch {
	case ev.restart:
		cs.State, cs.Ready, cs.Started = running, true, new(true)
		cs.RestartCount++
	default:
		started := pod.CreationTimestamp
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "OOMKilled", StartedAt: started, FinishedAt: t, ContainerID: cs.ContainerID,
		}}
		switch {
		case pod.Spec.RestartPolicy == corev1.RestartPolicyNever:
			cs.State, cs.Ready, cs.Started = terminated, false, new(false)
			pod.Status.Phase = corev1.PodFailed
		case ev.backoff == 0:
			cs.LastTerminationState, cs.State = terminated, running
			cs.RestartCount++
		default:
			backOff = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", ev.backoff, ev.container, podDesc(pod))
			cs.LastTerminationState, cs.Ready, cs.Started = terminated, false, new(false)
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: backOff}}
		}
	}
	setContainersReady(pod, t)
	if _, err := s.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return client(err)
	}
	if ev.restart {
		s.log.Info("container restarted after its back-off", "pod", pod.Namespace+"/"+pod.Name, "container", ev.container, "restarts", cs.RestartCount)
		return nil
	}
	s.log.Info("container OOM-killed: its memory demand exceeded its limit", "pod", pod.Namespace+"/"+pod.Name,
		"container", ev.container, "demand", quantity(ev.demand), "limit", quantity(ev.limit), "restarts", cs.RestartCount, "backoff", ev.backoff)
	if backOff == "" {
		return nil
	}
	ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		FieldPath: "spec.containers{" + ev.container + "}"}
	return s.event(ctx, pod.Namespace, ref, pod.Spec.NodeName, corev1.EventTypeWarning, "BackOff",
		fmt.Sprintf("Back-off restarting failed container %s in pod %s", ev.container, podDesc(pod)), nil, now)
}

// setContainersReady sets the pod's Ready and ContainersReady conditions from its containers.
func setContainersReady(pod *corev1.Pod, now metav1.Time) {
	var unready []string
	for _, cs := range pod.Status.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
		if len(unready) > 0 {
			c.Status, c.Reason = corev1.ConditionFalse, "ContainersNotReady"
			c.Message = fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
		}
		setPodCondition(&pod.Status, c)
	}
}

// podDesc is the kubelet's format.Pod: name_namespace(uid).
func podDesc(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// nodePressure evicts one pod when the node's pods use more memory than its allocatable, and
// keeps the MemoryPressure condition in step.
func (s *Server) nodePressure(ctx context.Context, n *corev1.Node, in sampleInput) error {
	s.mu.Lock()
	rec := s.nodesBy[n.Name]
	var used int64
	if rec != nil {
		used = rec.pods.memory
	}
	allocatable := amountOf(n.Status.Allocatable).memory
	under := allocatable > 0 && used > allocatable
	if under {
		s.pressure[n.Name] = in.now
	}
	last, seen := s.pressure[n.Name]
	s.mu.Unlock()

	pressured := nodeCondition(n, corev1.NodeMemoryPressure)
	switch {
	case under && !pressured:
		if err := s.setMemoryPressure(ctx, n, true, in.now); err != nil {
			return err
		}
	case !under && pressured && (!seen || in.now.Sub(last) >= s.opts.PressureTransitionPeriod):
		return s.setMemoryPressure(ctx, n, false, in.now)
	}
	if !under {
		return nil
	}
	available := max(allocatable+s.opts.EvictionHard-used, 0)
	return s.evictOne(ctx, n, in, available)
}

func (s *Server) setMemoryPressure(ctx context.Context, n *corev1.Node, on bool, now time.Time) error {
	cond := corev1.NodeCondition{
		Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse,
		Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available",
		LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
	}
	event := "NodeHasSufficientMemory"
	if on {
		cond.Status, cond.Reason, cond.Message = corev1.ConditionTrue, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"
		event = "NodeHasInsufficientMemory"
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	if _, err := s.kube.CoreV1().Nodes().PatchStatus(ctx, n.Name, patch); err != nil {
		return client(err)
	}
	s.log.Info("node memory pressure", "node", n.Name, "memoryPressure", on)
	ref := corev1.ObjectReference{Kind: "Node", Name: n.Name, UID: types.UID(n.Name)}
	return s.event(ctx, metav1.NamespaceDefault, ref, n.Name, corev1.EventTypeNormal, event,
		fmt.Sprintf("Node %s status is now: %s", n.Name, event), nil, now)
}

// evictOne evicts the node's first pod in the kubelet's memory-pressure order.
func (s *Server) evictOne(ctx context.Context, n *corev1.Node, in sampleInput, available int64) error {
	type candidate struct {
		pod          *corev1.Pod
		usage, above int64
	}
	var cands []candidate
	s.mu.Lock()
	for _, pod := range in.pods {
		r := s.podsByUID[pod.UID]
		if pod.Spec.NodeName != n.Name || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil ||
			r == nil || !r.running || critical(pod) {
			continue
		}
		req := amountOf(podRequests(pod)).memory
		cands = append(cands, candidate{pod: pod, usage: r.cur.memory, above: r.cur.memory - req})
	}
	s.mu.Unlock()
	if len(cands) == 0 {
		return nil
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(
			-cmp.Compare(boolInt(a.above > 0), boolInt(b.above > 0)),
			cmp.Compare(priority(a.pod), priority(b.pod)),
			-cmp.Compare(a.above, b.above),
		)
	})
	victim := cands[0].pod
	message, annotations := s.evictionMessage(victim, available)
	pod, err := s.kube.CoreV1().Pods(victim.Namespace).Get(ctx, victim.Name, metav1.GetOptions{})
	if err != nil || pod.UID != victim.UID {
		return client(err)
	}
	now := metav1.NewTime(in.now)
	pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, "Evicted", message
	setPodCondition(&pod.Status, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, ObservedGeneration: pod.Generation,
		Reason: corev1.PodReasonTerminationByKubelet, Message: message, LastTransitionTime: now,
	})
	for _, t := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		setPodCondition(&pod.Status, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now})
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		started := pod.CreationTimestamp
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "Error", StartedAt: started, FinishedAt: now, ContainerID: cs.ContainerID,
		}}
		cs.Ready, cs.Started = false, new(false)
	}
	if _, err := s.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return client(err)
	}
	s.mu.Lock()
	if r := s.podsByUID[pod.UID]; r != nil {
		r.evicted, r.running = message, false
	}
	s.mu.Unlock()
	s.log.Info("pod evicted: node memory pressure", "pod", pod.Namespace+"/"+pod.Name, "node", n.Name, "message", message)
	ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	return s.event(ctx, pod.Namespace, ref, n.Name, corev1.EventTypeWarning, "Evicted", message, annotations, in.now)
}

// evictionMessage is the kubelet's evictionMessage for memory.
func (s *Server) evictionMessage(pod *corev1.Pod, available int64) (string, map[string]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "The node was low on resource: %v. ", corev1.ResourceMemory)
	fmt.Fprintf(&b, "Threshold quantity: %v, available: %v. ", quantity(s.opts.EvictionHard), resource.NewQuantity(available, resource.BinarySI))
	s.mu.Lock()
	r := s.podsByUID[pod.UID]
	var names, usages []string
	for _, c := range pod.Spec.Containers {
		var used int64
		if r != nil {
			for _, cr := range r.containers {
				if cr.name == c.Name {
					used = cr.cur.memory
				}
			}
		}
		req := c.Resources.Requests[corev1.ResourceMemory]
		if u := quantity(used); u.Cmp(req) > 0 {
			fmt.Fprintf(&b, "Container %s was using %s, request is %s, has larger consumption of %v. ", c.Name, u.String(), req.String(), corev1.ResourceMemory)
			names, usages = append(names, c.Name), append(usages, u.String())
		}
	}
	s.mu.Unlock()
	return b.String(), map[string]string{
		"offending_containers": strings.Join(names, ","), "offending_containers_usage": strings.Join(usages, ","),
		"starved_resource": string(corev1.ResourceMemory),
	}
}

// event records an event as the node's kubelet does (source kubelet on host node).
func (s *Server) event(ctx context.Context, ns string, ref corev1.ObjectReference, node, typ, reason, message string, annotations map[string]string, now time.Time) error {
	t := metav1.NewTime(now)
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s", ref.Name, rand.String(16)), Namespace: ns, Annotations: annotations},
		InvolvedObject: ref, Reason: reason, Message: message, Type: typ, Count: 1,
		Source:         corev1.EventSource{Component: "kubelet", Host: node},
		FirstTimestamp: t, LastTimestamp: t, ReportingController: "kubelet", ReportingInstance: node,
	}
	if _, err := s.kube.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("recording event %s: %w", reason, err)
	}
	return nil
}

func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

func podRequests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		for k, v := range c.Resources.Requests {
			q := out[k]
			q.Add(v)
			out[k] = q
		}
	}
	return out
}

// critical is the kubelet's IsCriticalPod: system-critical priority, which it never evicts.
func critical(pod *corev1.Pod) bool {
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= 2000000000
}

func priority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority == nil {
		return 0
	}
	return *pod.Spec.Priority
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func quantity(bytes int64) *resource.Quantity { return resource.NewQuantity(bytes, resource.BinarySI) }

// client drops NotFound and Conflict: the pod or node changed under us; the next sample
// sees it as it is.
func client(err error) error {
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
