package replay

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/recorder"
)

// Replayed is what a replay loaded, as Explain compares the lab against it.
type Replayed struct {
	// Since is when Karpenter and the controllers were let go.
	Since time.Time
	// NodeClaims and Nodes are the replayed ones' names.
	NodeClaims, Nodes []string
	// Pending are the pods production had not scheduled, as namespace/name.
	Pending []string
}

// Explanation is what happened after a replay: what Karpenter launched and removed, with its
// events and reasons, which pods stay pending and why, and where the lab's scheduler placed a
// pod production left pending (a divergence from production).
type Explanation struct {
	Since    time.Time
	Launched []string
	Removed  []string
	Events   []string
	Pending  []string
	Diverged []string
	// Quiet is true when Karpenter launched, removed and drifted nothing.
	Quiet bool
}

var nodeClaimsGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

// Explain reads the lab's cluster against what was replayed.
func Explain(ctx context.Context, cfg *rest.Config, r Replayed) (*Explanation, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	e := &Explanation{Since: r.Since}
	claims, err := dyn.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	now := map[string]bool{}
	drifted := 0
	for _, c := range claims.Items {
		now[c.GetName()] = true
		l := c.GetLabels()
		switch {
		case !slices.Contains(r.NodeClaims, c.GetName()):
			e.Launched = append(e.Launched, fmt.Sprintf("NodeClaim %s (%s), %s after the replay", c.GetName(),
				joinSet("NodePool "+l["karpenter.sh/nodepool"], l[corev1.LabelInstanceTypeStable], l[corev1.LabelTopologyZone], l["karpenter.sh/capacity-type"]),
				after(c.GetCreationTimestamp().Time, r.Since)))
		case c.GetDeletionTimestamp() != nil:
			e.Removed = append(e.Removed, fmt.Sprintf("NodeClaim %s: being deleted since %s after the replay", c.GetName(), after(c.GetDeletionTimestamp().Time, r.Since)))
		}
		conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
		for _, x := range conds {
			if m, ok := x.(map[string]any); ok && m["type"] == "Drifted" && m["status"] == "True" {
				drifted++
				e.Removed = append(e.Removed, fmt.Sprintf("NodeClaim %s is drifted: %s", c.GetName(), str(m["reason"])))
			}
		}
	}
	for _, n := range r.NodeClaims {
		if !now[n] {
			e.Removed = append(e.Removed, fmt.Sprintf("NodeClaim %s: gone", n))
		}
	}
	events, err := kc.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	why := e.readEvents(events.Items, r.Since)
	if err := e.readPods(ctx, kc, r, why); err != nil {
		return nil, err
	}
	e.Quiet = len(e.Launched) == 0 && len(e.Removed) == 0 && drifted == 0
	return e, nil
}

// joinSet joins the parts that say something.
func joinSet(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" && p != "NodePool " {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

// readEvents keeps Karpenter's events since the release, one line per object and reason
// (with a count), and returns the latest scheduling message for each pod.
func (e *Explanation) readEvents(events []corev1.Event, since time.Time) map[string]string {
	sort.Slice(events, func(i, j int) bool { return recorder.EventTime(events[i]).Before(recorder.EventTime(events[j])) })
	why := map[string]string{}
	seen := map[string]int{}
	var order []string
	lines := map[string]string{}
	for _, ev := range events {
		at := recorder.EventTime(ev)
		if at.Before(since.Add(-time.Second)) {
			continue
		}
		obj := ev.InvolvedObject
		if obj.Kind == "Pod" && (ev.Reason == "FailedScheduling" || ev.Reason == "Nominated") {
			if ev.Source.Component == "karpenter" || why[obj.Namespace+"/"+obj.Name] == "" || ev.Reason == "Nominated" {
				why[obj.Namespace+"/"+obj.Name] = ev.Source.Component + ": " + ev.Message
			}
		}
		if ev.Source.Component != "karpenter" && ev.ReportingController != "karpenter" {
			continue
		}
		key := obj.Kind + "/" + obj.Name + "/" + ev.Reason
		if seen[key] == 0 {
			order = append(order, key)
		}
		seen[key] += max(int(ev.Count), 1)
		lines[key] = fmt.Sprintf("%s %s %s: %s %s", after(at, since), obj.Kind, qualified(obj.Namespace, obj.Name), ev.Reason, oneLine(ev.Message))
	}
	for _, k := range order {
		l := lines[k]
		if seen[k] > 1 {
			l += fmt.Sprintf(" (×%d)", seen[k])
		}
		e.Events = append(e.Events, l)
	}
	return why
}

// readPods finds the pods still pending, and those production left pending that the lab's
// scheduler placed on a replayed node.
func (e *Explanation) readPods(ctx context.Context, kc kubernetes.Interface, r Replayed, why map[string]string) error {
	pods, err := kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	for _, p := range pods.Items {
		key := p.Namespace + "/" + p.Name
		wasPending := slices.Contains(r.Pending, key)
		switch {
		case p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending:
			reason := why[key]
			if reason == "" {
				reason = "no scheduling event yet"
			}
			e.Pending = append(e.Pending, fmt.Sprintf("%s: %s", key, oneLine(reason)))
		case wasPending && slices.Contains(r.Nodes, p.Spec.NodeName):
			e.Diverged = append(e.Diverged, fmt.Sprintf("%s was pending in production; the lab's scheduler placed it on replayed node %s", key, p.Spec.NodeName))
		}
	}
	return nil
}

func after(t, since time.Time) string {
	d := t.Sub(since).Round(time.Second)
	if d < 0 {
		return "-" + (-d).String()
	}
	return "+" + d.String()
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Write prints the explanation for a reader: what Karpenter did, then the pods.
func (e *Explanation) Write(w io.Writer) {
	section := func(title string, lines []string, none string) {
		fmt.Fprintf(w, "%s:\n", title)
		if len(lines) == 0 {
			fmt.Fprintf(w, "  %s\n", none)
		}
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, "What Karpenter did after the replay (times from %s, the release):\n", e.Since.Local().Format("15:04:05"))
	section("Launched", e.Launched, "nothing")
	section("Removed or drifted", e.Removed, "nothing")
	section("Karpenter's events", e.Events, "none")
	section("Pods pending", e.Pending, "none")
	section("Divergence from production", e.Diverged, "none: no pod production left pending was placed on a replayed node")
	if e.Quiet {
		fmt.Fprintln(w, "Karpenter adopted the replayed nodes and did nothing: no launch, termination or drift.")
	}
	fmt.Fprintln(w, "karplab time skip DURATION lets consolidateAfter and expireAfter come due; karplab evidence shows the record.")
}
