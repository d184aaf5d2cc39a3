package nodeimage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	karplab "github.com/karplab/karplab"
	"github.com/karplab/karplab/cluster/kind/engine"
)

// Repository is where the built images are tagged.
const Repository = "localhost/karplab/kind-node"

// recipe names this package's way of building: bump it when a change alters the image.
const recipe = "karplab-kind-node-1"

// Debian is what the root file system is built from. trixie's containerd (1.7.24) is the
// oldest the kubelet of v1.37 still works with; bookworm's (1.6) is too old.
const (
	DebianSuite  = "trixie"
	DebianMirror = "http://deb.debian.org/debian"
)

// debianPackages are kind's base image's packages (images/base/Dockerfile) with Debian's
// containerd, runc and CNI plugins in place of the ones kind builds from source.
var debianPackages = []string{
	"systemd", "systemd-sysv", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool",
	"util-linux", "mount", "kmod", "libseccomp2", "pigz", "e2fsprogs", "bash", "ca-certificates",
	"jq", "procps", "containerd", "runc", "containernetworking-plugins",
}

// Options configure a build.
type Options struct {
	Engine *engine.Engine
	// Status receives one line as each step starts and ends.
	Status io.Writer
	// Mirror is the Debian mirror debootstrap reads (default DebianMirror).
	Mirror string
	// WorkDir holds the build's scratch files (default a new directory in os.TempDir()); it
	// is removed at the end either way.
	WorkDir string
}

// Tag is the image Build makes for these sources: the Kubernetes version and a hash of every
// input: this package's recipe, karplab's go.mod and go.sum (which pin Kubernetes, etcd and
// the kind module whose base-image files it copies), Debian's suite and packages, and the
// node's CNI configuration.
func Tag() (string, error) {
	v, err := KubeVersion()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(recipe), karplab.GoMod, karplab.GoSum, []byte(DebianSuite), []byte(strings.Join(debianPackages, ",")), []byte(conflist)} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return Repository + ":" + v + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// KubeVersion is the k8s.io/kubernetes version karplab's go.mod requires.
func KubeVersion() (string, error) {
	for _, l := range strings.Split(string(karplab.GoMod), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "k8s.io/kubernetes" && strings.HasPrefix(f[1], "v") {
			return f[1], nil
		}
	}
	return "", errors.New("karplab's go.mod requires no k8s.io/kubernetes")
}

// StepError is a build step that failed: its name and the last lines it printed.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("building the kind node image, step %q: %v", e.Step, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// Ensure returns the image Tag names, building it when the engine lacks it.
func Ensure(ctx context.Context, opts Options) (string, error) {
	tag, err := Tag()
	if err != nil {
		return "", err
	}
	if opts.Engine.ImageExists(ctx, tag) {
		return tag, nil
	}
	return tag, Build(ctx, tag, opts)
}

// builder is one build's state.
type builder struct {
	opts   Options
	tag    string
	work   string // scratch: src (the Go module), bin, rootfs, images.tar
	kube   string // the Kubernetes version, v1.37.2
	kind   string // the kind module's directory
	k8s    string // the k8s.io/kubernetes module's directory
	images []string
	step   int
}

// steps is how many steps a build prints.
const steps = 7

// Build builds the node image and tags it tag. On failure it leaves nothing behind: no
// container, no intermediate image, no scratch files.
func Build(ctx context.Context, tag string, opts Options) (err error) {
	if opts.Status == nil {
		opts.Status = io.Discard
	}
	if opts.Mirror == "" {
		opts.Mirror = DebianMirror
	}
	kube, err := KubeVersion()
	if err != nil {
		return err
	}
	b := &builder{opts: opts, tag: tag, kube: kube}
	if b.work = opts.WorkDir; b.work == "" {
		if b.work, err = os.MkdirTemp("", "karplab-kind-image-"); err != nil {
			return err
		}
	}
	defer os.RemoveAll(b.work)
	began := time.Now()
	fmt.Fprintf(opts.Status, "Building the kind node image %s offline (the first, with nothing compiled yet, takes 15 to 30 minutes on 2 cores)\n", tag)
	for _, s := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"the build's tools and Go module", b.prepare},
		{"Debian " + DebianSuite + " root file system (debootstrap)", b.debootstrap},
		{"kubelet, kubeadm, kubectl and the control plane " + kube + " from karplab's go.mod", b.buildKube},
		{"etcd, CoreDNS and pause at the versions kubeadm " + kube + " names", b.buildAddons},
		{"kind's base-image files and the node's binaries", b.nodeFiles},
		{"control-plane images FROM scratch", b.controlPlaneImages},
		{"node image: preload the images into containerd, commit", b.commit},
	} {
		b.step++
		fmt.Fprintf(opts.Status, " • [%d/%d] %s ...\n", b.step, steps, s.name)
		start := time.Now()
		if err := s.run(ctx); err != nil {
			fmt.Fprintf(opts.Status, " ✗ [%d/%d] %s\n", b.step, steps, s.name)
			return &StepError{Step: s.name, Err: err}
		}
		fmt.Fprintf(opts.Status, " ✓ [%d/%d] %s (%s)\n", b.step, steps, s.name, time.Since(start).Round(time.Second))
	}
	fmt.Fprintf(opts.Status, "Built %s in %s\n", tag, time.Since(began).Round(time.Second))
	b.removeOlder(ctx)
	return nil
}

// removeOlder removes the lab's node images of other inputs (an older go.mod), tagged
// otherwise than Tag: each is most of a gigabyte. One a container still uses stays.
func (b *builder) removeOlder(ctx context.Context) {
	current, err := Tag()
	if err != nil {
		return
	}
	out, err := b.opts.Engine.Run(ctx, nil, "images", "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		return
	}
	for _, img := range strings.Fields(out) {
		if strings.HasPrefix(img, Repository+":") && !strings.HasPrefix(img, current) {
			if _, err := b.opts.Engine.Run(ctx, nil, "rmi", img); err == nil {
				fmt.Fprintf(b.opts.Status, "Removed %s, the node image of older inputs\n", img)
			}
		}
	}
}

// run runs a command; its error names the command and carries the last lines it printed.
func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
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

// tools are the commands a build needs on the host, with the package that brings each.
var tools = [][2]string{{"go", "the Go toolchain"}, {"debootstrap", "apt-get install debootstrap"}, {"gcc", "apt-get install gcc libc6-dev"}, {"tar", "apt-get install tar"}, {"chroot", "coreutils"}}

// prepare checks the host's tools and writes the Go module the binaries are built in:
// karplab's own go.mod and go.sum, and etcd's main.
func (b *builder) prepare(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return errors.New("debootstrap and chroot need root: build the image as root (make kind-image)")
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t[0]); err != nil {
			return fmt.Errorf("%s is not on PATH (%s)", t[0], t[1])
		}
	}
	src := filepath.Join(b.work, "src")
	if err := os.MkdirAll(filepath.Join(src, "etcd"), 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"go.mod": karplab.GoMod, "go.sum": karplab.GoSum, "etcd/main.go": []byte(etcdMain)} {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			return err
		}
	}
	var err error
	if b.kind, err = moduleDir(ctx, src, "sigs.k8s.io/kind"); err != nil {
		return err
	}
	b.k8s, err = moduleDir(ctx, src, "k8s.io/kubernetes")
	return err
}

// etcdMain is etcd's own main (go.etcd.io/etcd/v3's main.go), for the server module
// karplab's go.mod pins.
const etcdMain = `package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
`

// moduleDir is where module path (at the version src's go.mod selects) lies in the module
// cache, downloaded first when it is not there.
func moduleDir(ctx context.Context, src, path string) (string, error) {
	out, err := run(ctx, src, nil, "go", "mod", "download", "-json", path)
	if err != nil {
		return "", err
	}
	var m struct{ Dir string }
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no directory in %q", path, engine.LastLines(out, 2))
	}
	return m.Dir, nil
}

// copyFile copies src to dst with mode, following symbolic links.
func copyFile(src, dst string, mode fs.FileMode) error {
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
