package kubelet

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karplab/karplab/cluster/bootstrap"
)

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func m5Large() ec2types.InstanceTypeInfo {
	return ec2types.InstanceTypeInfo{
		InstanceType:  "m5.large",
		VCpuInfo:      &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(2)},
		MemoryInfo:    &ec2types.MemoryInfo{SizeInMiB: aws.Int64(8192)},
		ProcessorInfo: &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{"x86_64"}},
		NetworkInfo:   &ec2types.NetworkInfo{MaximumNetworkInterfaces: aws.Int32(3), Ipv4AddressesPerInterface: aws.Int32(10)},
	}
}

func c7gXLarge() ec2types.InstanceTypeInfo {
	return ec2types.InstanceTypeInfo{
		InstanceType:  "c7g.xlarge",
		VCpuInfo:      &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(4)},
		MemoryInfo:    &ec2types.MemoryInfo{SizeInMiB: aws.Int64(8192)},
		ProcessorInfo: &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{"arm64"}},
		NetworkInfo: &ec2types.NetworkInfo{
			MaximumNetworkInterfaces:  aws.Int32(4),
			Ipv4AddressesPerInterface: aws.Int32(15),
			DefaultNetworkCardIndex:   aws.Int32(0),
			NetworkCards:              []ec2types.NetworkCardInfo{{NetworkCardIndex: aws.Int32(0), MaximumNetworkInterfaces: aws.Int32(4)}},
		},
	}
}

func mustUserData(t *testing.T, n bootstrap.Node, script string) *bootstrap.UserData {
	t.Helper()
	raw, err := bootstrap.Render(n, script)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	ud, err := bootstrap.Parse(raw)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return ud
}

func quantities(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestBuildNode(t *testing.T) {
	launch := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	unregistered := corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}
	dedicated := corev1.Taint{Key: "dedicated", Value: "ziba", Effect: corev1.TaintEffectNoSchedule}
	settings := nodeSettings{ClusterName: "karplab", Region: "eu-west-2", VMMemoryOverheadPercent: DefaultVMMemoryOverheadPercent}
	cloudHash := shortHash("cluster/karplab")

	tests := []struct {
		name string
		m    func(t *testing.T) machine
		want *corev1.Node
	}{
		{
			name: "Karpenter user data on an m5.large",
			m: func(t *testing.T) machine {
				return machine{
					Instance: ec2types.Instance{
						InstanceId:       aws.String("i-0123456789abcdef0"),
						InstanceType:     "m5.large",
						Architecture:     "x86_64",
						PrivateIpAddress: aws.String("10.0.1.23"),
						PrivateDnsName:   aws.String("ip-10-0-1-23.eu-west-2.compute.internal"),
						Placement:        &ec2types.Placement{AvailabilityZone: aws.String("eu-west-2a"), AvailabilityZoneId: aws.String("euw2-az2")},
						LaunchTime:       &launch,
					},
					UserData: mustUserData(t, bootstrap.Node{
						ClusterName:       "karplab",
						APIServerEndpoint: "https://127.0.0.1:6443",
						MaxPods:           aws.Int32(29),
						Labels: map[string]string{
							"karpenter.sh/nodepool":      "ziba-general",
							"karpenter.sh/capacity-type": "on-demand",
							// A wrong value the cloud provider's own label overrides.
							"node.kubernetes.io/instance-type": "m5.xlarge",
						},
						Taints: []corev1.Taint{dedicated, unregistered},
					}, ""),
					InstanceType:  m5Large(),
					RootVolumeGiB: 80,
				}
			},
			want: &corev1.Node{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
				ObjectMeta: metav1.ObjectMeta{
					Name: "ip-10-0-1-23.eu-west-2.compute.internal",
					Labels: map[string]string{
						"karpenter.sh/nodepool":                    "ziba-general",
						"karpenter.sh/capacity-type":               "on-demand",
						"kubernetes.io/hostname":                   "ip-10-0-1-23.eu-west-2.compute.internal",
						"kubernetes.io/os":                         "linux",
						"kubernetes.io/arch":                       "amd64",
						"beta.kubernetes.io/os":                    "linux",
						"beta.kubernetes.io/arch":                  "amd64",
						"node.kubernetes.io/instance-type":         "m5.large",
						"beta.kubernetes.io/instance-type":         "m5.large",
						"topology.kubernetes.io/zone":              "eu-west-2a",
						"topology.kubernetes.io/region":            "eu-west-2",
						"failure-domain.beta.kubernetes.io/zone":   "eu-west-2a",
						"failure-domain.beta.kubernetes.io/region": "eu-west-2",
						"topology.k8s.aws/zone-id":                 "euw2-az2",
						"k8s.io/cloud-provider-aws":                cloudHash,
					},
					Annotations: map[string]string{
						"alpha.kubernetes.io/provided-node-ip":                   "10.0.1.23",
						"volumes.kubernetes.io/controller-managed-attach-detach": "true",
					},
				},
				Spec: corev1.NodeSpec{
					ProviderID: "aws:///eu-west-2a/i-0123456789abcdef0",
					Taints:     []corev1.Taint{dedicated, unregistered},
				},
				Status: corev1.NodeStatus{
					// 8192Mi less 7.5% VM overhead; kube-reserved 11*29+255Mi and 70m; eviction 100Mi, 10%.
					Capacity:    quantities("cpu", "2", "memory", "7577Mi", "ephemeral-storage", "80Gi", "pods", "29"),
					Allocatable: quantities("cpu", "1930m", "memory", "6903Mi", "ephemeral-storage", "71Gi", "pods", "29"),
					Addresses: []corev1.NodeAddress{
						{Type: corev1.NodeInternalIP, Address: "10.0.1.23"},
						{Type: corev1.NodeInternalDNS, Address: "ip-10-0-1-23.eu-west-2.compute.internal"},
						{Type: corev1.NodeHostName, Address: "ip-10-0-1-23.eu-west-2.compute.internal"},
					},
					DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
					NodeInfo: corev1.NodeSystemInfo{
						MachineID:               shortHash("machine-id/i-0123456789abcdef0"),
						SystemUUID:              ec2SystemUUID("i-0123456789abcdef0"),
						BootID:                  uuidFrom("boot/i-0123456789abcdef0/20260301T100000.000000000"),
						KernelVersion:           "6.12.46-66.121.amzn2023.x86_64",
						OSImage:                 "Amazon Linux 2023.9.20251014",
						ContainerRuntimeVersion: "containerd://2.1.4",
						KubeletVersion:          "v1.37.2",
						OperatingSystem:         "linux",
						Architecture:            "amd64",
					},
				},
			},
		},
		{
			name: "arm64 without maxPods or private DNS name: ENI formula, name from the IP",
			m: func(t *testing.T) machine {
				return machine{
					Instance: ec2types.Instance{
						InstanceId:       aws.String("i-0fedcba9876543210"),
						InstanceType:     "c7g.xlarge",
						PrivateIpAddress: aws.String("10.0.2.7"),
						Placement:        &ec2types.Placement{AvailabilityZone: aws.String("eu-west-2b")},
					},
					UserData:     mustUserData(t, bootstrap.Node{ClusterName: "karplab", APIServerEndpoint: "https://127.0.0.1:6443"}, ""),
					InstanceType: c7gXLarge(),
				}
			},
			want: &corev1.Node{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
				ObjectMeta: metav1.ObjectMeta{
					Name: "ip-10-0-2-7.eu-west-2.compute.internal",
					Labels: map[string]string{
						"kubernetes.io/hostname":                   "ip-10-0-2-7.eu-west-2.compute.internal",
						"kubernetes.io/os":                         "linux",
						"kubernetes.io/arch":                       "arm64",
						"beta.kubernetes.io/os":                    "linux",
						"beta.kubernetes.io/arch":                  "arm64",
						"node.kubernetes.io/instance-type":         "c7g.xlarge",
						"beta.kubernetes.io/instance-type":         "c7g.xlarge",
						"topology.kubernetes.io/zone":              "eu-west-2b",
						"topology.kubernetes.io/region":            "eu-west-2",
						"failure-domain.beta.kubernetes.io/zone":   "eu-west-2b",
						"failure-domain.beta.kubernetes.io/region": "eu-west-2",
						"k8s.io/cloud-provider-aws":                cloudHash,
					},
					Annotations: map[string]string{
						"alpha.kubernetes.io/provided-node-ip":                   "10.0.2.7",
						"volumes.kubernetes.io/controller-managed-attach-detach": "true",
					},
				},
				Spec: corev1.NodeSpec{ProviderID: "aws:///eu-west-2b/i-0fedcba9876543210"},
				Status: corev1.NodeStatus{
					// 8192-64 (Graviton CMA) less 7.5%; 4*(15-1)+2 = 58 pods; CPU reserve 60+10+5+5m.
					Capacity:    quantities("cpu", "4", "memory", "7518Mi", "ephemeral-storage", "20Gi", "pods", "58"),
					Allocatable: quantities("cpu", "3920m", "memory", "6525Mi", "ephemeral-storage", "17Gi", "pods", "58"),
					Addresses: []corev1.NodeAddress{
						{Type: corev1.NodeInternalIP, Address: "10.0.2.7"},
						{Type: corev1.NodeInternalDNS, Address: "ip-10-0-2-7.eu-west-2.compute.internal"},
						{Type: corev1.NodeHostName, Address: "ip-10-0-2-7.eu-west-2.compute.internal"},
					},
					DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
					NodeInfo: corev1.NodeSystemInfo{
						MachineID:               shortHash("machine-id/i-0fedcba9876543210"),
						SystemUUID:              ec2SystemUUID("i-0fedcba9876543210"),
						BootID:                  uuidFrom("boot/i-0fedcba9876543210/"),
						KernelVersion:           "6.12.46-66.121.amzn2023.aarch64",
						OSImage:                 "Amazon Linux 2023.9.20251014",
						ContainerRuntimeVersion: "containerd://2.1.4",
						KubeletVersion:          "v1.37.2",
						OperatingSystem:         "linux",
						Architecture:            "arm64",
					},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildNode(tt.m(t), settings)
			if err != nil {
				t.Fatalf("buildNode: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, quantityEqual); diff != "" {
				t.Errorf("buildNode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildNodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		inst    ec2types.Instance
		wantErr string
	}{
		{name: "no ID", inst: ec2types.Instance{}, wantErr: "no ID"},
		{name: "no zone", inst: ec2types.Instance{InstanceId: aws.String("i-1"), PrivateIpAddress: aws.String("10.0.0.1")}, wantErr: "no availability zone"},
		{name: "no IP", inst: ec2types.Instance{InstanceId: aws.String("i-1"), Placement: &ec2types.Placement{AvailabilityZone: aws.String("eu-west-2a")}}, wantErr: "no private IPv4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildNode(machine{Instance: tt.inst, InstanceType: m5Large()}, nodeSettings{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("buildNode error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestNodeResources(t *testing.T) {
	// Shaped like a p4d.24xlarge: four network cards of 15 ENIs, the VPC CNI uses the default one.
	big := ec2types.InstanceTypeInfo{
		VCpuInfo:   &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(96)},
		MemoryInfo: &ec2types.MemoryInfo{SizeInMiB: aws.Int64(1179648)},
		GpuInfo:    &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Manufacturer: aws.String("NVIDIA"), Count: aws.Int32(8)}}},
		NetworkInfo: &ec2types.NetworkInfo{
			MaximumNetworkInterfaces:  aws.Int32(60),
			Ipv4AddressesPerInterface: aws.Int32(50),
			DefaultNetworkCardIndex:   aws.Int32(0),
			NetworkCards: []ec2types.NetworkCardInfo{
				{NetworkCardIndex: aws.Int32(0), MaximumNetworkInterfaces: aws.Int32(15)},
				{NetworkCardIndex: aws.Int32(1), MaximumNetworkInterfaces: aws.Int32(15)},
			},
		},
	}
	tests := []struct {
		name            string
		it              ec2types.InstanceTypeInfo
		arch            string
		maxPods, rootGi int32
		wantCap         corev1.ResourceList
		wantAlloc       corev1.ResourceList
	}{
		{
			name: "m5.large", it: m5Large(), arch: "amd64", maxPods: 29,
			wantCap:   quantities("cpu", "2", "memory", "7577Mi", "ephemeral-storage", "20Gi", "pods", "29"),
			wantAlloc: quantities("cpu", "1930m", "memory", "6903Mi", "ephemeral-storage", "17Gi", "pods", "29"),
		},
		{
			name: "m5.large with maxPods 110: kube-reserved still counts the 29 ENI-limited pods", it: m5Large(), arch: "amd64", maxPods: 110,
			wantCap:   quantities("cpu", "2", "memory", "7577Mi", "ephemeral-storage", "20Gi", "pods", "110"),
			wantAlloc: quantities("cpu", "1930m", "memory", "6903Mi", "ephemeral-storage", "17Gi", "pods", "110"),
		},
		{
			// CPU reserve 60+10+10+(92 cores * 2.5m) = 310m; memory 1179648 - 88474 = 1091174Mi;
			// 15*(50-1)+2 = 737 pods, kube-reserved 11*737+255 = 8362Mi.
			name: "96 vCPU GPU type", it: big, arch: "amd64", maxPods: 737, rootGi: 100,
			wantCap:   quantities("cpu", "96", "memory", "1091174Mi", "ephemeral-storage", "100Gi", "pods", "737", "nvidia.com/gpu", "8"),
			wantAlloc: quantities("cpu", "95690m", "memory", "1082712Mi", "ephemeral-storage", "89Gi", "pods", "737", "nvidia.com/gpu", "8"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotCap, gotAlloc := nodeResources(tt.it, tt.arch, tt.maxPods, tt.rootGi, DefaultVMMemoryOverheadPercent)
			if diff := cmp.Diff(tt.wantCap, gotCap, quantityEqual); diff != "" {
				t.Errorf("capacity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAlloc, gotAlloc, quantityEqual); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
		})
	}
}

func TestENIMaxPods(t *testing.T) {
	tests := []struct {
		name string
		it   ec2types.InstanceTypeInfo
		want int32
	}{
		{name: "m5.large", it: m5Large(), want: 29},
		{name: "c7g.xlarge, default network card", it: c7gXLarge(), want: 58},
		{name: "no network info", it: ec2types.InstanceTypeInfo{}, want: 110},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := eniMaxPods(tt.it); got != tt.want {
				t.Errorf("eniMaxPods = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPodCIDR(t *testing.T) {
	tests := []struct{ ip, want string }{
		{"10.0.0.0", "100.64.0.0/26"},
		{"10.0.1.23", "100.64.69.192/26"}, // (1*256+23)*64 = 17856 = 69*256 + 192
		{"10.0.255.255", "100.127.255.192/26"},
		{"not an ip", "100.64.0.0/26"},
	}
	for _, tt := range tests {
		if got := podCIDR(tt.ip); got != tt.want {
			t.Errorf("podCIDR(%q) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}

func TestInstanceIDFromProviderID(t *testing.T) {
	tests := []struct {
		pid, want string
		ok        bool
	}{
		{"aws:///eu-west-2a/i-0123", "i-0123", true},
		{"kwok://node-1", "", false},
		{"aws:///eu-west-2a/", "", false},
		{"aws:///i-0123", "", false},
	}
	for _, tt := range tests {
		got, ok := instanceIDFromProviderID(tt.pid)
		if got != tt.want || ok != tt.ok {
			t.Errorf("instanceIDFromProviderID(%q) = %q, %v; want %q, %v", tt.pid, got, ok, tt.want, tt.ok)
		}
	}
}

func TestScriptFailure(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		wantStatus int
		wantLine   int
	}{
		{name: "empty", script: ""},
		{name: "plain success", script: "#!/bin/bash\necho hello\n"},
		{name: "top-level exit 1", script: "#!/bin/bash\necho starting\nexit 1\n", wantStatus: 1, wantLine: 3},
		{name: "exit with comment", script: "#!/bin/bash\nexit 3 # broken on purpose\n", wantStatus: 3, wantLine: 2},
		{name: "exit 0 then exit 1 is never reached", script: "exit 0\nexit 1\n"},
		{name: "exit after a statement on the same line", script: "echo bye; exit 2\n", wantStatus: 2, wantLine: 1},
		{name: "exit inside if", script: "if [ -f /nope ]; then\n  exit 1\nfi\necho ok\n"},
		{name: "one-line if", script: "if false; then exit 1; fi\n"},
		{name: "exit inside a function", script: "fail() {\n  exit 1\n}\necho ok\n"},
		{name: "exit inside a loop", script: "for i in 1 2; do\n  exit 1\ndone\n"},
		{name: "exit inside case", script: "case $x in\n  a) exit 1;;\nesac\n"},
		{name: "conditional exit", script: "test -f /etc/ok || exit 1\n"},
		{name: "subshell exit", script: "( exit 1 )\necho ok\n"},
		{name: "exit in a heredoc", script: "cat <<EOF > /tmp/x\nexit 1\nEOF\necho ok\n"},
		{name: "exit quoted", script: "echo 'exit 1'\n"},
		{name: "exit after heredoc", script: "cat <<-'END'\n\texit 1\n\tEND\nexit 4\n", wantStatus: 4, wantLine: 4},
		{name: "set -e and false", script: "set -euo pipefail\nfalse\n", wantStatus: 1, wantLine: 2},
		{name: "false without set -e", script: "false\necho ok\n"},
		{name: "exit status taken mod 256", script: "exit 257\n", wantStatus: 1, wantLine: 1},
		{name: "exit with a variable", script: "exit $rc\n"},
		{name: "continued line", script: "echo a \\\n  b\nexit 5\n", wantStatus: 5, wantLine: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, line := scriptFailure(tt.script)
			if status != tt.wantStatus || line != tt.wantLine {
				t.Errorf("scriptFailure = (%d, line %d), want (%d, line %d)", status, line, tt.wantStatus, tt.wantLine)
			}
		})
	}
}

// What a script prints on the console is what running it prints: words unquoted, redirections
// followed, nothing after the command that ends it, nothing the lab cannot evaluate.
func TestScriptOutput(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []consoleWrite
	}{
		{name: "the bootstrap-failure lab's debug hook",
			script: "#!/bin/bash\nsysctl -w vm.max_map_count=262144\necho \"ziba: bootstrap paused for inspection\" > /dev/console\nexit 1\necho never\n",
			want:   []consoleWrite{{text: "vm.max_map_count = 262144"}, {text: "ziba: bootstrap paused for inspection", raw: true}}},
		{name: "quotes and escapes", script: `echo 'single  spaced' "double \"q\"" a\ b` + "\n",
			want: []consoleWrite{{text: `single  spaced double "q" a b`}}},
		{name: "to a file or /dev/null prints nothing", script: "echo hidden > /etc/x\necho gone >>/var/log/y\necho null 2>&1 >/dev/null\n"},
		{name: "stderr and stdout reach cloud-init's output", script: "echo err >&2\necho both 2>&1\necho e 2>/dev/null\n",
			want: []consoleWrite{{text: "err"}, {text: "both"}, {text: "e"}}},
		{name: "no space before the console device", script: "echo raw >/dev/console\n", want: []consoleWrite{{text: "raw", raw: true}}},
		{name: "expansions and pipelines are not guessed", script: "echo \"host $HOSTNAME\"\necho `date`\necho a | tee /dev/console\n"},
		{name: "printf and echo -e", script: "printf '%s joined %d\\n' node 3\necho -e 'a\\tb'\n",
			want: []consoleWrite{{text: "node joined 3"}, {text: "a\tb"}}},
		{name: "inside a block, not run unconditionally", script: "if true; then\n  echo maybe\nfi\ntest -f x && echo cond\n"},
		{name: "sysctl -q is quiet", script: "sysctl -q -w a.b=1\n"},
		{name: "set -e and false end it", script: "set -e\necho one\nfalse\necho two\n", want: []consoleWrite{{text: "one"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, scriptOutput(tt.script), cmp.AllowUnexported(consoleWrite{})); diff != "" {
				t.Errorf("scriptOutput (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildNodeFormats registers nodes from each AMI family's user data: the OS they run,
// the kubelet flags' labels, taints and max pods, and their reservations in allocatable.
func TestBuildNodeFormats(t *testing.T) {
	inst := ec2types.Instance{
		InstanceId: aws.String("i-0123456789abcdef0"), InstanceType: "m5.large", PrivateIpAddress: aws.String("10.0.1.23"),
		Placement: &ec2types.Placement{AvailabilityZone: aws.String("eu-west-2a")},
	}
	unregistered := corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name       string
		userData   string
		wantOS     string
		wantTaints []corev1.Taint
		wantAlloc  corev1.ResourceList
	}{
		{
			name: "AL2 bootstrap.sh with system-reserved",
			userData: "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n" +
				"#!/bin/bash -xe\n/etc/eks/bootstrap.sh 'karplab' --apiserver-endpoint 'https://127.0.0.1:6443' \\\n--use-max-pods false \\\n" +
				"--kubelet-extra-args '--node-labels=\"karpenter.sh/nodepool=ziba-general\" --register-with-taints=\"karpenter.sh/unregistered:NoExecute\" --max-pods=20 --system-reserved=\"cpu=50m,memory=100Mi\"'\n--//--\n",
			wantOS:     OSImageAL2,
			wantTaints: []corev1.Taint{unregistered},
			wantAlloc:  quantities("cpu", "1880m", "memory", "6803Mi", "ephemeral-storage", "17Gi", "pods", "20"),
		},
		{
			// memory: 7577Mi - 500Mi - 5% of 7577Mi (397253018 bytes, rounded up).
			name: "Bottlerocket with kube-reserved and a percentage eviction threshold",
			userData: "[settings.kubernetes]\ncluster-name = 'karplab'\napi-server = 'https://127.0.0.1:6443'\nmax-pods = 20\n" +
				"[settings.kubernetes.node-labels]\n'karpenter.sh/nodepool' = 'ziba-general'\n" +
				"[settings.kubernetes.node-taints]\n'karpenter.sh/unregistered' = [':NoExecute']\ndedicated = ['render:NoSchedule']\n" +
				"[settings.kubernetes.kube-reserved]\ncpu = '100m'\nmemory = '500Mi'\n[settings.kubernetes.eviction-hard]\n'memory.available' = '5%'\n",
			wantOS:     OSImageBottlerocket,
			wantTaints: []corev1.Taint{{Key: "dedicated", Value: "render", Effect: corev1.TaintEffectNoSchedule}, unregistered},
			wantAlloc:  quantities("cpu", "1900m", "memory", "7023519334", "ephemeral-storage", "17Gi", "pods", "20"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ud, err := bootstrap.Parse(tt.userData)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			node, err := buildNode(machine{Instance: inst, UserData: ud, InstanceType: m5Large()}, nodeSettings{ClusterName: "karplab", VMMemoryOverheadPercent: DefaultVMMemoryOverheadPercent})
			if err != nil {
				t.Fatal(err)
			}
			if got := node.Status.NodeInfo.OSImage; got != tt.wantOS {
				t.Errorf("OS image %q, want %q", got, tt.wantOS)
			}
			if got := node.Labels["karpenter.sh/nodepool"]; got != "ziba-general" {
				t.Errorf("label karpenter.sh/nodepool = %q, want ziba-general", got)
			}
			if got := node.Spec.ProviderID; got != "aws:///eu-west-2a/i-0123456789abcdef0" {
				t.Errorf("provider ID %q", got)
			}
			if diff := cmp.Diff(tt.wantTaints, node.Spec.Taints); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAlloc, node.Status.Allocatable, quantityEqual); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConsoleText(t *testing.T) {
	at := time.Date(2025, 10, 14, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "registered on AL2023", text: consoleRegistered(bootstrap.FormatAL2023, "ip-10-0-1-23.eu-west-2.compute.internal", at),
			want: []string{"Started kubelet.service", `kubelet[2101]: I1014 09:30:00.000000 kubelet_node_status.go:78] "Successfully registered node" node="ip-10-0-1-23.eu-west-2.compute.internal"`}},
		{name: "script part 2 failed", text: consoleScriptFailed(2, 3, at),
			want: []string{"cloud-init[1921]: 2025-10-14 09:30:00,000 - subp.py[WARNING]: Failed running /var/lib/cloud/instance/scripts/part-002 [3]", "Failed to run module scripts-user"}},
		{name: "nodeadm failed", text: consoleBootstrapFailed(bootstrap.FormatAL2023, `parsing "x"`, at),
			want: []string{`nodeadm[1790]: {"level":"fatal","ts":"2025-10-14T09:30:00Z","msg":"Command failed","error":"parsing \"x\""}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.text, w) {
					t.Errorf("console text lacks %q:\n%s", w, tt.text)
				}
			}
			if !strings.HasSuffix(tt.text, "\r\n") {
				t.Errorf("console text does not end in CRLF, as a serial console's lines do: %q", tt.text)
			}
		})
	}
}
