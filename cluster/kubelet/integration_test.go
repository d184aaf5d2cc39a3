package kubelet

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/karplab/karplab/cluster/bootstrap"
	"github.com/karplab/karplab/cluster/controlplane"
	"github.com/karplab/karplab/fakeec2"
)

// The control plane is heavy: it starts once, on first use, and TestMain stops it.
var (
	sharedMu  sync.Mutex
	sharedCP  *controlplane.ControlPlane
	sharedDir string
	sharedErr error
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	sharedMu.Lock()
	if sharedCP != nil {
		if err := sharedCP.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
			code = 1
		}
	}
	if sharedDir != "" {
		if code == 0 {
			os.RemoveAll(sharedDir)
		} else {
			fmt.Fprintln(os.Stderr, "kept the control plane's data dir (controlplane.log):", sharedDir)
		}
	}
	sharedMu.Unlock()
	os.Exit(code)
}

func controlPlane(tb testing.TB) *controlplane.ControlPlane {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: starts a control plane")
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedCP == nil && sharedErr == nil {
		sharedDir, sharedErr = os.MkdirTemp("", "kubelet-test-")
		if sharedErr == nil {
			var f *os.File
			f, sharedErr = os.Create(filepath.Join(sharedDir, "controlplane.log"))
			if sharedErr == nil {
				logger := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
				began := time.Now()
				sharedCP, sharedErr = controlplane.Start(context.Background(), controlplane.Config{DataDir: sharedDir, Logger: logger})
				tb.Logf("control plane started in %s", time.Since(began).Round(time.Millisecond))
			}
		}
	}
	if sharedErr != nil {
		tb.Fatalf("starting the control plane: %v", sharedErr)
	}
	return sharedCP
}

// lab is one test's world: an EC2 emulator on a real listener, the real SDK client, the shared
// control plane and a running kubelet fleet.
type lab struct {
	tb      testing.TB
	ec2     *ec2.Client
	kube    kubernetes.Interface
	k       *Kubelet
	opts    Options
	stopRun func()
	ami     string
}

const (
	testPoll          = 200 * time.Millisecond
	testLeaseDuration = 4 * time.Second // renewed every second
)

func newLab(tb testing.TB, ec2opts fakeec2.Options) *lab {
	tb.Helper()
	cp := controlPlane(tb)
	srv, err := fakeec2.New(ec2opts)
	if err != nil {
		tb.Fatalf("fakeec2.New: %v", err)
	}
	hs := httptest.NewServer(srv)
	client := ec2.NewFromConfig(aws.Config{
		Region:      "eu-west-2",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLAB", "lab-secret", ""),
	}, func(o *ec2.Options) { o.BaseEndpoint = aws.String(hs.URL) })
	kube, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		tb.Fatal(err)
	}
	l := &lab{tb: tb, ec2: client, kube: kube}
	tb.Cleanup(func() {
		if l.stopRun != nil {
			l.stopRun()
		}
		l.deleteNodes()
		hs.Close()
		_ = srv.Close()
	})
	l.opts = Options{
		RESTConfig:        cp.RESTConfig(),
		EC2:               client,
		ClusterName:       "karplab",
		PollInterval:      testPoll,
		NodeLeaseDuration: testLeaseDuration,
		Console:           fakeec2.NewAdminClient(hs.URL),
		Logger:            slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	l.start()

	imgs, err := client.DescribeImages(context.Background(), &ec2.DescribeImagesInput{
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}},
	})
	if err != nil {
		tb.Fatalf("DescribeImages: %v", err)
	}
	if len(imgs.Images) == 0 {
		tb.Fatal("DescribeImages: no x86_64 image")
	}
	l.ami = *imgs.Images[0].ImageId
	return l
}

// start runs a new Kubelet on the lab's options (the previous one must be stopped).
func (l *lab) start() {
	l.tb.Helper()
	k, err := New(l.opts)
	if err != nil {
		l.tb.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	l.k = k
	l.stopRun = func() {
		cancel()
		if err := <-done; err != nil {
			l.tb.Errorf("Run: %v", err)
		}
		l.stopRun = nil
	}
}

func (l *lab) deleteNodes() {
	ctx := context.Background()
	if err := l.kube.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		l.tb.Errorf("deleting nodes: %v", err)
	}
	_ = l.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// console is the instance's GetConsoleOutput, decoded.
func (l *lab) console(ctx context.Context, id string) string {
	out, err := l.ec2.GetConsoleOutput(ctx, &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
	if err != nil || out.Output == nil {
		return ""
	}
	b, _ := base64.StdEncoding.DecodeString(*out.Output)
	return string(b)
}

// nodeConfig is what Karpenter's provider would put in the user data.
func (l *lab) nodeConfig(nodepool string) bootstrap.Node {
	return bootstrap.Node{
		ClusterName:       "karplab",
		APIServerEndpoint: sharedCP.RESTConfig().Host,
		ClusterDNS:        []string{"10.96.0.10"},
		MaxPods:           aws.Int32(29),
		Labels: map[string]string{
			"karpenter.sh/nodepool":      nodepool,
			"karpenter.sh/capacity-type": "on-demand",
		},
		Taints: []corev1.Taint{{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}},
	}
}

// launch runs count m5.large instances from a launch template carrying the rendered user data.
func (l *lab) launch(n bootstrap.Node, script string, count int, tags map[string]string) []ec2types.Instance {
	l.tb.Helper()
	ctx := context.Background()
	ud, err := bootstrap.Render(n, script)
	if err != nil {
		l.tb.Fatalf("Render: %v", err)
	}
	name := fmt.Sprintf("karpenter.k8s.aws/%d", time.Now().UnixNano())
	_, err = l.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId:  aws.String(l.ami),
			UserData: aws.String(base64.StdEncoding.EncodeToString([]byte(ud))),
			BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{
				DeviceName: aws.String("/dev/xvda"),
				Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{
					VolumeSize: aws.Int32(80), VolumeType: ec2types.VolumeTypeGp3,
					Encrypted: aws.Bool(true), DeleteOnTermination: aws.Bool(true),
				},
			}},
		},
	})
	if err != nil {
		l.tb.Fatalf("CreateLaunchTemplate: %v", err)
	}
	ec2tags := []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/karplab"), Value: aws.String("owned")}}
	for k, v := range tags {
		ec2tags = append(ec2tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	out, err := l.ec2.RunInstances(ctx, &ec2.RunInstancesInput{
		MinCount:          aws.Int32(int32(count)),
		MaxCount:          aws.Int32(int32(count)),
		InstanceType:      ec2types.InstanceTypeM5Large,
		LaunchTemplate:    &ec2types.LaunchTemplateSpecification{LaunchTemplateName: aws.String(name), Version: aws.String("$Latest")},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: ec2tags}},
	})
	if err != nil {
		l.tb.Fatalf("RunInstances: %v", err)
	}
	return out.Instances
}

// describe returns the instance as EC2 describes it now (private DNS name, state).
func (l *lab) describe(id string) ec2types.Instance {
	l.tb.Helper()
	out, err := l.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || len(out.Reservations) == 0 || len(out.Reservations[0].Instances) == 0 {
		l.tb.Fatalf("DescribeInstances %s: %v", id, err)
	}
	return out.Reservations[0].Instances[0]
}

// eventually polls cond every 100ms until it returns true, failing the test after timeout.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	tb.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, cond)
	if err != nil {
		tb.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}

func (l *lab) status(id string) (NodeStatus, bool) {
	for _, s := range l.k.Nodes() {
		if s.InstanceID == id {
			return s, true
		}
	}
	return NodeStatus{}, false
}

// readyNode waits for the Node of the instance to be registered and Ready, and returns it.
func (l *lab) readyNode(id string, timeout time.Duration) *corev1.Node {
	l.tb.Helper()
	var node *corev1.Node
	eventually(l.tb, timeout, "instance "+id+" to be a Ready node", func(ctx context.Context) (bool, error) {
		st, ok := l.status(id)
		if !ok || st.Phase != PhaseRegistered {
			return false, nil
		}
		n, err := l.kube.CoreV1().Nodes().Get(ctx, st.NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		node = n
		return nodeReady(n), nil
	})
	return node
}

func TestIntegrationRegisterAndRunPods(t *testing.T) {
	l := newLab(t, fakeec2.Options{BootDelay: 500 * time.Millisecond})
	ctx := context.Background()
	launched := l.launch(l.nodeConfig("ziba-general"), "#!/bin/bash\necho configuring\n", 1, map[string]string{"karpenter.sh/nodepool": "ziba-general"})
	id := *launched[0].InstanceId
	node := l.readyNode(id, 30*time.Second)
	inst := l.describe(id)

	name := *inst.PrivateDnsName
	if !strings.HasPrefix(name, "ip-10-0-") || !strings.HasSuffix(name, ".eu-west-2.compute.internal") {
		t.Errorf("instance private DNS name %q is not shaped like EC2's", name)
	}
	zone := *inst.Placement.AvailabilityZone
	ip := *inst.PrivateIpAddress
	if node.Name != name {
		t.Errorf("node name = %q, want the private DNS name %q", node.Name, name)
	}
	if want := "aws:///" + zone + "/" + id; node.Spec.ProviderID != want {
		t.Errorf("providerID = %q, want %q", node.Spec.ProviderID, want)
	}
	wantLabels := map[string]string{
		"karpenter.sh/nodepool":            "ziba-general",
		"karpenter.sh/capacity-type":       "on-demand",
		"kubernetes.io/hostname":           name,
		"kubernetes.io/arch":               "amd64",
		"kubernetes.io/os":                 "linux",
		"node.kubernetes.io/instance-type": "m5.large",
		"topology.kubernetes.io/zone":      zone,
		"topology.kubernetes.io/region":    "eu-west-2",
		"topology.k8s.aws/zone-id":         *inst.Placement.AvailabilityZoneId,
	}
	gotLabels := map[string]string{}
	for k := range wantLabels {
		gotLabels[k] = node.Labels[k]
	}
	if diff := cmp.Diff(wantLabels, gotLabels); diff != "" {
		t.Errorf("node labels (-want +got):\n%s", diff)
	}
	if !hasTaint(node, "karpenter.sh/unregistered", corev1.TaintEffectNoExecute) {
		t.Errorf("node taints %v lack karpenter.sh/unregistered:NoExecute", node.Spec.Taints)
	}
	// m5.large: 2 vCPU, 8 GiB (less 7.5%), maxPods 29 from the user data, the 80 GiB root volume.
	wantCap := quantities("cpu", "2", "memory", "7577Mi", "ephemeral-storage", "80Gi", "pods", "29")
	if diff := cmp.Diff(wantCap, node.Status.Capacity, quantityEqual); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	wantAddrs := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: ip},
		{Type: corev1.NodeInternalDNS, Address: name},
		{Type: corev1.NodeHostName, Address: name},
	}
	if diff := cmp.Diff(wantAddrs, node.Status.Addresses); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	if ni := node.Status.NodeInfo; ni.KubeletVersion != "v1.37.2" || ni.OSImage != OSImage || !strings.HasPrefix(ni.ContainerRuntimeVersion, "containerd://") {
		t.Errorf("nodeInfo = %+v", ni)
	}
	lease, err := l.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node lease: %v", err)
	}
	if got := deref(lease.Spec.HolderIdentity); got != name {
		t.Errorf("lease holder = %q, want the node name", got)
	}
	if len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != node.UID {
		t.Errorf("lease owner references = %+v, want the node", lease.OwnerReferences)
	}

	// Karpenter removes the unregistered taint; then the scheduler may place pods there.
	patch := []byte(`{"spec":{"taints":null}}`)
	if _, err := l.kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("removing taints: %v", err)
	}
	ns := newNamespace(t, l.kube)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "worker", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": name},
			Containers: []corev1.Container{{Name: "app", Image: "public.ecr.aws/ziba/render-worker:1.0",
				Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "500m", "memory", "1Gi")}}},
		},
	}
	if _, err := l.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var running *corev1.Pod
	eventually(t, 60*time.Second, "the pod to run on the node", func(ctx context.Context) (bool, error) {
		p, err := l.kube.CoreV1().Pods(ns).Get(ctx, "worker", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		running = p
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if running.Spec.NodeName != name {
		t.Errorf("pod ran on %q, want %q", running.Spec.NodeName, name)
	}
	cidr := netip.MustParsePrefix(podCIDR(ip))
	if a, err := netip.ParseAddr(running.Status.PodIP); err != nil || !cidr.Contains(a) {
		t.Errorf("pod IP %q is not in the node's pod range %s", running.Status.PodIP, cidr)
	}
	if running.Status.HostIP != ip {
		t.Errorf("host IP = %q, want %q", running.Status.HostIP, ip)
	}
	if running.Status.StartTime == nil || len(running.Status.ContainerStatuses) != 1 || running.Status.ContainerStatuses[0].State.Running == nil {
		t.Errorf("pod status lacks a start time or a running container: %+v", running.Status)
	}

	// The kubelet finishes a deleted pod off.
	if err := l.kube.CoreV1().Pods(ns).Delete(ctx, "worker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the deleted pod to go", func(ctx context.Context) (bool, error) {
		_, err := l.kube.CoreV1().Pods(ns).Get(ctx, "worker", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestIntegrationTerminatedInstanceStopsReporting(t *testing.T) {
	l := newLab(t, fakeec2.Options{BootDelay: -1})
	ctx := context.Background()
	id := *l.launch(l.nodeConfig("ziba-general"), "", 1, nil)[0].InstanceId
	node := l.readyNode(id, 30*time.Second)

	if _, err := l.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the kubelet of the terminated instance to stop", func(context.Context) (bool, error) {
		_, ok := l.status(id)
		return !ok, nil
	})
	lease, err := l.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(testLeaseDuration) // four renew intervals
	after, err := l.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !after.Spec.RenewTime.Equal(lease.Spec.RenewTime) {
		t.Errorf("lease renewed after the instance terminated: %v -> %v", lease.Spec.RenewTime, after.Spec.RenewTime)
	}
	// The controller manager marks the node Unknown after its 50s grace period; then the cloud
	// node lifecycle deletes it, since the instance is gone.
	eventually(t, 90*time.Second, "the node of the terminated instance to be deleted", func(ctx context.Context) (bool, error) {
		_, err := l.kube.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestIntegrationBrokenBootstrapNeverRegisters(t *testing.T) {
	l := newLab(t, fakeec2.Options{BootDelay: -1})
	tests := []struct {
		name       string
		script     string
		tags       map[string]string
		wantReason string
		wantOutput string // in GetConsoleOutput
	}{
		{
			name:       "user data script exits 1",
			script:     "#!/bin/bash\nset -x\necho joining\nexit 1\n",
			wantReason: "user data script part 1 exited with status 1 at line 4, before the kubelet started",
			wantOutput: "Failed running /var/lib/cloud/instance/scripts/part-001 [1]",
		},
		{
			name:       "fault injected for the nodepool",
			tags:       map[string]string{"karpenter.sh/nodepool": "broken"},
			wantReason: "bootstrap broken by fault injection: kubelet cannot reach the API server",
			wantOutput: `"msg":"Command failed","error":"bootstrap broken by fault injection: kubelet cannot reach the API server"`,
		},
	}
	l.k.BreakBootstrap(BootstrapFault{
		Tags:   map[string]string{"karpenter.sh/nodepool": "broken"},
		Reason: "bootstrap broken by fault injection: kubelet cannot reach the API server",
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := *l.launch(l.nodeConfig("ziba-general"), tt.script, 1, tt.tags)[0].InstanceId
			eventually(t, 20*time.Second, "bootstrap to fail", func(context.Context) (bool, error) {
				st, _ := l.status(id)
				return st.Phase == PhaseBootstrapFailed, nil
			})
			st, _ := l.status(id)
			if st.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", st.Reason, tt.wantReason)
			}
			eventually(t, 5*time.Second, "the failure on the instance console", func(ctx context.Context) (bool, error) {
				return strings.Contains(l.console(ctx, id), tt.wantOutput), nil
			})
			if got := *l.describe(id).State; got.Name != ec2types.InstanceStateNameRunning {
				t.Errorf("instance state = %s, want running", got.Name)
			}
			time.Sleep(3 * testPoll)
			nodes, err := l.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes.Items {
				if strings.HasSuffix(n.Spec.ProviderID, "/"+id) {
					t.Errorf("node %s registered for instance %s", n.Name, id)
				}
			}
		})
	}

	// The bootstrap-failure lab's debug hook: the console shows what the script printed (not
	// its source, quotes and redirection), the failure, then cloud-init's end, in time order.
	t.Run("the console shows what the script printed, in time order", func(t *testing.T) {
		script := "#!/bin/bash\nsysctl -w vm.max_map_count=262144\necho \"ziba: bootstrap paused for inspection\" > /dev/console\necho 'to a file' > /tmp/x\nexit 1\necho never\n"
		id := *l.launch(l.nodeConfig("ziba-general"), script, 1, nil)[0].InstanceId
		var console string
		eventually(t, 20*time.Second, "the failure on the instance console", func(ctx context.Context) (bool, error) {
			console = l.console(ctx, id)
			return strings.Contains(console, "finished at"), nil
		})
		lines := strings.Split(console, "\r\n")
		at := func(prefix string) int {
			for i, l := range lines {
				if strings.HasPrefix(l, prefix) {
					return i
				}
			}
			t.Errorf("no console line starts %q:\n%s", prefix, console)
			return -1
		}
		order := []int{
			at("cloud-init[1612]: Cloud-init v. 22.2.2 running 'init' at "),
			at("cloud-init[1921]: vm.max_map_count = 262144"),
			at("ziba: bootstrap paused for inspection"),
			indexContaining(lines, "Failed running /var/lib/cloud/instance/scripts/part-001 [1]"),
			at("cloud-init[1921]: Cloud-init v. 22.2.2 finished at "),
		}
		if !slices.IsSorted(order) {
			t.Errorf("console lines out of order (init, output, console write, failure, finish at lines %v):\n%s", order, console)
		}
		for _, unwanted := range []string{"> /dev/console", `"ziba:`, "to a file", "never", "exit 1"} {
			if strings.Contains(console, unwanted) {
				t.Errorf("console shows %q, which the script does not print:\n%s", unwanted, console)
			}
		}
		if stamps := consoleTimes(console); !slices.IsSortedFunc(stamps, time.Time.Compare) {
			t.Errorf("console timestamps out of order %v:\n%s", stamps, console)
		}
	})

	t.Run("instances outside the fault register; after repair all do", func(t *testing.T) {
		healthy := *l.launch(l.nodeConfig("ziba-general"), "", 1, map[string]string{"karpenter.sh/nodepool": "ziba-general"})[0].InstanceId
		node := l.readyNode(healthy, 30*time.Second)
		eventually(t, 5*time.Second, "the registration on the instance console", func(ctx context.Context) (bool, error) {
			return strings.Contains(l.console(ctx, healthy), `"Successfully registered node" node="`+node.Name+`"`), nil
		})
		l.k.RepairBootstrap()
		repaired := *l.launch(l.nodeConfig("broken"), "", 1, map[string]string{"karpenter.sh/nodepool": "broken"})[0].InstanceId
		l.readyNode(repaired, 30*time.Second)
	})
}

func TestIntegrationRestartAdoptsNodes(t *testing.T) {
	l := newLab(t, fakeec2.Options{BootDelay: -1})
	ctx := context.Background()
	id := *l.launch(l.nodeConfig("ziba-general"), "", 1, nil)[0].InstanceId
	before := l.readyNode(id, 30*time.Second)

	l.stopRun()
	stopped, err := l.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, before.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.start()
	after := l.readyNode(id, 30*time.Second)
	if after.UID != before.UID {
		t.Errorf("node UID changed across the restart (%s -> %s): registered again instead of adopted", before.UID, after.UID)
	}
	st, _ := l.status(id)
	if !st.Adopted {
		t.Errorf("status after restart = %+v, want Adopted", st)
	}
	eventually(t, 3*testLeaseDuration, "the adopted node's lease to be renewed", func(ctx context.Context) (bool, error) {
		lease, err := l.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, before.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return lease.Spec.RenewTime.After(stopped.Spec.RenewTime.Time) && deref(lease.Spec.HolderIdentity) == before.Name, nil
	})
	nodes, err := l.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Errorf("%d nodes after the restart, want 1", len(nodes.Items))
	}
}

// BenchmarkRegister100Instances measures how long 100 instances launched at once take to be
// Ready Nodes (EC2 boot delay zero, so it is the kubelet fleet's own latency).
func BenchmarkRegister100Instances(b *testing.B) {
	const n = 100
	l := newLab(b, fakeec2.Options{BootDelay: -1})
	l.opts.Logger = slog.New(slog.NewTextHandler(b.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	l.stopRun()
	l.start()
	ctx := context.Background()
	for b.Loop() {
		began := time.Now()
		launched := l.launch(l.nodeConfig("bench"), "", n, nil)
		ids := make([]string, len(launched))
		for i, inst := range launched {
			ids[i] = *inst.InstanceId
		}
		var lastRegistered time.Duration
		eventually(b, 3*time.Minute, fmt.Sprintf("%d Ready nodes", n), func(ctx context.Context) (bool, error) {
			nodes, err := l.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return false, err
			}
			ready := 0
			for i := range nodes.Items {
				if nodeReady(&nodes.Items[i]) {
					ready++
				}
			}
			if lastRegistered == 0 && len(nodes.Items) >= n {
				lastRegistered = time.Since(began)
			}
			return ready >= n, nil
		})
		allReady := time.Since(began)
		b.ReportMetric(allReady.Seconds(), "s/100-nodes-ready")
		b.ReportMetric(lastRegistered.Seconds(), "s/100-nodes-registered")
		// Where the time goes: EC2 polling (last instance seen running) and each boot.
		var lastSeen time.Duration
		var boots []time.Duration
		for _, st := range l.k.Nodes() {
			lastSeen = max(lastSeen, st.RunningSince.Sub(began))
			boots = append(boots, st.RegisteredAt.Sub(st.RunningSince))
		}
		slices.Sort(boots)
		if len(boots) > 0 {
			b.ReportMetric(lastSeen.Seconds(), "s/last-seen-running")
			b.ReportMetric(float64(boots[len(boots)/2].Milliseconds()), "ms/boot-p50")
			b.ReportMetric(float64(boots[len(boots)-1].Milliseconds()), "ms/boot-max")
		}

		b.StopTimer()
		if _, err := l.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}); err != nil {
			b.Fatal(err)
		}
		eventually(b, time.Minute, "the fleet to stop", func(context.Context) (bool, error) { return len(l.k.Nodes()) == 0, nil })
		l.deleteNodes()
		b.StartTimer()
	}
}

func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func newNamespace(t *testing.T, kube kubernetes.Interface) string {
	t.Helper()
	ns, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "kubelet-test-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace: %v", err)
		}
	})
	// Pods need the namespace's default ServiceAccount, which a controller creates.
	eventually(t, 30*time.Second, "the default service account", func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return ns.Name
}

func TestIntegrationKWOKProviderNodes(t *testing.T) {
	l := newLab(t, fakeec2.Options{BootDelay: -1})
	l.stopRun()
	l.opts.ManageKWOKProviderNodes = true
	l.start()
	ctx := context.Background()
	// What Karpenter's kwok provider creates: a Node without a machine behind it.
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "kwok-fake-1", Labels: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Spec: corev1.NodeSpec{ProviderID: "kwok://kwok-fake-1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses-node"}},
	} {
		if _, err := l.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the kwok provider's node to be Ready", func(ctx context.Context) (bool, error) {
		n, err := l.kube.CoreV1().Nodes().Get(ctx, "kwok-fake-1", metav1.GetOptions{})
		return err == nil && nodeReady(n), nil
	})
	n, err := l.kube.CoreV1().Nodes().Get(ctx, "someone-elses-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Reason == "KubeletReady" {
			t.Errorf("a node outside the selector was made Ready: %+v", c)
		}
	}
}

func indexContaining(lines []string, sub string) int {
	return slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, sub) })
}

// consoleTimes reads the wall-clock stamps of console lines: cloud-init's start and end
// (RFC 1123), its log lines (2006-01-02 15:04:05,000), to the second.
func consoleTimes(console string) []time.Time {
	var out []time.Time
	for _, l := range strings.Split(console, "\r\n") {
		if m := rfc1123At.FindStringSubmatch(l); m != nil {
			if t, err := time.Parse(time.RFC1123Z, m[1]); err == nil {
				out = append(out, t.Truncate(time.Second))
			}
		} else if m := logStamp.FindStringSubmatch(l); m != nil {
			if t, err := time.Parse("2006-01-02 15:04:05", m[1]); err == nil {
				out = append(out, t)
			}
		}
	}
	return out
}

var (
	rfc1123At = regexp.MustCompile(` at ([A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4})`)
	logStamp  = regexp.MustCompile(`^cloud-init\[\d+\]: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}),\d{3} - `)
)
