package karplabtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// RequireClientsEnv, when set (.ci/run sets it), makes a test whose real client is missing
// fail instead of skip: CI promised to install it.
const RequireClientsEnv = "KARPLAB_REQUIRE_CLIENTS"

// RequireClient skips t because the real client what (the aws CLI, boto3, chromium, ...)
// is missing, or fails it when CI has promised the clients.
func RequireClient(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(RequireClientsEnv) != "" {
		t.Fatalf("%s is missing, and %s says CI installed it", what, RequireClientsEnv)
	}
	t.Skipf("%s is missing; skipping", what)
}

// AWSCLI is one installed aws CLI: Debian's v2 (/usr/bin/aws), pip's v1, ...
type AWSCLI struct {
	Name string // v1, v2
	Path string
}

// AWSCLIs lists the distinct aws CLIs of this machine by major version: Debian's v2 in
// /usr/bin first, then the first other aws on PATH (pip's v1 in the pyenv Python). It
// skips t (or fails it, RequireClient) when there is none.
func AWSCLIs(t testing.TB) []AWSCLI {
	t.Helper()
	var out []AWSCLI
	seen := map[string]bool{}
	paths := []string{debianAWS}
	if p, err := exec.LookPath("aws"); err == nil {
		paths = append(paths, unshim(p))
	}
	for _, p := range paths {
		b, err := exec.Command(p, "--version").CombinedOutput()
		v := strings.Fields(string(b))
		if err != nil || len(v) == 0 || !strings.HasPrefix(v[0], "aws-cli/") {
			continue
		}
		major := "v" + strings.SplitN(strings.TrimPrefix(v[0], "aws-cli/"), ".", 2)[0]
		if !seen[major] {
			seen[major] = true
			out = append(out, AWSCLI{Name: major, Path: p})
		}
	}
	if len(out) == 0 {
		RequireClient(t, "the aws CLI (apt-get install awscli)")
	}
	return out
}

// Run runs the CLI against the emulator at url as accessKey, with an empty home so no
// profile or endpoint of the machine's leaks in; it returns stdout, stderr and the exit
// error (an *ExitCodeError). The CLI's Python stays up between calls (awscliserve.go).
func (c AWSCLI) Run(t testing.TB, url, accessKey string, args ...string) (string, string, error) {
	t.Helper()
	env, argv := c.runEnv(t, url, accessKey, args)
	a, err := c.serve(envVars(env), t.TempDir(), 60*time.Second, argv...)
	if err == nil && a.RC != 0 {
		err = &ExitCodeError{Code: a.RC}
	}
	return a.Stdout, a.Stderr, err
}

// RunProcess is Run in a process of its own, as a shell starts the CLI.
func (c AWSCLI) RunProcess(t testing.TB, url, accessKey string, args ...string) (string, string, error) {
	t.Helper()
	env, argv := c.runEnv(t, url, accessKey, args)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Path, argv...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		err = &ExitCodeError{Code: ee.ExitCode()}
	}
	return stdout.String(), stderr.String(), err
}

// runEnv is Run's environment and argv.
func (c AWSCLI) runEnv(t testing.TB, url, accessKey string, args []string) ([]string, []string) {
	home := t.TempDir()
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID="+accessKey, "AWS_SECRET_ACCESS_KEY=lab", "AWS_DEFAULT_REGION=eu-west-2",
		"AWS_REGION=eu-west-2", "AWS_CONFIG_FILE="+filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"), "AWS_PAGER=", "HOME="+home, "AWS_ENDPOINT_URL=")
	return env, append([]string{"--endpoint-url", url, "--output", "json"}, args...)
}

// pyenvShim finds the pyenv a shim script execs ("/root/.pyenv/libexec/pyenv" exec aws).
var pyenvShim = regexp.MustCompile(`exec "([^"]*/libexec/pyenv)" exec`)

// unshim returns the program a pyenv shim at path runs, else path. The shim is a bash script
// that asks pyenv for the version on every call: about a second of the v1 CLI's two.
func unshim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return path
	}
	m := pyenvShim.FindSubmatch(b)
	if m == nil {
		return path
	}
	out, err := exec.Command(string(m[1]), "which", filepath.Base(path)).Output()
	if err != nil {
		return path
	}
	if real := strings.TrimSpace(string(out)); real != "" {
		return real
	}
	return path
}

// DebianAWSCLI is Debian's aws CLI v2 (/usr/bin/aws), which the course's scripts run; it
// skips t (or fails it, RequireClient) when it is missing.
func DebianAWSCLI(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(debianAWS); err != nil {
		RequireClient(t, "the aws CLI (apt-get install awscli)")
	}
	return debianAWS
}

// debianAWS is where Debian's awscli package puts the aws CLI v2.
const debianAWS = "/usr/bin/aws"
