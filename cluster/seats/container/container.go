package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/seats"
)

// Provider runs each seat as a container of one engine.
type Provider struct {
	e *engine.Engine
}

var _ seats.Provider = (*Provider)(nil)

// New is the provider over engine e.
func New(e *engine.Engine) *Provider { return &Provider{e: e} }

// seatFlags are what makes a container a seat: no network, no privileges. Choose proves
// them with a memory cap.
var seatFlags = []string{"--network", "none", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"}

// Choose is the provider over the first engine of kind's candidates that runs a seat's
// container. The error is ErrNoEngine or wraps engine.ErrRefused.
func Choose(ctx context.Context, opts engine.Options) (*Provider, error) {
	e, err := engine.ChooseFor(ctx, opts, "a seat (a container with no network, no privileges and a memory cap)", append(slices.Clone(seatFlags), "--memory", "64m")...)
	if errors.Is(err, engine.ErrNoEngine) {
		return nil, ErrNoEngine // engine's own names the kind backend's way out
	}
	if err != nil {
		return nil, err
	}
	return New(e), nil
}

// ErrNoEngine means no container engine is on PATH.
var ErrNoEngine = errors.New("a workshop's seats need a container engine (Docker or podman), and none is on PATH; install one (apt-get install docker.io, or podman)")

// Engine is the engine the provider runs.
func (p *Provider) Engine() *engine.Engine { return p.e }

// Name is the engine's command (docker, podman): what finds the seats again.
func (p *Provider) Name() string { return p.e.Name }

// Create runs the seat's container detached. The image's entrypoint keeps it running.
func (p *Provider) Create(ctx context.Context, spec seats.Spec) error {
	st, err := p.State(ctx, spec.Name)
	if err != nil {
		return err
	}
	if st.State != seats.Missing {
		return fmt.Errorf("creating seat %s: %w", spec.Name, seats.ErrExists)
	}
	mem := strconv.FormatInt(spec.MemoryBytes, 10)
	args := append([]string{"run", "-d", "--name", spec.Name, "--hostname", spec.Name, "--memory", mem, "--memory-swap", mem}, seatFlags...)
	for _, k := range sortedKeys(spec.Labels) {
		args = append(args, "--label", k+"="+spec.Labels[k])
	}
	for _, kv := range spec.Env {
		args = append(args, "--env", kv)
	}
	if _, err := p.e.Run(ctx, nil, append(args, spec.Image)...); err != nil {
		p.e.Run(context.WithoutCancel(ctx), nil, "rm", "-f", "-v", spec.Name) //nolint:errcheck // best effort: nothing half-made
		return fmt.Errorf("creating seat %s: %w", spec.Name, err)
	}
	return nil
}

// Start starts the seat's container again, with its writable layer as it was.
func (p *Provider) Start(ctx context.Context, name string) error {
	st, err := p.State(ctx, name)
	if err != nil {
		return err
	}
	switch st.State {
	case seats.Missing:
		return fmt.Errorf("starting seat %s: %w", name, seats.ErrNotFound)
	case seats.Running:
		return nil
	}
	if _, err := p.e.Run(ctx, nil, "start", name); err != nil {
		return fmt.Errorf("starting seat %s: %w", name, err)
	}
	return nil
}

// Exec runs the engine's exec; with a TTY, on a terminal made here (see tty.go).
func (p *Provider) Exec(ctx context.Context, name string, opts seats.ExecOptions) (int, error) {
	st, err := p.State(ctx, name)
	if err != nil {
		return 0, err
	}
	switch st.State {
	case seats.Missing:
		return 0, fmt.Errorf("seat %s: %w", name, seats.ErrNotFound)
	case seats.Exited:
		return 0, fmt.Errorf("seat %s: %w", name, seats.ErrNotRunning)
	}
	if len(opts.Argv) == 0 {
		return 0, errors.New("exec: no command")
	}
	args := []string{"exec"}
	if opts.Stdin != nil || opts.TTY {
		args = append(args, "-i")
	}
	if opts.TTY {
		args = append(args, "-t")
	}
	argv := opts.Argv
	if opts.TTY {
		argv = sizedArgv(opts)
	}
	cmd := p.e.Command(ctx, append(append(args, name), argv...)...)
	if opts.TTY {
		err = runOnTerminal(cmd, opts)
	} else {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.Stdin, opts.Stdout, opts.Stderr
		err = cmd.Run()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("exec in seat %s: %w", name, err)
	}
	return 0, nil
}

// State inspects the container; the engine's "no such container" is Missing.
func (p *Provider) State(ctx context.Context, name string) (seats.Status, error) {
	out, err := p.e.Run(ctx, nil, "container", "inspect", "--format", "{{.State.Status}}", name)
	if err != nil {
		if isNoSuch(out) {
			return seats.Status{Name: name, State: seats.Missing}, nil
		}
		return seats.Status{}, fmt.Errorf("inspecting seat %s: %w", name, err)
	}
	return seats.Status{Name: name, State: state(strings.TrimSpace(out))}, nil
}

// isNoSuch is Docker's ("No such container") and podman's ("no such container") answer.
func isNoSuch(out string) bool {
	return strings.Contains(strings.ToLower(out), "no such container") || strings.Contains(strings.ToLower(out), "no such object")
}

func state(s string) seats.State {
	if s == "running" {
		return seats.Running
	}
	return seats.Exited // created, exited, dead, paused, stopped, removing
}

// List finds the containers by label, then inspects them all in one call and reads the
// running ones' memory in one stats call (about a second: stats samples once).
func (p *Provider) List(ctx context.Context, labels map[string]string) ([]seats.Status, error) {
	args := []string{"ps", "-a", "-q"}
	for _, k := range sortedKeys(labels) {
		args = append(args, "--filter", "label="+k+"="+labels[k])
	}
	out, err := p.e.Run(ctx, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("listing seats: %w", err)
	}
	ids := strings.Fields(out)
	if len(ids) == 0 {
		return nil, nil
	}
	out, err = p.e.Run(ctx, nil, append([]string{"container", "inspect", "--format", "{{json .Name}}\t{{json .State.Status}}\t{{json .Config.Labels}}"}, ids...)...)
	if err != nil && !isNoSuch(out) { // one removed between ps and inspect is not a failure
		return nil, fmt.Errorf("listing seats: %w", err)
	}
	var list []seats.Status
	var running []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		var st seats.Status
		var status string
		if json.Unmarshal([]byte(f[0]), &st.Name) != nil || json.Unmarshal([]byte(f[1]), &status) != nil || json.Unmarshal([]byte(f[2]), &st.Labels) != nil {
			continue
		}
		st.Name, st.State = strings.TrimPrefix(st.Name, "/"), state(status)
		if st.State == seats.Running {
			running = append(running, st.Name)
		}
		list = append(list, st)
	}
	mem := p.memory(ctx, running)
	for i := range list {
		list[i].MemoryBytes = mem[list[i].Name]
	}
	slices.SortFunc(list, func(a, b seats.Status) int { return strings.Compare(a.Name, b.Name) })
	return list, nil
}

// memory is what each named container uses now, by name; what stats cannot say is left out.
func (p *Provider) memory(ctx context.Context, names []string) map[string]int64 {
	mem := map[string]int64{}
	if len(names) == 0 {
		return mem
	}
	out, err := p.e.Run(ctx, nil, append([]string{"stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}"}, names...)...)
	if err != nil {
		return mem
	}
	for _, line := range strings.Split(out, "\n") {
		name, usage, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		used, _, _ := strings.Cut(usage, "/")
		if n, ok := ParseSize(strings.TrimSpace(used)); ok {
			mem[name] = n
		}
	}
	return mem
}

// ParseSize reads a size as the engines print it: 512B, 1.5KiB, 480.2MiB, 1.17GiB, 12kB, 3MB.
func ParseSize(s string) (int64, bool) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, false
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	units := map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
	u, ok := units[strings.TrimSpace(s[i:])]
	if !ok {
		return 0, false
	}
	return int64(n * u), true
}

// Remove removes the container and its anonymous volumes, running or not.
func (p *Provider) Remove(ctx context.Context, name string) error {
	if out, err := p.e.Run(ctx, nil, "rm", "-f", "-v", name); err != nil && !isNoSuch(out) {
		return fmt.Errorf("removing seat %s: %w", name, err)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
