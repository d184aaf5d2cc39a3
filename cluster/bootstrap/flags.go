package bootstrap

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// applyKubeletFlags applies the kubelet command-line flags the lab acts on to n; others (there
// are many) change nothing a simulated node shows. Both --name=value and --name value are
// read, and values may keep the double quotes karpenter-provider-aws writes around them
// (--node-labels="a=b,c=d"), which the shell or systemd strips on a real node.
func applyKubeletFlags(n *Node, flags []string) error {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for i := 0; i < len(flags); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(flags[i], "-"), "=")
		if !strings.HasPrefix(flags[i], "--") {
			continue
		}
		if !hasValue && takesValue[name] && i+1 < len(flags) && !strings.HasPrefix(flags[i+1], "--") {
			i++
			value = flags[i]
		}
		value = unquote(value)
		switch name {
		case "node-labels":
			if value == "" {
				continue
			}
			for _, pair := range strings.Split(value, ",") {
				k, v, ok := strings.Cut(pair, "=")
				if !ok || k == "" {
					return fmt.Errorf("kubelet flag --node-labels: %q is not key=value", pair)
				}
				n.Labels[k] = v
			}
		case "register-with-taints":
			taints, err := parseTaints(value)
			if err != nil {
				return fmt.Errorf("kubelet flag --register-with-taints: %w", err)
			}
			n.Taints = taints
		case "max-pods":
			v, err := strconv.ParseInt(value, 10, 32)
			if err != nil || v <= 0 {
				return fmt.Errorf("kubelet flag --max-pods: %q is not a positive integer", value)
			}
			mp := int32(v)
			n.MaxPods = &mp
		case "kube-reserved", "system-reserved", "eviction-hard":
			sep := "="
			if name == "eviction-hard" {
				sep = "<"
			}
			m, err := parseMapFlag(value, sep)
			if err != nil {
				return fmt.Errorf("kubelet flag --%s: %w", name, err)
			}
			switch name {
			case "kube-reserved":
				n.KubeReserved = m
			case "system-reserved":
				n.SystemReserved = m
			default:
				n.EvictionHard = m
			}
		}
	}
	return nil
}

// takesValue are the flags read above, which may take their value as the next word.
var takesValue = map[string]bool{"node-labels": true, "register-with-taints": true, "max-pods": true,
	"kube-reserved": true, "system-reserved": true, "eviction-hard": true}

// parseTaints reads the kubelet's key[=value]:Effect,... taint list.
func parseTaints(s string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, spec := range strings.Split(s, ",") {
		if spec = strings.TrimSpace(spec); spec == "" {
			continue
		}
		kv, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("taint %q has no :Effect", spec)
		}
		k, v, _ := strings.Cut(kv, "=")
		t := corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}
		if k == "" {
			return nil, fmt.Errorf("taint %q has no key", spec)
		}
		if err := checkTaintEffect(t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// parseMapFlag reads k<sep>v,... (cpu=100m,memory=1Gi; memory.available<100Mi).
func parseMapFlag(s, sep string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, sep)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key%svalue", pair, sep)
		}
		out[k] = v
	}
	return out, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		if u, err := strconv.Unquote(s); err == nil && s[0] == '"' {
			return u
		}
		return s[1 : len(s)-1]
	}
	return s
}

// shellWords splits one shell command line into words as bash would for the quoting user
// data uses: single and double quotes, backslash escapes and line continuations. It does
// not expand variables or substitutions.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) && strings.IndexByte("\"\\$`\n", line[j+1]) >= 0 {
					j++
					if line[j] == '\n' {
						continue
					}
				}
				cur.WriteByte(line[j])
			}
			if j >= len(line) {
				return nil, fmt.Errorf("unterminated double quote")
			}
			i = j
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			if line[i] != '\n' {
				cur.WriteByte(line[i])
				inWord = true
			}
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
