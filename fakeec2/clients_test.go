package fakeec2_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireClient skips a test whose real client (the aws CLI, chromium) is missing, or
// fails it when CI has promised the clients (KARPLAB_REQUIRE_CLIENTS, set by .ci/run).
func requireClient(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("KARPLAB_REQUIRE_CLIENTS") != "" {
		t.Fatalf("%s is missing, and KARPLAB_REQUIRE_CLIENTS says CI installed it", what)
	}
	t.Skipf("%s is missing; skipping", what)
}

// awsCLI is one installed aws CLI: Debian's v2 (/usr/bin/aws), pip's v1, ...
type awsCLI struct {
	name, path string
}

// awsCLIs lists the distinct aws CLIs on this machine, by major version.
func awsCLIs(t *testing.T) []awsCLI {
	t.Helper()
	var out []awsCLI
	seen := map[string]bool{}
	paths := []string{"/usr/bin/aws"}
	if p, err := exec.LookPath("aws"); err == nil {
		paths = append(paths, p)
	}
	for _, p := range paths {
		b, err := exec.Command(p, "--version").CombinedOutput()
		if err != nil {
			continue
		}
		v := strings.Fields(string(b))
		if len(v) == 0 || !strings.HasPrefix(v[0], "aws-cli/") {
			continue
		}
		major := strings.SplitN(strings.TrimPrefix(v[0], "aws-cli/"), ".", 2)[0]
		if seen[major] {
			continue
		}
		seen[major] = true
		out = append(out, awsCLI{name: "v" + major, path: p})
	}
	if len(out) == 0 {
		requireClient(t, "the aws CLI (apt-get install awscli)")
	}
	return out
}

// run runs the CLI against the emulator at url as accessKey, with an empty home so no
// profile of the machine's leaks in; it returns stdout, stderr and the exit error.
func (c awsCLI) run(t *testing.T, url, accessKey string, args ...string) (string, string, error) {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, append([]string{"--endpoint-url", url, "--output", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+accessKey, "AWS_SECRET_ACCESS_KEY=lab", "AWS_DEFAULT_REGION=eu-west-2",
		"AWS_REGION=eu-west-2", "AWS_CONFIG_FILE="+filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"), "AWS_PAGER=", "HOME="+home, "AWS_ENDPOINT_URL=")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
