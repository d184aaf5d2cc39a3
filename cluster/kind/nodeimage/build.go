package nodeimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	karplab "github.com/karplab/karplab"
	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/rootfs"
)

// Repository is where the built images are tagged.
const Repository = "localhost/karplab/kind-node"

// recipe names this package's way of building: bump it when a change alters the image.
const recipe = "karplab-kind-node-1"

// Debian is what the root file system is built from. trixie's containerd (1.7.24) is the
// oldest the kubelet of v1.37 still works with; bookworm's (1.6) is too old.
const (
	DebianSuite  = rootfs.DebianSuite
	DebianMirror = rootfs.DebianMirror
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
type StepError = rootfs.StepError

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
	if err := rootfs.RunSteps(ctx, opts.Status, "the kind node image", []rootfs.Step{
		{Name: "the build's tools and Go module", Run: b.prepare},
		{Name: "Debian " + DebianSuite + " root file system (debootstrap)", Run: b.debootstrap},
		{Name: "kubelet, kubeadm, kubectl and the control plane " + kube + " from karplab's go.mod", Run: b.buildKube},
		{Name: "etcd, CoreDNS and pause at the versions kubeadm " + kube + " names", Run: b.buildAddons},
		{Name: "kind's base-image files and the node's binaries", Run: b.nodeFiles},
		{Name: "control-plane images FROM scratch", Run: b.controlPlaneImages},
		{Name: "node image: preload the images into containerd, commit", Run: b.commit},
	}); err != nil {
		return err
	}
	fmt.Fprintf(opts.Status, "Built %s in %s\n", tag, time.Since(began).Round(time.Second))
	b.removeOlder(ctx)
	return nil
}

// removeOlder removes the lab's node images of other inputs (an older go.mod), tagged
// otherwise than Tag: each is most of a gigabyte. One a container still uses stays.
func (b *builder) removeOlder(ctx context.Context) {
	if current, err := Tag(); err == nil {
		rootfs.RemoveOlder(ctx, b.opts.Engine, Repository, current, b.opts.Status)
	}
}

// run runs a command; its error names the command and carries the last lines it printed.
var run = rootfs.Run

// tools are the commands a build needs on the host, with the package that brings each.
var tools = append([][2]string{{"go", "the Go toolchain"}, {"gcc", "apt-get install gcc libc6-dev"}}, rootfs.Tools...)

// prepare checks the host's tools and writes the Go module the binaries are built in:
// karplab's own go.mod and go.sum, and etcd's main.
func (b *builder) prepare(ctx context.Context) error {
	if err := rootfs.RequireTools("make kind-image", tools...); err != nil {
		return err
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
var copyFile = rootfs.CopyFile
