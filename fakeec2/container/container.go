// Package container runs the lab's AWS account (fakeec2: EC2, IAM, SSM, SQS, STS, Pricing,
// Budgets on one endpoint) in a Docker container for Go tests, as a testcontainers-go module
// shaped like testcontainers-go's localstack module. Run builds the emulator's image on this
// machine (a static binary FROM scratch, so nothing is pulled and no registry is needed),
// starts it with its port published on the host's loopback only, waits until
// GET /_karplab/health answers and returns the container, its endpoint and an aws-sdk-go-v2
// config that points at it.
//
// testcontainers-go starts a reaper container (Ryuk) beside every container unless
// TESTCONTAINERS_RYUK_DISABLED=true; its image comes from a registry. Offline, set that
// variable and end the container with Terminate or testcontainers.CleanupContainer.
//
// It is a Go module of its own (as testcontainers-go's modules are), so the karplab module
// does not carry testcontainers-go's dependencies.
package container

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	dockercontainer "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/karplab/karplab/fakeec2"
)

const (
	// Port is the emulator's port inside the container.
	Port = "4566/tcp"
	// Region is the region the emulated account answers for.
	Region = fakeec2.DefaultRegion
	// ImageRepo names the images Run builds; each is tagged by its binary's hash.
	ImageRepo = "karplab/fakeec2"
	// emulatorPackage is the command the image runs: this module's own.
	emulatorPackage = "github.com/karplab/karplab/fakeec2/container/emulator"
)

// Container is a running emulator.
type Container struct {
	testcontainers.Container
	endpoint string
}

// Option configures the image Run builds. It is a testcontainers.ContainerCustomizer, so it
// goes in Run's list beside testcontainers' own options (WithCmdArgs("-boot-delay=0s"), ...).
type Option func(*options)

type options struct {
	binary   string
	buildLog io.Writer
}

// Customize implements testcontainers.ContainerCustomizer; the image options act in Run.
func (o Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithBinary puts an emulator binary built already into the image instead of building one
// with the go command: a static Linux one, `CGO_ENABLED=0 go build ./fakeec2/container/emulator` (from this module).
func WithBinary(path string) Option { return func(o *options) { o.binary = path } }

// WithBuildLog sends the go build's and the image build's output to w.
func WithBuildLog(w io.Writer) Option { return func(o *options) { o.buildLog = w } }

// Run builds the emulator's image, starts a container of it and waits until it is healthy.
// As in testcontainers-go's modules, on an error after the container was created it returns
// the container too, for the caller to terminate.
func Run(ctx context.Context, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	o := options{buildLog: io.Discard}
	for _, opt := range opts {
		if opt, ok := opt.(Option); ok {
			opt(&o)
		}
	}
	dir, err := os.MkdirTemp("", "fakeec2-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tag, err := buildContext(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	loopback := netip.MustParseAddr("127.0.0.1")
	moduleOpts := []testcontainers.ContainerCustomizer{
		testcontainers.WithDockerfile(testcontainers.FromDockerfile{
			Context: dir, Repo: ImageRepo, Tag: tag, KeepImage: true, BuildLogWriter: o.buildLog,
		}),
		testcontainers.WithExposedPorts(Port),
		// Published on the host's loopback only: the lab listens nowhere else.
		testcontainers.WithHostConfigModifier(func(hc *dockercontainer.HostConfig) {
			hc.PortBindings = network.PortMap{network.MustParsePort(Port): {{HostIP: loopback}}}
		}),
		testcontainers.WithWaitStrategy(healthy{timeout: time.Minute}),
	}
	ctr, err := testcontainers.Run(ctx, "", append(moduleOpts, opts...)...)
	var c *Container
	if ctr != nil {
		c = &Container{Container: ctr}
	}
	if err != nil {
		return c, fmt.Errorf("running the fakeec2 container: %w", err)
	}
	if c.endpoint, err = loopbackURL(ctx, ctr); err != nil {
		return c, err
	}
	return c, nil
}

// loopbackURL is the container's endpoint on the host's loopback, where Run publishes it.
// testcontainers' own Host guesses the gateway's address when the caller runs in a container
// of its own (it finds /.dockerenv), where the engine is still this host's.
func loopbackURL(ctx context.Context, target wait.StrategyTarget) (string, error) {
	port, err := target.MappedPort(ctx, Port)
	if err != nil {
		return "", fmt.Errorf("reading the fakeec2 container's port: %w", err)
	}
	return "http://127.0.0.1:" + port.Port(), nil
}

// healthy waits until GET /_karplab/health answers 200 on the loopback endpoint.
type healthy struct{ timeout time.Duration }

func (h healthy) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	var last error
	for {
		if url, err := loopbackURL(ctx, target); err != nil {
			last = err
		} else if last = get(ctx, url+"/_karplab/health"); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fakeec2 was not healthy within %s: %w", h.timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// buildContext writes the image's build context into dir (the binary and a Dockerfile FROM
// scratch) and returns the image's tag: the binary's hash, so an unchanged emulator reuses
// its image.
func buildContext(ctx context.Context, dir string, o options) (tag string, err error) {
	bin := filepath.Join(dir, "fakeec2")
	if o.binary == "" {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, emulatorPackage)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, o.buildLog), io.MultiWriter(&out, o.buildLog)
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("building the emulator (CGO_ENABLED=0 go build %s): %w\n%s", emulatorPackage, err, out.String())
		}
	} else if err := copyFile(o.binary, bin); err != nil {
		return "", fmt.Errorf("WithBinary: %w", err)
	}
	f, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	dockerfile := "FROM scratch\nCOPY fakeec2 /fakeec2\nEXPOSE 4566\nENTRYPOINT [\"/fakeec2\", \"-addr\", \"0.0.0.0:4566\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if len(b) < 4 || string(b[1:4]) != "ELF" {
		return errors.New(from + " is not a Linux executable; build one with CGO_ENABLED=0 GOOS=linux go -C fakeec2/container build ./emulator")
	}
	return os.WriteFile(to, b, 0o755)
}

// EndpointURL is the emulator's URL on the host: AWS_ENDPOINT_URL, or an SDK's BaseEndpoint.
func (c *Container) EndpointURL() string { return c.endpoint }

// AWSConfig is an aws-sdk-go-v2 config for the emulated account: its region, dummy static
// credentials and the container's endpoint, so ec2.NewFromConfig (and iam, ssm, sqs, sts)
// talk to it. It reads no shared config or environment credentials of the host.
func (c *Container) AWSConfig() aws.Config {
	return aws.Config{
		Region:       Region,
		Credentials:  aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider("AKIAKARPLABTEST", "karplab", "")),
		BaseEndpoint: aws.String(c.endpoint),
		HTTPClient:   fakeec2.NewHTTPClient(),
	}
}

// Admin is the emulator's admin API (audit trail, billing, faults, policy, lab time).
func (c *Container) Admin() *fakeec2.AdminClient { return fakeec2.NewAdminClient(c.endpoint) }
