package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// fakeDocker writes a docker stand-in script that prints out and exits with code, so the
// engine probe can be tested on a host without an engine.
func fakeDocker(t *testing.T, out string, code int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docker")
	script := fmt.Sprintf("#!/bin/sh\necho '%s' >&2\nexit %d\n", out, code)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckEngine(t *testing.T) {
	tests := []struct {
		name    string
		docker  string
		wantErr string
	}{
		{name: "no docker client", docker: filepath.Join(t.TempDir(), "no-such-docker"), wantErr: "is not on PATH"},
		{name: "client without engine", docker: fakeDocker(t, "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", 1), wantErr: "Cannot connect to the Docker daemon"},
		{name: "engine answers", docker: fakeDocker(t, "28.2.2", 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckEngine(context.Background(), tt.docker)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckEngine: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNoDockerEngine) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--backend embedded") {
				t.Fatalf("CheckEngine error = %v, want ErrNoDockerEngine mentioning %q and the embedded backend", err, tt.wantErr)
			}
		})
	}
}

// Start without an engine must fail at once and create nothing.
func TestStartWithoutEngineFailsFast(t *testing.T) {
	b := New(Options{Docker: fakeDocker(t, "Cannot connect to the Docker daemon", 1)})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	var status strings.Builder
	err := b.Start(context.Background(), kubeconfig, &status)
	if !errors.Is(err, ErrNoDockerEngine) {
		t.Fatalf("Start error = %v, want ErrNoDockerEngine", err)
	}
	if _, statErr := os.Stat(kubeconfig); !os.IsNotExist(statErr) {
		t.Errorf("kubeconfig written despite failure: %v", statErr)
	}
	if b.RESTConfig() != nil {
		t.Error("RESTConfig set despite failure")
	}
	if err := b.Stop(context.Background()); err != nil {
		t.Errorf("Stop after failed Start: %v", err)
	}
}

// fakeEngine writes a docker stand-in whose `run` prints out and exits with code; import
// and rmi succeed.
func fakeEngine(t *testing.T, out string, code int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docker")
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in run) echo '%s' >&2; echo \"Run 'docker run --help' for more information\" >&2; exit %d;; esac\nexit 0\n", out, code)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckPrivileged(t *testing.T) {
	const refused = "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: unable to apply caps: operation not permitted: unknown"
	tests := []struct {
		name    string
		docker  string
		wantErr string
	}{
		{name: "allowed: the empty image has no /probe", docker: fakeEngine(t, `docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/probe": stat /probe: no such file or directory: unknown`, 127)},
		{name: "refused: a capability the engine may not grant", docker: fakeEngine(t, refused, 125), wantErr: "unable to apply caps: operation not permitted"},
		{name: "refused: a rootless engine", docker: fakeEngine(t, "docker: Error response from daemon: privileged mode is incompatible with user namespaces.", 125), wantErr: "privileged mode is incompatible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPrivileged(context.Background(), tt.docker)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckPrivileged: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrPrivilegedRefused) || !strings.Contains(err.Error(), tt.wantErr) ||
				!strings.Contains(err.Error(), "--backend embedded") || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "docker run --help") {
				t.Fatalf("CheckPrivileged error = %q, want one line: ErrPrivilegedRefused with %q and the embedded backend", err, tt.wantErr)
			}
		})
	}
}

// TestIntegrationKindCluster creates the real kind cluster on the machine's Docker engine.
// An engine that refuses kind's privileged node must make Start fail at once, with what the
// engine said, and leave no container, image or kubeconfig behind.
func TestIntegrationKindCluster(t *testing.T) {
	ctx := context.Background()
	if err := CheckEngine(ctx, ""); err != nil {
		karplabtest.RequireClient(t, fmt.Sprintf("a Docker engine for the kind backend (%v)", err))
	}
	b := New(Options{})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	var status strings.Builder
	if refused := CheckPrivileged(ctx, ""); refused != nil {
		err := b.Start(ctx, kubeconfig, &status)
		if !errors.Is(err, ErrPrivilegedRefused) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Start on an engine that refuses privileged containers = %v, want ErrPrivilegedRefused in one line", err)
		}
		t.Logf("this engine cannot run kind: %v", err)
		if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
			t.Errorf("kubeconfig written after the refusal: %v", err)
		}
		out, _ := exec.Command("docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+ClusterName, "--format", "{{.Names}}").CombinedOutput()
		imgs, _ := exec.Command("docker", "images", "-q", probeImage).CombinedOutput()
		if strings.TrimSpace(string(out)) != "" || strings.TrimSpace(string(imgs)) != "" {
			t.Errorf("left behind: containers %q, probe image %q", out, imgs)
		}
		return
	}
	// kind pulls its node image when the engine lacks it; with no registry here it cannot,
	// and no offline node image is built yet (issue 24). Say so rather than fail on the pull.
	if err := exec.Command("docker", "image", "inspect", defaults.Image).Run(); err != nil {
		t.Skipf("skipping the kind backend: the engine has no node image %s and this machine reaches no registry to pull it", defaults.Image)
	}
	if err := b.Start(ctx, kubeconfig, &status); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	for _, c := range b.Components(ctx) {
		if !c.Healthy {
			t.Errorf("component %s unhealthy: %s", c.Name, c.Detail)
		}
	}
}
