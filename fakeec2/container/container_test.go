package container_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/smithy-go"
	"github.com/testcontainers/testcontainers-go"

	"github.com/karplab/karplab/fakeec2/container"
)

// binary is the emulator built once for the tests (the example builds its own, as a user's
// test would).
var binary string

func TestMain(m *testing.M) {
	// No registry here: the reaper's image cannot be pulled. Each test terminates its container.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		if os.Getenv("KARPLAB_REQUIRE_CLIENTS") != "" {
			fmt.Fprintf(os.Stderr, "no Docker engine, and KARPLAB_REQUIRE_CLIENTS is set: %v: %s\n", err, out)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "skipping the container tests: no Docker engine (%v)\n", err)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "fakeec2-container-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "fakeec2")
	build := exec.Command("go", "build", "-o", binary, "github.com/karplab/karplab/fakeec2/container/emulator")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the emulator: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, opts ...testcontainers.ContainerCustomizer) *container.Container {
	t.Helper()
	ctr, err := container.Run(t.Context(), append([]testcontainers.ContainerCustomizer{container.WithBinary(binary)}, opts...)...)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	return ctr
}

// The emulator answers on the host's loopback only, with the real client, in its own error
// shape; the admin API answers beside it.
func TestIntegrationContainerServesTheAccount(t *testing.T) {
	ctr := run(t)
	ctx := t.Context()
	inspect, err := ctr.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for port, bindings := range inspect.NetworkSettings.Ports {
		for _, b := range bindings {
			if !b.HostIP.IsLoopback() {
				t.Errorf("port %s is published on %s, want the loopback only", port, b.HostIP)
			}
		}
	}
	if !strings.HasPrefix(ctr.EndpointURL(), "http://127.0.0.1:") {
		t.Errorf("endpoint %s, want one on 127.0.0.1", ctr.EndpointURL())
	}
	if inspect.Config.Image != "" && !strings.HasPrefix(inspect.Config.Image, container.ImageRepo+":") {
		t.Errorf("image %s, want one of %s", inspect.Config.Image, container.ImageRepo)
	}

	client := ec2.NewFromConfig(ctr.AWSConfig())
	zones, err := client.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil || len(zones.AvailabilityZones) != 3 {
		t.Fatalf("DescribeAvailabilityZones: %v, %v; want eu-west-2's three zones", zones, err)
	}
	_, err = client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "InvalidInstanceID.NotFound" {
		t.Errorf("TerminateInstances of an unknown instance: %v, want InvalidInstanceID.NotFound", err)
	}
	h, err := ctr.Admin().Health(ctx)
	if err != nil || h.Status != "ok" || h.Region != container.Region {
		t.Errorf("admin health %+v, %v", h, err)
	}
}

// An unchanged emulator reuses its image: the tag is the binary's hash.
func TestIntegrationContainerImageReused(t *testing.T) {
	first, second := run(t), run(t)
	a, err := first.Inspect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := second.Inspect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if a.Image != b.Image {
		t.Errorf("two runs of one binary used images %s and %s, want one", a.Image, b.Image)
	}
}

// A binary that cannot run FROM scratch is refused before anything is built or started.
func TestContainerRefusesABinaryThatIsNotLinux(t *testing.T) {
	ctr, err := container.Run(context.Background(), container.WithBinary("go.mod"))
	if ctr != nil {
		testcontainers.CleanupContainer(t, ctr)
	}
	if err == nil || !strings.Contains(err.Error(), "WithBinary") || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("Run(WithBinary(go.mod)) = %v, want an error naming WithBinary and how to build the binary", err)
	}
}
