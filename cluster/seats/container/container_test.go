package container

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/seats"
	"github.com/karplab/karplab/cluster/seats/seatimage"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"512B": 512, "1.5KiB": 1536, "480MiB": 480 << 20, "1.5GiB": 3 << 29, "12kB": 12000, "3MB": 3e6} {
		if got, ok := ParseSize(in); !ok || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "MiB", "12 parsecs", "--"} {
		if _, ok := ParseSize(in); ok {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

// TestIntegrationSeat drives one seat through the provider on this host's engine: Docker
// where it runs one (this machine's Docker refuses only privileged containers), a capped,
// unprivileged container without network, the learner's exit codes, input and terminal,
// and a kill that Start undoes with the seat's data kept.
func TestIntegrationSeat(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx := context.Background()
	p, err := Choose(ctx, engine.Options{ContainersConf: filepath.Join(t.TempDir(), "containers.conf")})
	if errors.Is(err, ErrNoEngine) {
		karplabtest.RequireClient(t, "a container engine for seats (Docker or podman)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, derr := (&engine.Engine{Name: "docker"}).Run(ctx, nil, "info"); derr == nil && p.Name() != "docker" {
		t.Errorf("Docker answers here, yet the seats' engine is %s (notes %q)", p.Name(), p.Engine().Notes)
	}
	bin, err := karplabtest.Binary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	image, err := seatimage.Ensure(ctx, seatimage.Options{Engine: p.Engine(), Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	name := "karplab-seat-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	p.Remove(ctx, name) //nolint:errcheck // a leftover of a test that died
	labels := map[string]string{"karplab.workshop": "containertest"}
	if err := p.Create(ctx, seats.Spec{Name: name, Image: image, MemoryBytes: 300 << 20, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Remove(context.Background(), name) }) //nolint:errcheck // best effort
	if err := p.Create(ctx, seats.Spec{Name: name, Image: image, MemoryBytes: 300 << 20}); !errors.Is(err, seats.ErrExists) {
		t.Errorf("a second Create = %v, want ErrExists", err)
	}
	out, err := p.Engine().Run(ctx, nil, "container", "inspect", "--format", "{{.HostConfig.NetworkMode}} {{.HostConfig.Privileged}} {{.HostConfig.Memory}} {{.HostConfig.CapDrop}}", name)
	if err != nil || strings.TrimSpace(out) != "none false 314572800 [ALL]" {
		t.Errorf("the seat's container is %q (%v), want no network, unprivileged, 300 MiB, every capability dropped", out, err)
	}

	run := checkExec(t, p, name)

	list, err := p.List(ctx, labels)
	if err != nil || len(list) != 1 || list[0].Name != name || list[0].State != seats.Running || list[0].MemoryBytes <= 0 {
		t.Errorf("List = %+v, %v; want the running seat with its memory use", list, err)
	} else {
		t.Logf("an idle seat (tini and sleep) uses %d KiB", list[0].MemoryBytes>>10)
	}
	if _, err := p.Engine().Run(ctx, nil, "kill", name); err != nil {
		t.Fatal(err)
	}
	if st, _ := p.State(ctx, name); st.State != seats.Exited {
		t.Errorf("a killed seat is %q, want exited", st.State)
	}
	if _, err := p.Exec(ctx, name, seats.ExecOptions{Argv: []string{"true"}}); !errors.Is(err, seats.ErrNotRunning) {
		t.Errorf("Exec in a killed seat = %v, want ErrNotRunning", err)
	}
	if err := p.Start(ctx, name); err != nil {
		t.Fatal(err)
	}
	if _, out := run(seats.ExecOptions{Argv: []string{"cat", "/home/learner/mark"}}); out != "kept\n" {
		t.Errorf("after Start the seat's file reads %q, want its data kept", out)
	}
	if err := p.Remove(ctx, name); err != nil {
		t.Fatal(err)
	}
	if st, _ := p.State(ctx, name); st.State != seats.Missing {
		t.Errorf("a removed seat is %q, want missing", st.State)
	}
	if err := p.Remove(ctx, name); err != nil {
		t.Errorf("removing a missing seat = %v, want nil", err)
	}
	if _, err := p.Exec(ctx, name, seats.ExecOptions{Argv: []string{"true"}}); !errors.Is(err, seats.ErrNotFound) {
		t.Errorf("Exec in a removed seat = %v, want ErrNotFound", err)
	}
}

// checkExec holds the seat's exec to the learner's exit codes, input and terminals (one
// made by the provider, of a size; a person's own), and returns a runner for more.
func checkExec(t *testing.T, p *Provider, name string) func(seats.ExecOptions) (int, string) {
	ctx := context.Background()
	run := func(opts seats.ExecOptions) (int, string) {
		t.Helper()
		var stdout strings.Builder
		opts.Stdout = &stdout
		code, err := p.Exec(ctx, name, opts)
		if err != nil {
			t.Fatalf("Exec %q: %v", opts.Argv, err)
		}
		return code, stdout.String()
	}
	if code, out := run(seats.ExecOptions{Argv: []string{"sh", "-c", "id -u; echo kept > ~/mark; exit 7"}}); code != 7 || out != "1000\n" {
		t.Errorf("exec = %d %q, want the learner (1000) and exit 7", code, out)
	}
	if code, out := run(seats.ExecOptions{Argv: []string{"cat"}, Stdin: strings.NewReader("typed\n")}); code != 0 || out != "typed\n" {
		t.Errorf("cat = %d %q, want the input back", code, out)
	}
	if code, out := run(seats.ExecOptions{Argv: []string{"stty", "size"}, TTY: true, Size: seats.TermSize{Rows: 30, Cols: 100}}); code != 0 || strings.TrimSpace(out) != "30 100" {
		t.Errorf("stty size on a terminal = %d %q, want 30 100", code, out)
	}

	// From a person's terminal, the engine's client uses it itself: its size, its input.
	ptmx, tty, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	setSize(ptmx, seats.TermSize{Rows: 33, Cols: 90}) //nolint:errcheck // checked below
	var screen strings.Builder
	read := make(chan struct{})
	go func() { io.Copy(&screen, ptmx); close(read) }() //nolint:errcheck // EIO at the end
	code, err := p.Exec(ctx, name, seats.ExecOptions{Argv: []string{"sh", "-c", "stty size; exit 4"}, TTY: true, Stdin: tty, Stdout: tty, Stderr: tty})
	tty.Close()
	<-read
	if err != nil || code != 4 || !strings.Contains(screen.String(), "33 90") {
		t.Errorf("exec on a person's terminal = %d, %v, showing %q; want 33 90 and exit 4", code, err, screen.String())
	}

	return run
}
