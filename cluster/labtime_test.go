package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/fakeec2"
)

// Two pools on the course's numbers: general consolidates after 5m, stuck's machines never
// register (its bootstrap is broken), so Karpenter's 15-minute registration timeout runs.
const skipWorkload = `
apiVersion: v1
kind: Namespace
metadata: {name: ziba}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, namespace: ziba}
spec:
  replicas: 1
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: general}
      containers:
      - name: w
        image: example.invalid/worker:1
        resources: {requests: {cpu: "1", memory: 2Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck, namespace: ziba}
spec:
  replicas: 1
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: stuck}
      containers:
      - name: w
        image: example.invalid/worker:1
        resources: {requests: {cpu: "1", memory: 2Gi}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m}
  template:
    spec:
      expireAfter: 720h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: general}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: stuck}
spec:
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m}
  template:
    spec:
      expireAfter: 720h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: general}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: general}
spec:
  role: KarpenterNodeRole-ziba-production
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: ziba-production}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: ziba-production}}]
`

// TestIntegrationSkipTimeDrivesKarpenter: Karpenter's controllers run on the lab clock. A
// skip short of consolidateAfter leaves an emptied node alone; the skip past it makes
// Karpenter consolidate it; the skip past 15 minutes makes Karpenter itself delete the
// NodeClaim whose node never registered. Each skip reports exactly what came due.
func TestIntegrationSkipTimeDrivesKarpenter(t *testing.T) {
	h := needLab(t)
	ctx := t.Context()
	var progress strings.Builder
	if err := Reset(ctx, h, &progress); err != nil {
		t.Fatalf("reset: %v\n%s", err, progress.String())
	}
	t.Cleanup(func() { Reset(context.Background(), h, &progress) })
	cfg, err := clientcmd.BuildConfigFromFlags("", h.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	if err := BreakBootstrap(ctx, h, kubelet.BootstrapFault{Tags: map[string]string{"karpenter.sh/nodepool": "stuck"}, Reason: "nodeadm: cannot reach the API server"}); err != nil {
		t.Fatal(err)
	}
	applyYAML(t, dynamic.NewForConfigOrDie(cfg), skipWorkload)

	// claims maps each live NodeClaim's pool to its name and its conditions.
	claims := func() map[string]string {
		t.Helper()
		ncs, _, err := listKarpenter(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, nc := range ncs {
			if nc.DeletionTimestamp == nil {
				out[nc.Labels["karpenter.sh/nodepool"]] = nc.Name
			}
		}
		return out
	}
	consolidatable := func(name string) bool {
		ncs, _, _ := listKarpenter(ctx, cfg)
		for _, nc := range ncs {
			if nc.Name == name {
				return nc.StatusConditions().Get("Consolidatable").IsTrue()
			}
		}
		return false
	}
	waitFor := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out after %s waiting for %s", within, what)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	skip := func(d time.Duration) []string {
		t.Helper()
		sk, err := SkipTime(ctx, h, d)
		if err != nil {
			t.Fatalf("skip %s: %v", d, err)
		}
		if !sk.KarpenterFollowed {
			t.Errorf("skip %s: Karpenter did not follow", d)
		}
		var due []string
		for _, d := range sk.Due {
			due = append(due, d.NodePool+" "+d.Kind)
		}
		return due
	}

	var general, stuck string
	waitFor("a NodeClaim in each pool, general's pod running", 2*time.Minute, func() bool {
		c := claims()
		general, stuck = c["general"], c["stuck"]
		pods, _ := kube.CoreV1().Pods("ziba").List(ctx, metav1.ListOptions{LabelSelector: "app=worker", FieldSelector: "status.phase=Running"})
		return general != "" && stuck != "" && len(pods.Items) == 1
	})
	if err := kube.AppsV1().Deployments("ziba").Delete(ctx, "worker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the worker pod gone", time.Minute, func() bool {
		pods, _ := kube.CoreV1().Pods("ziba").List(ctx, metav1.ListOptions{LabelSelector: "app=worker"})
		return len(pods.Items) == 0
	})

	if due := skip(4 * time.Minute); len(due) != 0 {
		t.Errorf("skip 4m brought due %v, want nothing (consolidateAfter 5m, registration 15m)", due)
	}
	time.Sleep(20 * time.Second) // long enough for Karpenter to act, were anything due
	if c := claims(); c["general"] != general || c["stuck"] != stuck {
		t.Fatalf("after 4m of 5m, NodeClaims are %v, want general %s and stuck %s untouched", c, general, stuck)
	}
	if consolidatable(general) {
		t.Errorf("%s is Consolidatable 4m into a 5m consolidateAfter", general)
	}
	assertKarpenterClock(t, kube, 4*time.Minute)

	if due := skip(2 * time.Minute); fmt.Sprint(due) != "[general consolidatable]" {
		t.Errorf("skip to 6m brought due %v, want [general consolidatable]", due)
	}
	waitFor("Karpenter to consolidate the empty general node", 2*time.Minute, func() bool { return claims()["general"] == "" })
	if c := claims(); c["stuck"] != stuck {
		t.Errorf("the stuck NodeClaim went before its registration timeout: %v", c)
	}

	if due := skip(10 * time.Minute); fmt.Sprint(due) != "[stuck registration-timeout]" {
		t.Errorf("skip to 16m brought due %v, want [stuck registration-timeout]", due)
	}
	waitFor("Karpenter to delete the NodeClaim that never registered", 2*time.Minute, func() bool { return claims()["stuck"] != stuck })
	// Its replacement is born 16m into lab time: Karpenter must read its creation and its
	// first conditions in lab time, or the 15m registration timeout would end it at once.
	var next string
	waitFor("a replacement NodeClaim for the stuck pod", time.Minute, func() bool { next = claims()["stuck"]; return next != "" })
	time.Sleep(20 * time.Second)
	if c := claims(); c["stuck"] != next {
		t.Errorf("the replacement %s was deleted within 20s of its birth (now %v): Karpenter read its age off the wall clock", next, c)
	}
	assertKarpenterClock(t, kube, 16*time.Minute)
}

// assertKarpenterClock: the ConfigMap a learner reads says which lab time Karpenter runs on.
func assertKarpenterClock(t *testing.T, kube kubernetes.Interface, offset time.Duration) {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(karpenter.LabClockNamespace).Get(t.Context(), karpenter.LabClockConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["offset"] != offset.String() {
		t.Errorf("Karpenter's lab clock says offset %q, want %s", cm.Data["offset"], offset)
	}
	st, _ := testLab.home.ReadState()
	lt, err := fakeec2.NewAdminClient(st.EC2Endpoint).Time(t.Context())
	if err != nil || lt.Offset != offset {
		t.Errorf("the account's lab clock: %+v, %v; want offset %s", lt, err, offset)
	}
}
