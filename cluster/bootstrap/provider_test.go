package bootstrap

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awsbootstrap "github.com/aws/karpenter-provider-aws/pkg/providers/amifamily/bootstrap"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestParseProviderUserData parses what karpenter-provider-aws v1.15.0's own bootstrappers
// write for each AMI family (its code, run here, not a copy of its output).
func TestParseProviderUserData(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nlab\n-----END CERTIFICATE-----\n")
	caB64 := base64.StdEncoding.EncodeToString(ca)
	labels := map[string]string{
		"karpenter.sh/nodepool": "ziba-general", "karpenter.sh/capacity-type": "on-demand",
		"karpenter.k8s.aws/ec2nodeclass": "ziba-general", "node.kubernetes.io/instance-type": "m6i.large",
	}
	taints := []corev1.Taint{
		{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute},
		{Key: "dedicated", Value: "render", Effect: corev1.TaintEffectNoSchedule},
	}
	maxPods := int32(29)
	parsed := &awsv1.ParsedKubeletConfig{ClusterDNS: []string{"10.96.0.10"}, MaxPods: new(intstr.FromInt32(29)),
		KubeReserved: map[string]string{"cpu": "80m"}, EvictionHard: map[string]string{"memory.available": "5%"}}
	unparsed := awsv1.KubeletConfiguration{
		"maxPods":                     awsv1.JSONValue(29),
		"clusterDNS":                  awsv1.JSONValue([]string{"10.96.0.10"}),
		"kubeReserved":                awsv1.JSONValue(map[string]string{"cpu": "80m"}),
		"evictionHard":                awsv1.JSONValue(map[string]string{"memory.available": "5%"}),
		"imageGCHighThresholdPercent": awsv1.JSONValue(85), // passed through, not acted on
	}
	opts := func(custom string) awsbootstrap.Options {
		o := awsbootstrap.Options{ClusterName: "karplab", ClusterEndpoint: "https://127.0.0.1:6443", ClusterCIDR: new("10.96.0.0/12"),
			KubeletConfig: parsed, UnparsedKubeletConfig: unparsed, Taints: taints, Labels: labels, CABundle: &caB64}
		if custom != "" {
			o.CustomUserData = &custom
		}
		return o
	}
	want := Node{ClusterName: "karplab", APIServerEndpoint: "https://127.0.0.1:6443", CertificateAuthority: ca,
		ClusterDNS: []string{"10.96.0.10"}, MaxPods: &maxPods, Labels: labels, Taints: taints,
		KubeReserved: map[string]string{"cpu": "80m"}, EvictionHard: map[string]string{"memory.available": "5%"}}
	failing := "#!/bin/bash\necho configuring\nexit 3\n"
	customNodeConfig := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 50\n    flags:\n    - --node-labels=team=ziba\n"
	tests := []struct {
		name        string
		bootstrap   awsbootstrap.Bootstrapper
		wantFormat  Format
		wantScripts []string // scripts that must be among the parsed ones, in order
		edit        func(*Node)
	}{
		{name: "AL2023 nodeadm", bootstrap: awsbootstrap.Nodeadm{Options: opts("")}, wantFormat: FormatAL2023},
		{name: "AL2023 with a failing custom script", bootstrap: awsbootstrap.Nodeadm{Options: opts(failing)},
			wantFormat: FormatAL2023, wantScripts: []string{failing}},
		{
			// Karpenter's NodeConfig comes last and wins; the user's flags still apply.
			name: "AL2023 with a custom NodeConfig", bootstrap: awsbootstrap.Nodeadm{Options: opts(customNodeConfig)}, wantFormat: FormatAL2023,
			edit: func(n *Node) { n.Labels = merged(labels, map[string]string{"team": "ziba"}) },
		},
		{name: "AL2 bootstrap.sh", bootstrap: awsbootstrap.EKS{Options: opts("")}, wantFormat: FormatAL2,
			edit: func(n *Node) {
				n.KubeReserved, n.EvictionHard = map[string]string{"cpu": "80m"}, map[string]string{"memory.available": "5%"}
			}},
		{name: "AL2 with a failing custom script", bootstrap: awsbootstrap.EKS{Options: opts(failing)}, wantFormat: FormatAL2, wantScripts: []string{failing}},
		// node-taints is a TOML table: the taints come back in key order.
		{name: "Bottlerocket", bootstrap: awsbootstrap.Bottlerocket{Options: opts("")}, wantFormat: FormatBottlerocket,
			edit: func(n *Node) { n.Taints = []corev1.Taint{taints[1], taints[0]} }},
		{
			name: "Bottlerocket over custom settings", wantFormat: FormatBottlerocket,
			bootstrap: awsbootstrap.Bottlerocket{Options: opts("[settings.kubernetes]\nmax-pods = 7\n[settings.kubernetes.node-labels]\nteam = \"ziba\"\n")},
			edit: func(n *Node) {
				n.Labels = merged(labels, map[string]string{"team": "ziba"})
				n.Taints = []corev1.Taint{taints[1], taints[0]}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b64, err := tt.bootstrap.Script(context.Background())
			if err != nil {
				t.Fatalf("the provider's Script: %v", err)
			}
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(string(raw))
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, raw)
			}
			w := want
			w.Labels = merged(labels, nil)
			if tt.edit != nil {
				tt.edit(&w)
			}
			if diff := cmp.Diff(w, got.Node); diff != "" {
				t.Errorf("node (-want +got):\n%s\n%s", diff, raw)
			}
			if got.Format != tt.wantFormat {
				t.Errorf("format %q, want %q", got.Format, tt.wantFormat)
			}
			i := 0
			for _, s := range got.Scripts {
				if i < len(tt.wantScripts) && s == tt.wantScripts[i] {
					i++
				}
			}
			if i != len(tt.wantScripts) {
				t.Errorf("scripts %q, want %q among them", got.Scripts, tt.wantScripts)
			}
		})
	}
}

func merged(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestParseFormatsErrors(t *testing.T) {
	mimeWith := func(contentType, body string) string {
		return "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: " + contentType + "\n\n" + body + "\n--//--\n"
	}
	tests := []struct {
		name     string
		userData string
		wantErr  string
	}{
		{name: "NodeConfig unknown field", userData: mimeWith(NodeConfigContentType, "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  clusterr: {}\n"), wantErr: `unknown field "clusterr"`},
		{name: "NodeConfig wrong apiVersion", userData: mimeWith(NodeConfigContentType, "apiVersion: node.eks.aws/v1\nkind: NodeConfig\n"), wantErr: "apiVersion"},
		{name: "bad taint effect", userData: mimeWith(NodeConfigContentType, "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: ['--register-with-taints=a=b:Never']\n"), wantErr: `effect "Never"`},
		{name: "bad max-pods", userData: mimeWith(NodeConfigContentType, "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: ['--max-pods=lots']\n"), wantErr: "--max-pods"},
		{name: "bootstrap.sh without a cluster", userData: "#!/bin/bash\n/etc/eks/bootstrap.sh --apiserver-endpoint 'https://x'\n", wantErr: "no cluster name"},
		{name: "bootstrap.sh unterminated quote", userData: mimeWith(ShellContentType, "/etc/eks/bootstrap.sh 'karplab --kubelet-extra-args"), wantErr: "unterminated"},
		{name: "bottlerocket bad taint", userData: "[settings.kubernetes]\ncluster-name = \"karplab\"\n[settings.kubernetes.node-taints]\na = [\"NoSchedule\"]\n", wantErr: "not value:Effect"},
		{name: "bottlerocket bad CA", userData: "[settings.kubernetes]\ncluster-name = \"karplab\"\ncluster-certificate = \"%%%\"\n", wantErr: "not base64"},
		{name: "TOML without kubernetes settings", userData: "[settings.host-containers.admin]\nenabled = true\n", wantErr: "not multipart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.userData)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string
	}{
		{name: "quotes", line: `/etc/eks/bootstrap.sh 'karplab' --kubelet-extra-args '--node-labels="a=b,c=d" --max-pods=29'`,
			want: []string{"/etc/eks/bootstrap.sh", "karplab", "--kubelet-extra-args", `--node-labels="a=b,c=d" --max-pods=29`}},
		{name: "double quotes and escapes", line: `a "b \"c\" d" e\ f`, want: []string{"a", `b "c" d`, "e f"}},
		{name: "continuation", line: "a \\\nb", want: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := shellWords(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
