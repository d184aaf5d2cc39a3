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

	admv1alpha1 "github.com/awslabs/amazon-eks-ami/nodeadm/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

const (
	// NodeConfigContentType is the MIME type nodeadm reads its NodeConfig from.
	NodeConfigContentType = "application/node.eks.aws"
	// ShellContentType is the MIME type of a custom user-data script.
	ShellContentType = `text/x-shellscript; charset="us-ascii"`

	boundary = "//"
)

// Format is the bootstrap flavour user data is written for, i.e. which AMI family reads it.
type Format string

const (
	// FormatAL2023: MIME multipart with nodeadm NodeConfig parts (AL2023, the lab's default).
	FormatAL2023 Format = "AL2023"
	// FormatAL2: a shell script calling /etc/eks/bootstrap.sh (AL2), usually in MIME multipart.
	FormatAL2 Format = "AL2"
	// FormatBottlerocket: TOML settings read by Bottlerocket's early-boot-config.
	FormatBottlerocket Format = "Bottlerocket"
)

// Node is what a node is told at boot: it is rendered into user data and parsed back.
type Node struct {
	ClusterName          string
	APIServerEndpoint    string
	CertificateAuthority []byte
	ClusterDNS           []string
	MaxPods              *int32
	Labels               map[string]string
	Taints               []corev1.Taint
	// KubeReserved, SystemReserved and EvictionHard are the kubelet's settings of those names
	// (resource or signal -> quantity), nil when the user data leaves the AMI's defaults.
	KubeReserved   map[string]string
	SystemReserved map[string]string
	EvictionHard   map[string]string
}

// UserData is parsed user data: the node settings and any shell scripts, in MIME order.
type UserData struct {
	Format  Format
	Node    Node
	Scripts []string
}

// Render returns the MIME multipart user data for n, with customScript (the EC2NodeClass
// spec.userData, may be empty) as a shell part before the NodeConfig, as Karpenter orders them.
func Render(n Node, customScript string) (string, error) {
	cfg := admv1alpha1.NodeConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: admv1alpha1.GroupVersion.String(), Kind: "NodeConfig"},
		Spec: admv1alpha1.NodeConfigSpec{
			Cluster: admv1alpha1.ClusterDetails{
				Name:                 n.ClusterName,
				APIServerEndpoint:    n.APIServerEndpoint,
				CertificateAuthority: n.CertificateAuthority,
			},
		},
	}
	kc := map[string]runtime.RawExtension{}
	for key, v := range map[string]any{
		"maxPods": n.MaxPods, "clusterDNS": n.ClusterDNS, "registerWithTaints": n.Taints,
		"kubeReserved": n.KubeReserved, "systemReserved": n.SystemReserved, "evictionHard": n.EvictionHard,
	} {
		raw, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("encoding kubelet config %s: %w", key, err)
		}
		if string(raw) != "null" {
			kc[key] = runtime.RawExtension{Raw: raw}
		}
	}
	if len(kc) > 0 {
		cfg.Spec.Kubelet.Config = kc
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

// Parse reads user data as the AMI family it is written for would: MIME multipart with
// nodeadm NodeConfig parts (AL2023; what Render and karpenter-provider-aws write), a script
// calling /etc/eks/bootstrap.sh, bare or in MIME (AL2), or Bottlerocket TOML settings. It
// fails when nothing in it tells the node how to join a cluster.
func Parse(userData string) (*UserData, error) {
	trimmed := strings.TrimSpace(userData)
	if strings.HasPrefix(trimmed, "MIME-Version:") || strings.HasPrefix(trimmed, "Content-Type:") {
		return parseMIME(userData)
	}
	if ud, ok, err := parseBottlerocket(userData); ok || err != nil {
		return ud, err
	}
	// AL2 also takes a bare script (EKS's own docs show one); cloud-init runs it as is.
	if n, ok, err := parseBootstrapSh(userData); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return &UserData{Format: FormatAL2, Node: n, Scripts: []string{userData}}, nil
	}
	return nil, fmt.Errorf("user data is not multipart MIME, nor Bottlerocket TOML, nor a script calling /etc/eks/bootstrap.sh")
}

// parseMIME reads multipart user data: nodeadm merges every NodeConfig part in order; cloud-init
// runs every shell part in order, one of which may call bootstrap.sh (AL2).
func parseMIME(userData string) (*UserData, error) {
	msg, err := readMessage(userData)
	if err != nil {
		return nil, err
	}
	out := &UserData{}
	var configs []*admv1alpha1.NodeConfig
	var al2 *Node
	for _, part := range msg {
		switch part.mediaType {
		case "text/x-shellscript":
			out.Scripts = append(out.Scripts, string(part.body))
			if al2 != nil {
				continue // bootstrap.sh joins once; a second call finds the kubelet running
			}
			n, ok, err := parseBootstrapSh(string(part.body))
			if err != nil {
				return nil, err
			}
			if ok {
				al2 = &n
			}
		case NodeConfigContentType:
			cfg, err := decodeNodeConfig(part.body)
			if err != nil {
				return nil, err
			}
			configs = append(configs, cfg)
		}
	}
	switch {
	case len(configs) > 0:
		n, err := nodeFromConfigs(configs)
		if err != nil {
			return nil, err
		}
		out.Format, out.Node = FormatAL2023, n
	case al2 != nil:
		out.Format, out.Node = FormatAL2, *al2
	default:
		return nil, fmt.Errorf("user data has no %s part, nor a script calling /etc/eks/bootstrap.sh: nothing joins the node to a cluster", NodeConfigContentType)
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
