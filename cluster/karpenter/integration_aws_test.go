package karpenter_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/controlplane"
	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// TestIntegrationAWSProvider: the lab's Karpenter is the real karpenter-provider-aws
// v1.15.0 (its operator, cloud provider and every controller, wired as its own main)
// against the emulator. The child is Ready with its listeners on loopback, the provider's
// CRDs and the kube-dns Service are there, the seed EC2NodeClass reaches Ready=True through
// the real subnet, security group, AMI (SSM), instance profile (IAM) and validation
// controllers, and a Pending pod gets a NodeClaim and a CreateFleet in the emulator's
// audit trail; the simulated kubelet registers the Node from the provider's own user data,
// the NodeClaim is Initialized and the pod runs.
func TestIntegrationAWSProvider(t *testing.T) {
	e := lab(t)
	ctx := context.Background()
	t.Cleanup(func() { e.resetCluster(t, "ziba-aws") })
	t.Logf("the real provider's child is Ready (pid %d)", e.sup.Status().PID)
	checkLoopbackListeners(t, e.sup.Status().PID, e.health, e.metrics)

	ext, err := apiextensions.NewForConfig(e.rest)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "ec2nodeclasses.karpenter.k8s.aws", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The provider's own schema (the retired lab provider's had no spec.instanceProfile).
	if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["instanceProfile"]; !ok {
		t.Errorf("the installed EC2NodeClass CRD is not the provider's: no spec.instanceProfile")
	}
	svc, err := e.kube.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != controlplane.KubeDNSIP {
		t.Errorf("kube-system/kube-dns: %v, cluster IP %q, want %s", err, svc.Spec.ClusterIP, controlplane.KubeDNSIP)
	}

	e.applySeed(t)
	u, err := e.dyn.Resource(nodeClassGVR).Get(ctx, "ziba-general", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("EC2NodeClass conditions: %v", conditions(u))
	for _, field := range [][]string{{"status", "subnets"}, {"status", "securityGroups"}, {"status", "amis"}} {
		if list, _, _ := unstructured.NestedSlice(u.Object, field...); len(list) == 0 {
			t.Errorf("EC2NodeClass %s is empty", strings.Join(field, "."))
		}
	}
	if p, _, _ := unstructured.NestedString(u.Object, "status", "instanceProfile"); p == "" {
		t.Errorf("EC2NodeClass status.instanceProfile is empty: the provider made no instance profile for spec.role")
	}

	since := time.Now()
	e.createDeployment(t, deployment("ziba-aws", "aws-demo", 1, "1", "2Gi", map[string]string{karpv1.NodePoolLabelKey: "ziba-general"}))
	waitFor(t, 2*time.Minute, 500*time.Millisecond, "a NodeClaim and a CreateFleet for the Pending pod", func() (bool, string) {
		claims := e.nodeClaims(t)
		fleets := e.karpenterCalls(t, "CreateFleet", since)
		return len(claims) > 0 && len(fleets) > 0, fmt.Sprintf("%d NodeClaims, %d CreateFleet calls", len(claims), len(fleets))
	})
	for _, nc := range e.nodeClaims(t) {
		t.Logf("NodeClaim %s: provider ID %q, instance type %s", nc.Name, nc.Status.ProviderID, nc.Labels["node.kubernetes.io/instance-type"])
	}
	for _, ev := range e.karpenterCalls(t, "CreateFleet", since) {
		t.Logf("audit: %s %s %s", ev.Action, ev.RequestID, ev.ErrorCode)
	}
	// The interruption controller long-polls the queue named INTERRUPTION_QUEUE.
	waitFor(t, 30*time.Second, 500*time.Millisecond, "the interruption controller polling SQS", func() (bool, string) {
		var ok int
		for _, ev := range e.karpenterCalls(t, "ReceiveMessage", time.Time{}) {
			if ev.ErrorCode == "" {
				ok++
			}
		}
		return ok > 0, fmt.Sprintf("%d successful ReceiveMessage calls", ok)
	})
	// The simulated kubelet reads the provider's own user data (AL2023 nodeadm MIME) and
	// registers the Node; core's registration removes karpenter.sh/unregistered and
	// initialises the NodeClaim; kwok runs the pod.
	var claim karpv1.NodeClaim
	waitFor(t, 90*time.Second, 500*time.Millisecond, "the NodeClaim Registered and Initialized", func() (bool, string) {
		claims := e.nodeClaims(t)
		if len(claims) == 0 {
			return false, "no NodeClaim"
		}
		claim = claims[0]
		var conds []string
		for _, c := range claim.Status.Conditions {
			conds = append(conds, c.Type+"="+string(c.Status))
		}
		var kubelets []string
		for _, n := range e.kubelet.Nodes() {
			kubelets = append(kubelets, fmt.Sprintf("%s %s %q", n.InstanceID, n.Phase, n.Reason))
		}
		return claim.StatusConditions().Get(karpv1.ConditionTypeRegistered).IsTrue() &&
				claim.StatusConditions().Get(karpv1.ConditionTypeInitialized).IsTrue(),
			fmt.Sprintf("node %q, conditions %v, kubelets %v", claim.Status.NodeName, conds, kubelets)
	})
	e.waitRunning(t, "ziba-aws", "aws-demo", 1, 60*time.Second)
	t.Logf("the pod is Running %s after the Deployment was created", time.Since(since).Round(time.Millisecond))

	node, err := e.kube.CoreV1().Nodes().Get(ctx, claim.Status.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the NodeClaim's node: %v", err)
	}
	if node.Spec.ProviderID != claim.Status.ProviderID || !strings.HasPrefix(node.Spec.ProviderID, "aws:///eu-west-2") {
		t.Errorf("node provider ID %q, NodeClaim's %q", node.Spec.ProviderID, claim.Status.ProviderID)
	}
	wantLabels := map[string]string{
		karpv1.NodePoolLabelKey:            "ziba-general",
		"karpenter.k8s.aws/ec2nodeclass":   "ziba-general",
		"node.kubernetes.io/instance-type": claim.Labels["node.kubernetes.io/instance-type"],
		karpv1.CapacityTypeLabelKey:        claim.Labels[karpv1.CapacityTypeLabelKey],
		"workload.ziba.dev/tier":           "general",
		"topology.kubernetes.io/zone":      claim.Labels["topology.kubernetes.io/zone"],
		karpv1.NodeRegisteredLabelKey:      "true",
		karpv1.NodeInitializedLabelKey:     "true",
	}
	for k, v := range wantLabels {
		if got, ok := node.Labels[k]; !ok || got != v || v == "" {
			t.Errorf("node label %s = %q (set %v), want %q", k, got, ok, v)
		}
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == karpv1.UnregisteredTaintKey {
			t.Errorf("node %s still has the %s taint", node.Name, taint.Key)
		}
	}
	// The kubelet registered it from the provider's user data, with the pods limit the
	// provider computed for the type (its NodeClaim's capacity).
	if got, want := node.Status.Capacity.Pods().Value(), claim.Status.Capacity.Pods().Value(); got != want {
		t.Errorf("node pods capacity %d, NodeClaim's %d", got, want)
	}
	t.Logf("node %s allocatable %v; the provider expected %v", node.Name, node.Status.Allocatable, claim.Status.Allocatable)
	var status *kubelet.NodeStatus
	for _, n := range e.kubelet.Nodes() {
		if n.ProviderID == node.Spec.ProviderID {
			status = &n
		}
	}
	if status == nil || status.Phase != kubelet.PhaseRegistered || status.Adopted {
		t.Errorf("simulated kubelet status for %s: %+v, want registered, not adopted", node.Spec.ProviderID, status)
	}
	// The boot outcome reached the instance's console (GetConsoleOutput).
	id := instanceID(t, node.Spec.ProviderID)
	waitFor(t, 10*time.Second, 250*time.Millisecond, "the registration on the instance console", func() (bool, string) {
		out, err := e.ec2.GetConsoleOutput(ctx, &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
		if err != nil || out.Output == nil {
			return false, fmt.Sprintf("GetConsoleOutput: %v", err)
		}
		b, _ := base64.StdEncoding.DecodeString(*out.Output)
		return strings.Contains(string(b), `"Successfully registered node" node="`+node.Name+`"`), string(b)
	})
}

// conditions maps an object's status condition types to their status.
func conditions(u *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		if reason, _ := m["reason"].(string); status != "True" && reason != "" {
			status += " (" + reason + ")"
		}
		out[typ] = status
	}
	return out
}

// checkLoopbackListeners fails unless every TCP socket the process listens on is bound
// to 127.0.0.1, and the health and metrics ports are among them.
func checkLoopbackListeners(t *testing.T, pid int, ports ...int) {
	t.Helper()
	seen := map[int]bool{}
	for _, l := range karplabtest.Listeners(t, pid) {
		if !l.Addr.IP.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Errorf("the Karpenter child listens on %s, not on 127.0.0.1", l.Addr)
		}
		seen[l.Addr.Port] = true
	}
	for _, p := range ports {
		if !seen[p] {
			t.Errorf("the Karpenter child does not listen on 127.0.0.1:%d", p)
		}
	}
}
