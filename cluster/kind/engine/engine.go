package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
)

// Engine is a container engine that can run kind's nodes.
type Engine struct {
	// Name is the engine's command: docker, podman, nerdctl, finch or nerdctl.lima.
	Name string
	// Env is what its commands need in their environment beyond this process's
	// (CONTAINERS_CONF when the lab points podman at its own containers.conf).
	Env []string
	// Notes are what the user should know of the choice, one line each: why not the engine
	// kind would pick, and what the lab set for this one.
	Notes []string
}

// Label is the engine's name as people write it.
func (e *Engine) Label() string {
	switch e.Name {
	case "docker":
		return "Docker"
	case "podman":
		return "podman"
	}
	return e.Name
}

// ProviderOption is kind's provider for the engine.
func (e *Engine) ProviderOption() kindcluster.ProviderOption {
	switch e.Name {
	case "docker":
		return kindcluster.ProviderWithDocker()
	case "podman":
		return kindcluster.ProviderWithPodman()
	}
	return kindcluster.ProviderWithNerdctl(e.Name)
}

// Export puts Env into this process's environment: the kind library runs the engine's
// command with the process's environment and offers no other way to pass it.
func (e *Engine) Export() error {
	for _, kv := range e.Env {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("setting %s for kind's %s commands: %w", k, e.Name, err)
		}
	}
	return nil
}

// Command is the engine's command with args and Env.
func (e *Engine) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.Name, args...)
	if len(e.Env) > 0 {
		cmd.Env = append(os.Environ(), e.Env...)
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs the engine's command; its error says the command and the last lines it printed.
func (e *Engine) Run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := e.Command(ctx, args...)
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), &RunError{Command: e.Name + " " + strings.Join(args, " "), Output: out.String(), Err: err}
	}
	return out.String(), nil
}

// RunError is a command that failed: its command line, what it printed and how it ended.
type RunError struct {
	Command string
	Output  string
	Err     error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("%s: %s", e.Command, orElse(LastLines(e.Output, 1), e.Err.Error()))
}

func (e *RunError) Unwrap() error { return e.Err }

// LastLines is the last n non-empty lines of out, joined with " | ", without docker's usage
// hint ("Run 'docker run --help' ...").
func LastLines(out string, n int) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Run '") {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, " | ")
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ImageExists says whether the engine holds image.
func (e *Engine) ImageExists(ctx context.Context, image string) bool {
	_, err := e.Run(ctx, nil, "image", "inspect", image)
	return err == nil
}

// ErrNoEngine means no container engine kind can use is on PATH.
var ErrNoEngine = errors.New("the kind backend needs a container engine (Docker, podman or nerdctl), and none is on PATH; install one, or use --backend embedded")

// ErrRefused means no engine here starts the container ChooseFor was asked for.
var ErrRefused = errors.New("no container engine here can run")

// ErrPrivilegedRefused means no engine here starts a privileged container, and every kind
// node is one.
var ErrPrivilegedRefused = errors.New("no container engine here can run kind's node, a privileged container")
