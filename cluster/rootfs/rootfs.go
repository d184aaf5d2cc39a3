package rootfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/karplab/karplab/cluster/kind/engine"
)

// Debian's defaults: trixie is the suite both images are built from.
const (
	DebianSuite  = "trixie"
	DebianMirror = "http://deb.debian.org/debian"
)

// Run runs a command; its error names the command and carries the last lines it printed.
func Run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %w: %s", filepath.Base(name), err, engine.LastLines(out.String(), 3))
	}
	return out.String(), nil
}

// RequireTools checks that this process is root (debootstrap and chroot need it) and that
// each tool is on PATH; a tool is its command and what brings it. how says how to build as
// root ("make kind-image").
func RequireTools(how string, tools ...[2]string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("debootstrap and chroot need root: build the image as root (%s)", how)
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t[0]); err != nil {
			return fmt.Errorf("%s is not on PATH (%s)", t[0], t[1])
		}
	}
	return nil
}

// Tools are what every build here needs on the host.
var Tools = [][2]string{{"debootstrap", "apt-get install debootstrap"}, {"tar", "apt-get install tar"}, {"chroot", "coreutils"}}

// Debootstrap makes a minbase Debian root file system of suite in dir, with packages.
// Package lists name virtual packages' providers themselves: debootstrap does not resolve
// virtual packages (awscli's python3-cryptography needs python3-cffi-backend named).
func Debootstrap(ctx context.Context, dir, suite, mirror string, packages []string) error {
	if mirror == "" {
		mirror = DebianMirror
	}
	_, err := Run(ctx, filepath.Dir(dir), nil, "debootstrap", "--variant=minbase", "--include="+strings.Join(packages, ","), suite, dir, mirror)
	return err
}

// Import streams the root file system in dir into the engine as image name.
func Import(ctx context.Context, e *engine.Engine, dir, name string, changes ...string) error {
	tarCmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "--xattrs", "-C", dir, "-c", ".")
	var tarErr strings.Builder
	tarCmd.Stderr = &tarErr
	stream, err := tarCmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := tarCmd.Start(); err != nil {
		return err
	}
	args := []string{"import"}
	for _, c := range changes {
		args = append(args, "--change", c)
	}
	_, err = e.Run(ctx, stream, append(args, "-", name)...)
	if werr := tarCmd.Wait(); werr != nil {
		err = errors.Join(err, fmt.Errorf("tar -C %s -c .: %w: %s", dir, werr, engine.LastLines(tarErr.String(), 3)))
	}
	return err
}

// Step is one step of a build.
type Step struct {
	Name string
	Run  func(context.Context) error
}

// StepError is a build step that failed: what was built, the step's name and its error.
type StepError struct {
	What string
	Step string
	Err  error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("building %s, step %q: %v", e.What, e.Step, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// RunSteps runs steps in order, printing one line to status as each starts and ends (with
// its time), and stops at the first that fails with its StepError.
func RunSteps(ctx context.Context, status io.Writer, what string, steps []Step) error {
	for i, s := range steps {
		fmt.Fprintf(status, " • [%d/%d] %s ...\n", i+1, len(steps), s.Name)
		start := time.Now()
		if err := s.Run(ctx); err != nil {
			fmt.Fprintf(status, " ✗ [%d/%d] %s\n", i+1, len(steps), s.Name)
			return &StepError{What: what, Step: s.Name, Err: err}
		}
		fmt.Fprintf(status, " ✓ [%d/%d] %s (%s)\n", i+1, len(steps), s.Name, time.Since(start).Round(time.Second))
	}
	return nil
}

// RemoveOlder removes the engine's images of repository other than those whose tag starts
// with keep (older inputs): each is hundreds of megabytes. One a container still uses stays.
func RemoveOlder(ctx context.Context, e *engine.Engine, repository, keep string, status io.Writer) {
	out, err := e.Run(ctx, nil, "images", "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		return
	}
	for _, img := range strings.Fields(out) {
		if strings.HasPrefix(img, repository+":") && !strings.HasPrefix(img, keep) {
			if _, err := e.Run(ctx, nil, "rmi", img); err == nil {
				fmt.Fprintf(status, "Removed %s, the image of older inputs\n", img)
			}
		}
	}
}

// CopyFile copies src to dst with mode, following symbolic links.
func CopyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// AppendFile appends s to the file at path, creating it.
func AppendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
