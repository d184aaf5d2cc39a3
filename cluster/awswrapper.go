package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// awsWrapper is $KARPLAB_HOME/bin/aws. aws CLI v2 before 2.13 (Debian 12 ships 2.9) and v1
// before 1.29 ignore AWS_ENDPOINT_URL and would call the real AWS; the wrapper passes the
// lab's endpoint as --endpoint-url to the next aws on PATH, so every version of the real
// CLI reaches the lab.
const awsWrapper = `#!/bin/sh
# karplab: the aws CLI, pointed at the lab. aws CLI v2 before 2.13 and v1 before 1.29
# ignore AWS_ENDPOINT_URL; this passes it as --endpoint-url to the next aws on PATH.
# Written by karplab; eval "$(karplab env)" puts its directory first on PATH.
here=$(cd "$(dirname "$0")" && pwd)
IFS=:
for d in $PATH; do
  [ -n "$d" ] && [ -x "$d/aws" ] || continue
  [ "$(cd "$d" 2>/dev/null && pwd)" = "$here" ] && continue
  # another lab's wrapper (two labs' env in one shell) would call this one back
  grep -q '^# karplab: the aws CLI, pointed at the lab' "$d/aws" 2>/dev/null && continue
  unset IFS
  if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
    exec "$d/aws" --endpoint-url "$AWS_ENDPOINT_URL" "$@"
  fi
  exec "$d/aws" "$@"
done
echo "karplab: no aws CLI on PATH besides this wrapper (apt-get install awscli)" >&2
exit 127
`

// BinDir holds the aws wrapper `karplab env` puts first on PATH.
func (h Home) BinDir() string { return h.path("bin") }

// WriteAWSWrapper (re)writes the aws wrapper in BinDir.
func (h Home) WriteAWSWrapper() error {
	if err := os.MkdirAll(h.BinDir(), 0o755); err != nil {
		return err
	}
	path := filepath.Join(h.BinDir(), "aws")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(awsWrapper), 0o755); err != nil {
		return fmt.Errorf("writing the aws wrapper: %w", err)
	}
	return os.Rename(tmp, path)
}

// ShellEnv is what `karplab env` prints and $KARPLAB_HOME/env holds: the exports of
// EnvVars, and the aws wrapper's directory first on PATH (once, however often it is eval'd).
func ShellEnv(h Home, ec2Endpoint string) string {
	bin := ShellExports([]string{"KARPLAB_BIN=" + h.BinDir()})
	return ShellExports(EnvVars(h, ec2Endpoint)) + bin +
		`case ":$PATH:" in *":$KARPLAB_BIN:"*) ;; *) export PATH="$KARPLAB_BIN:$PATH" ;; esac` + "\n"
}
