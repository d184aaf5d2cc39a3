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

// BinDir holds what `karplab env` puts first on PATH: the aws wrapper, and karplab itself
// (a lab's scripts call it: karplab ec2 billing, karplab time skip).
func (h Home) BinDir() string { return h.path("bin") }

// WriteBin (re)writes the aws wrapper in BinDir and links BinDir/karplab to the binary
// karplab. With replace false an existing link that still resolves is kept (`karplab env`
// run by another binary, say `go run`'s, does not take over the daemon's); karplab "" writes
// the wrapper only.
func (h Home) WriteBin(karplab string, replace bool) error {
	if err := os.MkdirAll(h.BinDir(), 0o755); err != nil {
		return err
	}
	path := filepath.Join(h.BinDir(), "aws")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(awsWrapper), 0o755); err != nil {
		return fmt.Errorf("writing the aws wrapper: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if karplab == "" {
		return nil
	}
	link := filepath.Join(h.BinDir(), "karplab")
	if _, err := os.Stat(link); err == nil && !replace {
		return nil
	}
	abs, err := filepath.Abs(karplab)
	if err != nil {
		return err
	}
	os.Remove(link + ".tmp")
	if err := os.Symlink(abs, link+".tmp"); err != nil {
		return fmt.Errorf("linking karplab into %s: %w", h.BinDir(), err)
	}
	return os.Rename(link+".tmp", link)
}

// ShellEnv is what `karplab env` prints and $KARPLAB_HOME/env holds: the exports of
// EnvVars, and the aws wrapper's directory first on PATH (once, however often it is eval'd).
func ShellEnv(h Home, ec2Endpoint string) string {
	bin := ShellExports([]string{"KARPLAB_BIN=" + h.BinDir()})
	return ShellExports(EnvVars(h, ec2Endpoint)) + bin +
		`case ":$PATH:" in *":$KARPLAB_BIN:"*) ;; *) export PATH="$KARPLAB_BIN:$PATH" ;; esac` + "\n"
}
