package karpenter_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster/controlplane"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/kubelet"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/eks"
)

// TestIntegrationAWSProvider runs the real karpenter-provider-aws v1.15.0 (its operator,
// cloud provider and every controller, wired as its own main) against the emulator: the
// child starts and is Ready with its listeners on loopback, the provider's CRDs and the
// kube-dns Service are there, the seed EC2NodeClass reaches Ready=True through the real
// subnet, security group, AMI (SSM), instance profile (IAM) and validation controllers,
// and a Pending pod gets a NodeClaim and a CreateFleet in the emulator's audit trail; the
// simulated kubelet registers the Node from the provider's own user data, the NodeClaim is
// Initialized and the pod runs.
//
// The lab's own Karpenter child is stopped meanwhile (both would reconcile the same
// EC2NodeClass and NodePool) and comes back, with the lab's CRDs, afterwards.
func TestIntegrationAWSProvider(t *testing.T) {
	e := lab(t)
	ctx := context.Background()
	sup, health, metrics, logFile := e.startAWSProvider(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logTail(logFile, 80))
		}
		e.resetCluster(t, "ziba-aws")
		e.deleteSeed(t)
	})
	t.Logf("the real provider's child is Ready (pid %d)", sup.Status().PID)
	checkLoopbackListeners(t, sup.Status().PID, health, metrics)

	svc, err := e.kube.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != controlplane.KubeDNSIP {
		t.Errorf("kube-system/kube-dns: %v, cluster IP %q, want %s", err, svc.Spec.ClusterIP, controlplane.KubeDNSIP)
	}

	e.applySeedUnstructured(t)
	waitFor(t, 2*time.Minute, time.Second, "the provider's EC2NodeClass Ready=True", func() (bool, string) {
		u, err := e.dyn.Resource(nodeClassGVR).Get(ctx, "ziba-general", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds := conditions(u)
		return conds["Ready"] == "True", fmt.Sprintf("conditions %v", conds)
	})
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

// pauseLabKarpenter stops the shared lab's Karpenter child for the test and, at cleanup,
// reinstalls the lab's CRDs and starts a new one.
func (e *testEnv) pauseLabKarpenter(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	if err := e.sup.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	old := e.sup
	t.Cleanup(func() {
		if err := karpenter.InstallCRDs(ctx, e.rest, karpenter.ProviderEC2); err != nil {
			t.Errorf("reinstalling the lab's CRDs: %v", err)
		}
		e.sup = &karpenter.Supervisor{Path: old.Path, Args: old.Args, Env: old.Env, LogFile: old.LogFile, MinBackoff: old.MinBackoff}
		if err := e.sup.Start(ctx); err != nil {
			t.Errorf("restarting the lab's Karpenter: %v", err)
			return
		}
		if err := e.waitKarpenterReady(ctx); err != nil {
			t.Errorf("restarting the lab's Karpenter: %v", err)
		}
	})
}

// applySeedUnstructured applies the seed verbatim without waiting on the lab's types.
func (e *testEnv) applySeedUnstructured(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile("testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			t.Fatalf("decoding the seed: %v", err)
		}
		gvr := nodePoolGVR
		if u.GetKind() == "EC2NodeClass" {
			gvr = nodeClassGVR
		}
		body, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.dyn.Resource(gvr).Patch(context.Background(), u.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "kubectl", Force: new(true)}); err != nil {
			t.Fatalf("applying the seed %s: %v", u.GetKind(), err)
		}
	}
}

// deleteSeed removes the seed NodePool and EC2NodeClass, dropping finalizers a stopped
// provider can no longer remove, so the next test applies them afresh.
func (e *testEnv) deleteSeed(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for _, r := range []string{"nodepools", "ec2nodeclasses"} {
		gvr := nodePoolGVR
		if r == "ec2nodeclasses" {
			gvr = nodeClassGVR
		}
		if err := e.dyn.Resource(gvr).Delete(ctx, "ziba-general", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s ziba-general: %v", r, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := e.dyn.Resource(gvr).Get(ctx, "ziba-general", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Logf("%s ziba-general kept by its finalizers for 30s: removing them", r)
				_, _ = e.dyn.Resource(gvr).Patch(ctx, "ziba-general", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				deadline = time.Now().Add(time.Hour)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
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
	want := map[int]bool{}
	for _, p := range ports {
		want[p] = false
	}
	inodes := socketInodes(t, pid)
	for _, file := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, file))
		if err != nil {
			t.Fatalf("reading the child's sockets: %v", err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A: LISTEN
				continue
			}
			addr, portHex, _ := strings.Cut(fields[1], ":")
			port, _ := strconv.ParseInt(portHex, 16, 32)
			if addr != "0100007F" { // 127.0.0.1, little-endian
				t.Errorf("the Karpenter child listens on %s port %d (%s), not on 127.0.0.1", addr, port, file)
			}
			if _, ok := want[int(port)]; ok {
				want[int(port)] = true
			}
		}
		f.Close()
	}
	for p, seen := range want {
		if !seen {
			t.Errorf("the Karpenter child does not listen on 127.0.0.1:%d", p)
		}
	}
}

// socketInodes are the socket inodes the process holds open.
func socketInodes(t *testing.T, pid int) map[string]bool {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the child's descriptors: %v", err)
	}
	out := map[string]bool{}
	for _, en := range entries {
		link, err := os.Readlink(filepath.Join(dir, en.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	return out
}

// startAWSProvider pauses the lab's Karpenter and runs the real provider's child in its place
// (with the provider's CRDs and EKS told about the cluster), Ready; it stops at cleanup.
func (e *testEnv) startAWSProvider(t testing.TB) (sup *karpenter.Supervisor, health, metrics int, logFile string) {
	t.Helper()
	ctx := context.Background()
	e.pauseLabKarpenter(t)
	if err := karpenter.InstallCRDs(ctx, e.rest, karpenter.ProviderAWS); err != nil {
		t.Fatal(err)
	}
	ext, err := apiextensions.NewForConfig(e.rest)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "ec2nodeclasses.karpenter.k8s.aws", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The provider's schema has what the lab's lacks (spec.instanceProfile).
	if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["instanceProfile"]; !ok {
		t.Errorf("the installed EC2NodeClass CRD is not the provider's: no spec.instanceProfile")
	}
	ca := e.rest.CAData
	if len(ca) == 0 {
		if b, err := os.ReadFile(e.rest.CAFile); err == nil {
			ca = b
		}
	}
	if err := e.srv.SetEKSCluster(eks.Cluster{Name: "karplab", Endpoint: e.rest.Host, Version: fakeec2.DefaultKubernetesVersion,
		CertificateAuthorityData: base64.StdEncoding.EncodeToString(ca), ServiceIPv4CIDR: controlplane.ServiceCIDR, IPFamily: "ipv4",
		RoleARN: "arn:aws:iam::" + fakeec2.DefaultAccountID + ":role/karplab-eks-cluster-role"}); err != nil {
		t.Fatalf("telling EKS about the cluster: %v", err)
	}

	// Both listeners held until both are chosen: two freePort calls may get the same port.
	{
		a, errA := net.Listen("tcp", "127.0.0.1:0")
		b, errB := net.Listen("tcp", "127.0.0.1:0")
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		health, metrics = a.Addr().(*net.TCPAddr).Port, b.Addr().(*net.TCPAddr).Port
		a.Close()
		b.Close()
	}
	logFile = filepath.Join(e.dir, "karpenter-aws.log")
	opts := karpenter.Options{Provider: karpenter.ProviderAWS, Kubeconfig: e.kubeconfig, ClusterEndpoint: e.rest.Host,
		InterruptionQueue: "karplab", HealthProbePort: health, MetricsPort: metrics, LogLevel: "debug"}
	sup = &karpenter.Supervisor{
		Path: os.Args[0],
		Args: opts.Args(),
		Env: []string{
			childEnv + "=karpenter",
			"KUBECONFIG=" + e.kubeconfig,
			"CLUSTER_NAME=karplab",
			"CLUSTER_ENDPOINT=" + e.rest.Host,
			"INTERRUPTION_QUEUE=karplab",
			"AWS_ENDPOINT_URL=" + e.endpoint,
			"AWS_REGION=eu-west-2",
			"AWS_ACCESS_KEY_ID=" + karpenterKey,
			"AWS_SECRET_ACCESS_KEY=secret",
			"AWS_EC2_METADATA_DISABLED=true",
		},
		LogFile:    logFile,
		MinBackoff: time.Second,
	}
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sup.Stop(ctx) })
	if err := e.waitReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", health), logFile); err != nil {
		t.Fatal(err)
	}
	return sup, health, metrics, logFile
}
