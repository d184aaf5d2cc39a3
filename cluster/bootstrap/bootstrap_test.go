package bootstrap

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestRenderParseRoundTrip(t *testing.T) {
	maxPods := int32(29)
	tests := []struct {
		name   string
		node   Node
		script string
	}{
		{
			name: "labels, taints and a custom script",
			node: Node{
				ClusterName:          "karplab",
				APIServerEndpoint:    "https://127.0.0.1:6443",
				CertificateAuthority: []byte("ca-bundle"),
				ClusterDNS:           []string{"10.96.0.10"},
				MaxPods:              &maxPods,
				Labels:               map[string]string{"karpenter.sh/nodepool": "ziba-general", "karpenter.sh/capacity-type": "spot"},
				Taints:               []corev1.Taint{{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}},
			},
			script: "#!/bin/bash\necho hello\n",
		},
		{
			name: "no script, no labels",
			node: Node{ClusterName: "karplab", APIServerEndpoint: "https://127.0.0.1:6443"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ud, err := Render(tt.node, tt.script)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got, err := Parse(ud)
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, ud)
			}
			want := &UserData{Format: FormatAL2023, Node: tt.node}
			if want.Node.Labels == nil {
				want.Node.Labels = map[string]string{}
			}
			if tt.script != "" {
				want.Scripts = []string{tt.script}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		userData string
		wantErr  string
	}{
		{name: "plain script", userData: "#!/bin/bash\necho hi\n", wantErr: "not multipart"},
		{name: "no NodeConfig", userData: "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: text/x-shellscript\n\necho\n--//--\n", wantErr: "no application/node.eks.aws part"},
		{name: "bad labels", userData: "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster: {name: x, apiServerEndpoint: y}\n  kubelet:\n    flags: [\"--node-labels=novalue\"]\n--//--\n", wantErr: "not key=value"},
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
