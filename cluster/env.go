package cluster

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/accesskeys"
)

// Lab-wide constants every process agrees on. The account's region and cluster name are
// the lab's settings (Account, in the home), not constants; its callers' access keys are
// fakeec2/accesskeys'.
const (
	DefaultBootDelay    = 2 * time.Second
	DefaultStartTimeout = 5 * time.Minute
)

// EnvVars are the exports that point kubectl and the aws CLI at the lab, in its account's
// region.
func EnvVars(h Home, ec2Endpoint string) []string {
	acct, err := h.ReadAccount()
	if err != nil {
		acct = DefaultAccount()
	}
	return []string{
		"KUBECONFIG=" + h.Kubeconfig(),
		"AWS_ENDPOINT_URL=" + ec2Endpoint,
		"AWS_REGION=" + acct.Region,
		"AWS_DEFAULT_REGION=" + acct.Region,
		"AWS_ACCESS_KEY_ID=" + accesskeys.Learner,
		"AWS_SECRET_ACCESS_KEY=" + accesskeys.DummySecret,
		"AWS_PAGER=",
	}
}

// ShellExports renders vars as `export K='V'` lines for eval.
func ShellExports(vars []string) string {
	var b strings.Builder
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	return b.String()
}

// writeEnvFile writes the shell exports to $KARPLAB_HOME/env for `source`, and what they put
// on PATH: the aws wrapper and a link to the binary karplab.
func (h Home) writeEnvFile(ec2Endpoint, karplab string) error {
	if err := h.WriteBin(karplab, true); err != nil {
		return err
	}
	content := "# karplab: point kubectl and the aws CLI at the lab. Use: source " + h.EnvFile() + "\n" +
		ShellEnv(h, ec2Endpoint)
	return os.WriteFile(h.EnvFile(), []byte(content), 0o600)
}
