package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
	"github.com/karplab/karplab/fakeec2"
)

// evalEnv runs script in sh after eval'ing the lab's env file twice (as a learner's shell
// profile might), with path as PATH.
func evalEnv(t *testing.T, h Home, path, script string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `eval "$(cat "$1")"; eval "$(cat "$1")"; ` + script, "sh", h.EnvFile()}, args...)...)
	cmd.Env = []string{"PATH=" + path, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAWSWrapperPassesEndpoint: after eval "$(karplab env)" the aws on PATH is the wrapper,
// which hands the next aws the lab's endpoint as a flag; PATH gains its directory once.
func TestAWSWrapperPassesEndpoint(t *testing.T) {
	h := Home(t.TempDir())
	if err := h.writeEnvFile("http://127.0.0.1:9", fakeKarplab(t)); err != nil {
		t.Fatal(err)
	}
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "aws"), []byte("#!/bin/sh\necho \"real aws: $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := evalEnv(t, h, fake+":/usr/bin:/bin", `aws ec2 describe-regions --output text; echo "PATH=$PATH"`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "real aws: --endpoint-url http://127.0.0.1:9 ec2 describe-regions --output text") {
		t.Errorf("the wrapper did not pass the endpoint:\n%s", out)
	}
	if n := strings.Count(out, h.BinDir()); n != 1 {
		t.Errorf("PATH holds %s %d times, want once:\n%s", h.BinDir(), n, out)
	}
	// karplab itself is on PATH too, from any folder: the labs' scripts call it.
	out, err = evalEnv(t, h, fake+":/usr/bin:/bin", `cd / && karplab ec2 billing`)
	if err != nil || !strings.Contains(out, "the lab's karplab: ec2 billing") {
		t.Errorf("karplab after eval \"$(karplab env)\": %v\n%s", err, out)
	}
	// Two labs' env in one shell (a replay beside a lab): the later one's endpoint, once,
	// and no wrapper calling the other back for ever.
	other := Home(t.TempDir())
	if err := other.writeEnvFile("http://127.0.0.1:10", ""); err != nil {
		t.Fatal(err)
	}
	out, err = evalEnv(t, h, fake+":/usr/bin:/bin", `eval "$(cat "$2")"; aws ec2 describe-regions`, other.EnvFile())
	if err != nil || !strings.Contains(out, "real aws: --endpoint-url http://127.0.0.1:10 ec2 describe-regions") || strings.Count(out, "--endpoint-url") != 1 {
		t.Errorf("with two labs' env: %v\n%s", err, out)
	}
	// Without any aws CLI (/bin may be /usr/bin: link only the tools the script needs).
	tools := t.TempDir()
	for _, tool := range []string{"cat", "dirname"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(tools, tool)); err != nil {
			t.Fatal(err)
		}
	}
	out, err = evalEnv(t, h, tools, "aws ec2 describe-regions")
	if err == nil || !strings.Contains(out, "no aws CLI on PATH besides this wrapper") {
		t.Errorf("with no aws CLI: %v\n%s", err, out)
	}
}

// fakeKarplab is a stand-in for the lab's binary that says what it was asked.
func fakeKarplab(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "karplab")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho \"the lab's karplab: $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAWSWrapperReachesTheLab: Debian's aws CLI v2 (2.9, which ignores AWS_ENDPOINT_URL)
// reaches the emulator through the wrapper.
func TestAWSWrapperReachesTheLab(t *testing.T) {
	karplabtest.DebianAWSCLI(t)
	_, url := karplabtest.ServeEmulator(t, fakeec2.Options{})
	h := Home(t.TempDir())
	if err := h.writeEnvFile(url, ""); err != nil {
		t.Fatal(err)
	}
	out, err := evalEnv(t, h, "/usr/bin:/bin", "aws ec2 describe-regions --query 'Regions[].RegionName' --output text")
	if err != nil || !strings.Contains(out, DefaultRegion) {
		t.Fatalf("aws ec2 describe-regions through the wrapper: %v\n%s", err, out)
	}
}
