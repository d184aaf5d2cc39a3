package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ProviderEnv is the variable kind's CLI reads to pick an engine instead of detecting one.
const ProviderEnv = "KIND_EXPERIMENTAL_PROVIDER"

// known are the engines kind can use, in the order kind's DetectNodeProvider tries them, and
// the first word of their `-v` line (what kind's IsAvailable checks).
var known = []struct{ name, version string }{
	{"docker", "Docker version"},
	{"nerdctl", "nerdctl version"},
	{"finch", "finch version"},
	{"podman", "podman version"},
}

// Candidates are the engines kind could use here, in kind's order: the one ProviderEnv names
// (a value kind knows), else each engine whose client is on PATH and answers `-v` as kind
// expects. It returns ErrNoEngine when there is none.
func Candidates(ctx context.Context) ([]string, error) {
	switch p := os.Getenv(ProviderEnv); p {
	case "docker", "podman", "nerdctl", "finch", "nerdctl.lima":
		return []string{p}, nil
	}
	var found []string
	for _, k := range known {
		if k.name == "finch" && len(found) > 0 && found[len(found)-1] == "nerdctl" {
			continue // kind takes nerdctl before finch
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := exec.CommandContext(ctx, k.name, "-v").Output()
		cancel()
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(out)), k.version) {
			found = append(found, k.name)
		}
	}
	if len(found) == 0 {
		return nil, ErrNoEngine
	}
	return found, nil
}

// Options say where the lab keeps what it writes for an engine.
type Options struct {
	// ContainersConf is where the lab writes its own containers.conf for podman when podman's
	// default rlimits exceed the host's hard limits (in the lab home).
	ContainersConf string
}

// Choose returns the first engine of Candidates that starts a privileged container. When
// kind's own pick cannot and a later one can, the engine's Notes say so. When none can, the
// error (ErrPrivilegedRefused) says what each engine said.
func Choose(ctx context.Context, opts Options) (*Engine, error) {
	e, refusals, err := chooseBy(ctx, opts, "kind's privileged node", (*Engine).probePrivileged)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("%w: %s; use --backend embedded", ErrPrivilegedRefused, strings.Join(refusals, "; "))
	}
	return e, nil
}

// ChooseFor returns the first engine of Candidates that starts a container with runArgs
// (what, in words, names that container in the refusals). When none can, the error
// (ErrRefused) says what each engine said.
func ChooseFor(ctx context.Context, opts Options, what string, runArgs ...string) (*Engine, error) {
	probe := func(e *Engine, ctx context.Context) error { return e.ProbeRun(ctx, runArgs...) }
	e, refusals, err := chooseBy(ctx, opts, what, probe)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("%w %s: %s", ErrRefused, what, strings.Join(refusals, "; "))
	}
	return e, nil
}

// chooseBy returns the first candidate that probe accepts, or nil and what each one said.
func chooseBy(ctx context.Context, opts Options, what string, probe func(*Engine, context.Context) error) (*Engine, []string, error) {
	names, err := Candidates(ctx)
	if err != nil {
		return nil, nil, err
	}
	var refusals []string
	for _, name := range names {
		e := &Engine{Name: name}
		err := e.prove(ctx, opts, probe)
		if err == nil {
			if len(refusals) > 0 {
				e.Notes = append([]string{fmt.Sprintf("%s; using %s (as %s=%s would)", strings.Join(refusals, "; "), e.Label(), ProviderEnv, name)}, e.Notes...)
			}
			return e, nil, nil
		}
		refusals = append(refusals, fmt.Sprintf("%s cannot run %s (%v)", e.Label(), what, err))
	}
	return nil, refusals, nil
}

// prove checks that the engine answers and that probe passes, pointing podman at the lab's
// containers.conf when its default rlimits are what stops it.
func (e *Engine) prove(ctx context.Context, opts Options, probe func(*Engine, context.Context) error) error {
	if _, err := e.Run(ctx, nil, "info"); err != nil {
		var re *RunError
		if errors.As(err, &re) {
			return fmt.Errorf("it does not answer: %s", orElse(LastLines(re.Output, 1), re.Err.Error()))
		}
		return err
	}
	err := probe(e, ctx)
	if err == nil || e.Name != "podman" || !isRlimitRefusal(err) || os.Getenv("CONTAINERS_CONF") != "" || opts.ContainersConf == "" {
		return err
	}
	limits, werr := WriteContainersConf(opts.ContainersConf)
	if werr != nil {
		return errors.Join(err, werr)
	}
	e.Env = []string{"CONTAINERS_CONF=" + opts.ContainersConf}
	if err := probe(e, ctx); err != nil {
		return fmt.Errorf("even with default_ulimits %s in %s: %w", limits, opts.ContainersConf, err)
	}
	e.Notes = append(e.Notes, fmt.Sprintf("podman's default rlimits exceed this host's hard limits: the lab points podman at its own %s (CONTAINERS_CONF, the system's settings plus default_ulimits %s); the host's files are not changed", opts.ContainersConf, limits))
	return nil
}

// isRlimitRefusal is runc's answer when a container's rlimits exceed what its runtime may set.
func isRlimitRefusal(err error) bool {
	return strings.Contains(err.Error(), "error setting rlimit")
}

// probeName names the empty image ProbeRun imports, runs and removes (nothing is
// pulled), and its container; each process has its own, so probes side by side leave nothing.
var probeName = fmt.Sprintf("karplab-privileged-probe-%d", os.Getpid())

// probePrivileged starts a privileged container as kind does for each node.
func (e *Engine) probePrivileged(ctx context.Context) error {
	return e.ProbeRun(ctx, "--privileged", "--network", "none")
}

// ProbeRun starts a container with runArgs from an empty image imported here. The image
// holds no program, so an engine that allows the container answers that /probe does not
// exist; any other answer is the error. Nothing is left behind.
func (e *Engine) ProbeRun(ctx context.Context, runArgs ...string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// An empty tar archive is two zero blocks.
	probeImage := "localhost/karplab/" + probeName + ":empty"
	// Two labs probing at once share the empty layer, and one's clean-up can take it from
	// under the other's import (podman: "layer not known"): try again.
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if _, err = e.Run(ctx, bytes.NewReader(make([]byte, 1024)), "import", "-", probeImage); err == nil || !strings.Contains(err.Error(), "not known") {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("importing an empty probe image: %w", err)
	}
	defer func() { // best effort: an empty image, and a container that never ran
		e.Run(context.WithoutCancel(ctx), nil, "rm", "-f", probeName) //nolint:errcheck
		e.Run(context.WithoutCancel(ctx), nil, "rmi", probeImage)     //nolint:errcheck
	}()
	args := append(append([]string{"run", "--rm", "--name", probeName}, runArgs...), probeImage, "/probe")
	out, err := e.Run(ctx, nil, args...)
	if err == nil || (strings.Contains(out, "/probe") && strings.Contains(out, "no such file or directory")) {
		return nil
	}
	return errors.New(LastLines(out, 1))
}
