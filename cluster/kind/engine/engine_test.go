package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/karplab/karplab/cluster/kind/kindtest"
	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

func TestChoose(t *testing.T) {
	tests := []struct {
		name      string
		engines   map[string]kindtest.Engine
		provider  string
		want      string
		wantNote  string
		wantErr   error
		wantInErr []string
	}{
		{name: "no engine", engines: map[string]kindtest.Engine{}, wantErr: ErrNoEngine, wantInErr: []string{"--backend embedded"}},
		{name: "docker allows", engines: map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunAllowed}, "podman": {Version: "podman version 4.3.1", Run: kindtest.RunAllowed}}, want: "docker"},
		{name: "docker refuses, podman allows",
			engines: map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunCapsRefused}, "podman": {Version: "podman version 4.3.1", Run: kindtest.RunAllowed}},
			want:    "podman", wantNote: "Docker cannot run kind's privileged node (docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: unable to apply caps: operation not permitted: unknown); using podman"},
		{name: "docker's engine is down, podman allows",
			engines: map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Down: true}, "podman": {Version: "podman version 4.3.1", Run: kindtest.RunAllowed}},
			want:    "podman", wantNote: "Docker cannot run kind's privileged node (it does not answer: Cannot connect to the engine. Is the daemon running?)"},
		{name: "both refuse",
			engines: map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunCapsRefused}, "podman": {Version: "podman version 4.3.1", Run: kindtest.RunRlimitRefused}},
			wantErr: ErrPrivilegedRefused, wantInErr: []string{"Docker cannot run", "unable to apply caps", "podman cannot run", "error setting rlimit type 7", "--backend embedded"}},
		{name: "KIND_EXPERIMENTAL_PROVIDER names the one to use",
			engines:  map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunAllowed}, "podman": {Version: "podman version 4.3.1", Run: kindtest.RunCapsRefused}},
			provider: "podman", wantErr: ErrPrivilegedRefused, wantInErr: []string{"podman cannot run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kindtest.FakeEngines(t, tt.engines)
			t.Setenv(ProviderEnv, tt.provider)
			e, err := Choose(context.Background(), Options{})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "--help") {
					t.Fatalf("Choose error = %q, want %v in one line", err, tt.wantErr)
				}
				for _, s := range tt.wantInErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Choose error = %q, want it to say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Choose: %v", err)
			}
			if e.Name != tt.want || (tt.wantNote == "") != (len(e.Notes) == 0) || (tt.wantNote != "" && !strings.Contains(e.Notes[0], tt.wantNote)) {
				t.Errorf("Choose = %s with notes %q, want %s noting %q", e.Name, e.Notes, tt.want, tt.wantNote)
			}
		})
	}
}

// WriteContainersConf keeps the system's settings (CONTAINERS_CONF replaces them) and adds
// default_ulimits within this process's hard limits.
func TestWriteContainersConf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "containers.conf")
	limits, err := WriteContainersConf(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Containers struct {
			DefaultUlimits      []string `toml:"default_ulimits"`
			DefaultCapabilities []string `toml:"default_capabilities"`
		}
	}
	if err := toml.Unmarshal(b, &got); err != nil {
		t.Fatalf("the written file is not TOML: %v\n%s", err, b)
	}
	if strings.Join(got.Containers.DefaultUlimits, ",") != limits || !strings.HasPrefix(limits, "nofile=") {
		t.Errorf("default_ulimits = %q, want %q", got.Containers.DefaultUlimits, limits)
	}
	if _, err := os.Stat(systemConfs[0]); err == nil && len(got.Containers.DefaultCapabilities) == 0 {
		t.Errorf("the system's default_capabilities (%s) were not kept:\n%s", systemConfs[0], b)
	}
}

// TestIntegrationChoose proves the engine choice on this machine: the engine chosen starts
// kind's privileged container, with the lab's containers.conf where podman needs it.
func TestIntegrationChoose(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	conf := filepath.Join(t.TempDir(), "containers.conf")
	e, err := Choose(context.Background(), Options{ContainersConf: conf})
	if errors.Is(err, ErrNoEngine) {
		karplabtest.RequireClient(t, "a container engine for kind (Docker or podman)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("engine %s, env %q, notes:\n%s", e.Name, e.Env, strings.Join(e.Notes, "\n"))
	if err := e.probePrivileged(context.Background()); err != nil {
		t.Errorf("the chosen engine refuses a privileged container: %v", err)
	}
	if out, _ := e.Run(context.Background(), nil, "ps", "-a", "--filter", "name="+probeName, "--format", "{{.Names}}"); strings.TrimSpace(out) != "" {
		t.Errorf("probe container left behind: %q", out)
	}
}

// ChooseFor proves the container asked for, not kind's privileged one, and says what each
// engine said when none runs it.
func TestChooseFor(t *testing.T) {
	kindtest.FakeEngines(t, map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunAllowed}})
	e, err := ChooseFor(context.Background(), Options{}, "a seat", "--network", "none")
	if err != nil || e.Name != "docker" {
		t.Fatalf("ChooseFor = %v, %v; want docker", e, err)
	}
	kindtest.FakeEngines(t, map[string]kindtest.Engine{"docker": {Version: "Docker version 28.2.2", Run: kindtest.RunCapsRefused}})
	_, err = ChooseFor(context.Background(), Options{}, "a seat", "--network", "none")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "Docker cannot run a seat (docker: Error response") || strings.Contains(err.Error(), "\n") {
		t.Errorf("ChooseFor error = %q, want ErrRefused naming what Docker said, in one line", err)
	}
}
