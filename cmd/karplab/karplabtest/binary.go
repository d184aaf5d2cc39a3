package karplabtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BinaryEnv names a karplab binary already built for this test run.
const BinaryEnv = "KARPLAB_TEST_BINARY"

// Binary returns the path of a karplab binary: $KARPLAB_TEST_BINARY when set (make test
// builds bin/karplab once, so no package links its own), else one built into dir.
func Binary(dir string) (string, error) {
	if exe := os.Getenv(BinaryEnv); exe != "" {
		abs, err := filepath.Abs(exe)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinaryEnv, exe, err)
		}
		return abs, nil
	}
	exe := filepath.Join(dir, "karplab")
	build := exec.Command("go", "build", "-o", exe, "github.com/karplab/karplab/cmd/karplab")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building karplab: %w", err)
	}
	return exe, nil
}
