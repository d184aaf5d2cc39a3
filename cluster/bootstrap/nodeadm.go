package bootstrap

import (
	"fmt"

	admv1alpha1 "github.com/awslabs/amazon-eks-ami/nodeadm/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// decodeNodeConfig reads one NodeConfig part with nodeadm's own API types, strictly: a field
// nodeadm does not know fails the boot, as it does on the AMI.
func decodeNodeConfig(body []byte) (*admv1alpha1.NodeConfig, error) {
	var cfg admv1alpha1.NodeConfig
	if err := yaml.UnmarshalStrict(body, &cfg); err != nil {
		return nil, fmt.Errorf("parsing NodeConfig: %w", err)
	}
	if cfg.Kind != "NodeConfig" {
		return nil, fmt.Errorf("parsing NodeConfig: kind is %q, want NodeConfig", cfg.Kind)
	}
	if want := admv1alpha1.GroupVersion.String(); cfg.APIVersion != want {
		return nil, fmt.Errorf("parsing NodeConfig: apiVersion is %q, want %s", cfg.APIVersion, want)
	}
	return &cfg, nil
}

// nodeFromConfigs merges NodeConfigs in MIME order as nodeadm does (later cluster fields and
// kubelet config keys win, flags accumulate) and reads the node's settings from the result.
// Kubelet flags win over the kubelet config, as on the kubelet's command line.
func nodeFromConfigs(configs []*admv1alpha1.NodeConfig) (Node, error) {
	var cluster admv1alpha1.ClusterDetails
	config := map[string][]byte{}
	var flags []string
	for _, c := range configs {
		cd := c.Spec.Cluster
		if cd.Name != "" {
			cluster.Name = cd.Name
		}
		if cd.APIServerEndpoint != "" {
			cluster.APIServerEndpoint = cd.APIServerEndpoint
		}
		if len(cd.CertificateAuthority) > 0 {
			cluster.CertificateAuthority = cd.CertificateAuthority
		}
		for k, v := range c.Spec.Kubelet.Config {
			config[k] = v.Raw
		}
		flags = append(flags, c.Spec.Kubelet.Flags...)
	}
	n := Node{
		ClusterName:          cluster.Name,
		APIServerEndpoint:    cluster.APIServerEndpoint,
		CertificateAuthority: cluster.CertificateAuthority,
	}
	fields := []struct {
		key string
		dst any
	}{
		{"maxPods", &n.MaxPods},
		{"clusterDNS", &n.ClusterDNS},
		{"registerWithTaints", &n.Taints},
		{"kubeReserved", &n.KubeReserved},
		{"systemReserved", &n.SystemReserved},
		{"evictionHard", &n.EvictionHard},
	}
	for _, f := range fields {
		raw, ok := config[f.key]
		if !ok || len(raw) == 0 || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return Node{}, fmt.Errorf("parsing NodeConfig: kubelet config %s: %w", f.key, err)
		}
	}
	if len(n.Taints) == 0 {
		n.Taints = nil
	}
	for _, t := range n.Taints {
		if err := checkTaintEffect(t); err != nil {
			return Node{}, fmt.Errorf("parsing NodeConfig: kubelet config registerWithTaints: %w", err)
		}
	}
	if err := applyKubeletFlags(&n, flags); err != nil {
		return Node{}, err
	}
	return n, nil
}

func checkTaintEffect(t corev1.Taint) error {
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return fmt.Errorf("taint %q has effect %q, want NoSchedule, PreferNoSchedule or NoExecute", t.Key, t.Effect)
}
