package bootstrap

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	// NodeConfigContentType is the MIME type nodeadm reads its NodeConfig from.
	NodeConfigContentType = "application/node.eks.aws"
	// ShellContentType is the MIME type of a custom user-data script.
	ShellContentType = `text/x-shellscript; charset="us-ascii"`

	boundary = "//"
)

// NodeConfig is the subset of nodeadm's node.eks.aws/v1alpha1 NodeConfig the lab uses.
type NodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       NodeConfigSpec `json:"spec"`
}

// NodeConfigSpec holds the cluster connection and the kubelet's registration settings.
type NodeConfigSpec struct {
	Cluster ClusterDetails `json:"cluster"`
	Kubelet KubeletOptions `json:"kubelet"`
}

// ClusterDetails tells the node where its API server is.
type ClusterDetails struct {
	Name                 string `json:"name"`
	APIServerEndpoint    string `json:"apiServerEndpoint"`
	CertificateAuthority []byte `json:"certificateAuthority,omitempty"`
	CIDR                 string `json:"cidr,omitempty"`
}

// KubeletOptions is the kubelet configuration and command-line flags nodeadm applies.
type KubeletOptions struct {
	Config KubeletConfig `json:"config,omitempty"`
	// Flags carries --node-labels=k=v,... as Karpenter writes it.
	Flags []string `json:"flags,omitempty"`
}

// KubeletConfig is the subset of KubeletConfiguration Karpenter sets.
type KubeletConfig struct {
	MaxPods            *int32         `json:"maxPods,omitempty"`
	ClusterDNS         []string       `json:"clusterDNS,omitempty"`
	RegisterWithTaints []corev1.Taint `json:"registerWithTaints,omitempty"`
}

// Node is what a node is told at boot: it is rendered into user data and parsed back.
type Node struct {
	ClusterName          string
	APIServerEndpoint    string
	CertificateAuthority []byte
	ClusterDNS           []string
	MaxPods              *int32
	Labels               map[string]string
	Taints               []corev1.Taint
}

// UserData is parsed user data: the node settings and any custom scripts, in MIME order.
type UserData struct {
	Node    Node
	Scripts []string
}

// Render returns the MIME multipart user data for n, with customScript (the EC2NodeClass
// spec.userData, may be empty) as a shell part before the NodeConfig, as Karpenter orders them.
func Render(n Node, customScript string) (string, error) {
	cfg := NodeConfig{
		APIVersion: "node.eks.aws/v1alpha1",
		Kind:       "NodeConfig",
		Spec: NodeConfigSpec{
			Cluster: ClusterDetails{
				Name:                 n.ClusterName,
				APIServerEndpoint:    n.APIServerEndpoint,
				CertificateAuthority: n.CertificateAuthority,
			},
			Kubelet: KubeletOptions{Config: KubeletConfig{
				MaxPods:            n.MaxPods,
				ClusterDNS:         n.ClusterDNS,
				RegisterWithTaints: n.Taints,
			}},
		},
	}
	if len(n.Labels) > 0 {
		cfg.Spec.Kubelet.Flags = []string{"--node-labels=" + formatLabels(n.Labels)}
	}
	doc, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("encoding NodeConfig: %w", err)
	}

	var buf bytes.Buffer
	buf.WriteString("MIME-Version: 1.0\r\n")
	fmt.Fprintf(&buf, "Content-Type: multipart/mixed; boundary=%q\r\n\r\n", boundary)
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(boundary); err != nil {
		return "", err
	}
	if strings.TrimSpace(customScript) != "" {
		if err := writePart(w, ShellContentType, []byte(customScript)); err != nil {
			return "", err
		}
	}
	if err := writePart(w, NodeConfigContentType, append([]byte("# Karpenter Generated NodeConfig\n"), doc...)); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func writePart(w *multipart.Writer, contentType string, body []byte) error {
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", contentType)
	p, err := w.CreatePart(h)
	if err != nil {
		return fmt.Errorf("writing %s part: %w", contentType, err)
	}
	_, err = p.Write(body)
	return err
}

// Parse reads user data produced by Render (or written by hand in the same MIME layout).
// It fails when there is no NodeConfig part: such a node cannot join the cluster.
func Parse(userData string) (*UserData, error) {
	msg, err := readMessage(userData)
	if err != nil {
		return nil, err
	}
	out := &UserData{}
	found := false
	for _, part := range msg {
		switch part.mediaType {
		case "text/x-shellscript":
			out.Scripts = append(out.Scripts, string(part.body))
		case NodeConfigContentType:
			var cfg NodeConfig
			if err := yaml.UnmarshalStrict(part.body, &cfg); err != nil {
				return nil, fmt.Errorf("parsing NodeConfig: %w", err)
			}
			if cfg.Kind != "NodeConfig" {
				return nil, fmt.Errorf("parsing NodeConfig: kind is %q, want NodeConfig", cfg.Kind)
			}
			labels, err := parseLabelFlags(cfg.Spec.Kubelet.Flags)
			if err != nil {
				return nil, err
			}
			out.Node = Node{
				ClusterName:          cfg.Spec.Cluster.Name,
				APIServerEndpoint:    cfg.Spec.Cluster.APIServerEndpoint,
				CertificateAuthority: cfg.Spec.Cluster.CertificateAuthority,
				ClusterDNS:           cfg.Spec.Kubelet.Config.ClusterDNS,
				MaxPods:              cfg.Spec.Kubelet.Config.MaxPods,
				Labels:               labels,
				Taints:               cfg.Spec.Kubelet.Config.RegisterWithTaints,
			}
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("user data has no %s part: nodeadm has nothing to join the cluster with", NodeConfigContentType)
	}
	return out, nil
}

type part struct {
	mediaType string
	body      []byte
}

func readMessage(userData string) ([]part, error) {
	header, body, ok := strings.Cut(strings.ReplaceAll(userData, "\r\n", "\n"), "\n\n")
	if !ok {
		return nil, fmt.Errorf("user data is not multipart MIME (no header block)")
	}
	var contentType string
	for _, line := range strings.Split(header, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Type") {
			contentType = strings.TrimSpace(v)
		}
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		return nil, fmt.Errorf("user data Content-Type %q is not multipart", contentType)
	}
	r := multipart.NewReader(strings.NewReader(body), params["boundary"])
	var parts []part
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading user data part: %w", err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("reading user data part: %w", err)
		}
		mt, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil {
			return nil, fmt.Errorf("user data part Content-Type: %w", err)
		}
		parts = append(parts, part{mediaType: mt, body: b})
	}
}

func formatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + labels[k]
	}
	return strings.Join(pairs, ",")
}

func parseLabelFlags(flags []string) (map[string]string, error) {
	labels := map[string]string{}
	for _, f := range flags {
		v, ok := strings.CutPrefix(f, "--node-labels=")
		if !ok || v == "" {
			continue
		}
		for _, pair := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(pair, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("kubelet flag --node-labels: %q is not key=value", pair)
			}
			labels[k] = val
		}
	}
	return labels, nil
}
