package bootstrap

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
)

// bottlerocketUserData is the part of Bottlerocket's settings the lab acts on. Bottlerocket
// rejects settings it does not know, but its model is large: unknown ones are ignored here.
type bottlerocketUserData struct {
	Settings *struct {
		Kubernetes *struct {
			ClusterName        string              `toml:"cluster-name"`
			APIServer          string              `toml:"api-server"`
			ClusterCertificate string              `toml:"cluster-certificate"`
			ClusterDNSIP       any                 `toml:"cluster-dns-ip"` // a string or a list
			NodeLabels         map[string]string   `toml:"node-labels"`
			NodeTaints         map[string][]string `toml:"node-taints"`
			MaxPods            *int64              `toml:"max-pods"`
			KubeReserved       map[string]string   `toml:"kube-reserved"`
			SystemReserved     map[string]string   `toml:"system-reserved"`
			EvictionHard       map[string]string   `toml:"eviction-hard"`
		} `toml:"kubernetes"`
	} `toml:"settings"`
}

// parseBottlerocket reads Bottlerocket TOML user data. ok is false when the text is not TOML
// with a [settings.kubernetes] table; err is set when it has one Bottlerocket would refuse.
func parseBottlerocket(userData string) (ud *UserData, ok bool, err error) {
	var doc bottlerocketUserData
	if toml.Unmarshal([]byte(userData), &doc) != nil || doc.Settings == nil || doc.Settings.Kubernetes == nil {
		return nil, false, nil
	}
	k := doc.Settings.Kubernetes
	n := Node{
		ClusterName:       k.ClusterName,
		APIServerEndpoint: k.APIServer,
		Labels:            map[string]string{},
		KubeReserved:      k.KubeReserved,
		SystemReserved:    k.SystemReserved,
		EvictionHard:      k.EvictionHard,
	}
	for key, v := range k.NodeLabels {
		n.Labels[key] = v
	}
	if k.ClusterCertificate != "" {
		ca, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k.ClusterCertificate))
		if err != nil {
			return nil, true, fmt.Errorf("bottlerocket settings.kubernetes.cluster-certificate is not base64: %w", err)
		}
		n.CertificateAuthority = ca
	}
	switch dns := k.ClusterDNSIP.(type) {
	case nil:
	case string:
		n.ClusterDNS = []string{dns}
	case []any:
		for _, ip := range dns {
			s, ok := ip.(string)
			if !ok {
				return nil, true, fmt.Errorf("bottlerocket settings.kubernetes.cluster-dns-ip: %v is not a string", ip)
			}
			n.ClusterDNS = append(n.ClusterDNS, s)
		}
	default:
		return nil, true, fmt.Errorf("bottlerocket settings.kubernetes.cluster-dns-ip: %T is not a string or a list", dns)
	}
	if k.MaxPods != nil {
		if *k.MaxPods <= 0 || *k.MaxPods > 1<<31-1 {
			return nil, true, fmt.Errorf("bottlerocket settings.kubernetes.max-pods: %d is out of range", *k.MaxPods)
		}
		mp := int32(*k.MaxPods)
		n.MaxPods = &mp
	}
	taints, err := bottlerocketTaints(k.NodeTaints)
	if err != nil {
		return nil, true, err
	}
	n.Taints = taints
	return &UserData{Format: FormatBottlerocket, Node: n}, true, nil
}

// bottlerocketTaints reads node-taints: key -> ["value:Effect", ...], in key order so the
// Node is the same on every boot.
func bottlerocketTaints(m map[string][]string) ([]corev1.Taint, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []corev1.Taint
	for _, key := range keys {
		for _, ve := range m[key] {
			v, effect, ok := strings.Cut(ve, ":")
			if !ok {
				return nil, fmt.Errorf("bottlerocket settings.kubernetes.node-taints.%q: %q is not value:Effect", key, ve)
			}
			t := corev1.Taint{Key: key, Value: v, Effect: corev1.TaintEffect(effect)}
			if err := checkTaintEffect(t); err != nil {
				return nil, fmt.Errorf("bottlerocket settings.kubernetes.node-taints: %w", err)
			}
			out = append(out, t)
		}
	}
	return out, nil
}
