package bootstrap

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// bootstrapSh is the EKS-optimised AL2 AMI's join script.
const bootstrapSh = "/etc/eks/bootstrap.sh"

// kubeletDefaultMaxPods is the kubelet's own maxPods, which AL2 keeps with --use-max-pods false.
const kubeletDefaultMaxPods = 110

// parseBootstrapSh finds the script's top-level call of /etc/eks/bootstrap.sh and reads its
// arguments as bootstrap.sh does. ok is false when the script does not call it.
func parseBootstrapSh(script string) (n Node, ok bool, err error) {
	line, found := bootstrapCall(script)
	if !found {
		return Node{}, false, nil
	}
	words, err := shellWords(line)
	if err != nil {
		return Node{}, true, fmt.Errorf("%s: %w", bootstrapSh, err)
	}
	var extraArgs string
	useMaxPods := true
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") {
			if n.ClusterName == "" {
				n.ClusterName = w
			}
			continue
		}
		// bootstrap.sh reads every option's value from the next word (never --opt=value).
		if i+1 >= len(words) {
			return Node{}, true, fmt.Errorf("%s: option %s has no value", bootstrapSh, w)
		}
		i++
		v := words[i]
		switch w {
		case "--apiserver-endpoint":
			n.APIServerEndpoint = v
		case "--b64-cluster-ca":
			ca, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return Node{}, true, fmt.Errorf("%s: --b64-cluster-ca is not base64: %w", bootstrapSh, err)
			}
			n.CertificateAuthority = ca
		case "--dns-cluster-ip":
			n.ClusterDNS = []string{v}
		case "--use-max-pods":
			useMaxPods = v != "false"
		case "--kubelet-extra-args":
			extraArgs = v
		}
	}
	if n.ClusterName == "" {
		return Node{}, true, fmt.Errorf("%s: no cluster name (its first argument)", bootstrapSh)
	}
	extra, err := shellWords(extraArgs)
	if err != nil {
		return Node{}, true, fmt.Errorf("%s: --kubelet-extra-args: %w", bootstrapSh, err)
	}
	if err := applyKubeletFlags(&n, extra); err != nil {
		return Node{}, true, err
	}
	if !useMaxPods && n.MaxPods == nil {
		mp := int32(kubeletDefaultMaxPods)
		n.MaxPods = &mp
	}
	return n, true, nil
}

// bootstrapCall returns the first top-level command line (continuations joined, comments
// dropped) whose command is bootstrap.sh.
func bootstrapCall(script string) (string, bool) {
	lines := strings.Split(strings.ReplaceAll(script, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		text := lines[i]
		for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, "\\") + " " + lines[i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if fields[0] == bootstrapSh || fields[0] == "bash" && len(fields) > 1 && fields[1] == bootstrapSh {
			if fields[0] == "bash" {
				text = strings.Replace(text, "bash", "", 1)
			}
			return text, true
		}
	}
	return "", false
}
