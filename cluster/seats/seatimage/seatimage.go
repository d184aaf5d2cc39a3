package seatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/rootfs"
	"github.com/karplab/karplab/exercises"
)

// Repositories: the Debian layer and the seat on top of it.
const (
	BaseRepository = "localhost/karplab/seat-base"
	Repository     = "localhost/karplab/seat"
)

// recipe names this package's way of building: bump it when a change alters an image.
const recipe = "karplab-seat-1"

// The learner's account in the seat.
const (
	Learner = "learner"
	UID     = 1000
	Home    = "/home/" + Learner
)

// packages are what a learner's shell needs. awscli is Debian's aws CLI v2 (2.23 in
// trixie): about 160 MiB installed with its Python; python3-cffi-backend is named because
// debootstrap resolves no virtual package (python3-cryptography needs its API).
var packages = []string{
	"bash", "bash-completion", "vim-tiny", "nano", "less", "procps", "ca-certificates", "tini",
	"awscli", "python3-cffi-backend",
}

// profile is /etc/profile.d/karplab.sh: every shell of the learner's (a login shell, the
// workshop's exec) points kubectl and aws at the seat's lab, as eval "$(karplab env)" does.
const profile = `# karplab seat: kubectl and aws point at this seat's own lab.
if command -v karplab >/dev/null 2>&1; then
  eval "$(karplab env 2>/dev/null)"
fi
`

// kubectl is /usr/local/bin/kubectl: the lab's embedded kubectl, under the name the
// course's commands use.
const kubectl = "#!/bin/sh\nexec karplab kubectl \"$@\"\n"

// Entrypoint keeps the seat running and reaps what it orphans (the lab's daemon, started by
// `karplab start` through exec, is one): tini as process 1.
var Entrypoint = []string{"/usr/bin/tini", "--", "sleep", "infinity"}

// Options configure a build.
type Options struct {
	Engine *engine.Engine
	// Binary is the karplab binary the seat runs (default this process's executable).
	Binary string
	// Status receives one line as each step starts and ends.
	Status io.Writer
	// Mirror is the Debian mirror debootstrap reads (default rootfs.DebianMirror).
	Mirror string
}

func (o *Options) defaults() error {
	if o.Status == nil {
		o.Status = io.Discard
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the karplab executable: %w", err)
		}
		o.Binary = exe
	}
	return nil
}

// BaseTag is the Debian layer's image: a hash of the recipe, the suite, the packages, the
// learner's shell set-up and the image's configuration.
func BaseTag() string {
	return BaseRepository + ":" + hash(recipe, rootfs.DebianSuite, strings.Join(packages, ","), profile, kubectl, strings.Join(config(), "\n"), Learner)
}

// Tag is the seat's image for binary: a hash of the base's tag, of the binary and of the
// exercises staged in the learner's home.
func Tag(binary string) (string, error) {
	f, err := os.Open(binary)
	if err != nil {
		return "", fmt.Errorf("hashing the karplab binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing the karplab binary: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	// The exercises staged are this build's; the binary's own are the same when it is this one.
	h.Reset()
	err = fs.WalkDir(exercises.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(exercises.FS, p)
		h.Write([]byte(p + "\x00"))
		h.Write(data)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("hashing the exercises: %w", err)
	}
	return Repository + ":" + hash(BaseTag(), sum, hex.EncodeToString(h.Sum(nil))), nil
}

func hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Ensure returns the seat image for opts.Binary, building what the engine lacks; when it
// has the image, it prints nothing and builds nothing.
func Ensure(ctx context.Context, opts Options) (string, error) {
	if err := opts.defaults(); err != nil {
		return "", err
	}
	tag, err := Tag(opts.Binary)
	if err != nil {
		return "", err
	}
	if opts.Engine.ImageExists(ctx, tag) {
		return tag, nil
	}
	return tag, Build(ctx, tag, opts)
}

// Build builds the seat image tag (and its base when the engine lacks it). On failure it
// leaves no container, no half-made image and no scratch files.
func Build(ctx context.Context, tag string, opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	b := &builder{opts: opts, tag: tag, base: BaseTag()}
	fmt.Fprintf(opts.Status, "Building the workshop's seat image %s offline (about 3 minutes with the Debian layer, 20 s without)\n", tag)
	var steps []rootfs.Step
	if !opts.Engine.ImageExists(ctx, b.base) {
		work, err := os.MkdirTemp("", "karplab-seat-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		b.rootfs = filepath.Join(work, "rootfs")
		steps = append(steps,
			rootfs.Step{Name: "the build's tools", Run: func(context.Context) error { return rootfs.RequireTools("make workshop-image", rootfs.Tools...) }},
			rootfs.Step{Name: "Debian " + rootfs.DebianSuite + " root file system with a learner's shell and the aws CLI (debootstrap)", Run: b.debootstrap},
			rootfs.Step{Name: "the learner's account and shell", Run: b.learner},
			rootfs.Step{Name: "base image " + b.base, Run: b.importBase},
		)
	} else {
		fmt.Fprintf(opts.Status, "%s has %s already\n", opts.Engine.Label(), b.base)
	}
	steps = append(steps, rootfs.Step{Name: "the karplab binary and the exercises in " + Home, Run: b.seatLayer})
	began := time.Now()
	if err := rootfs.RunSteps(ctx, opts.Status, "the seat image", steps); err != nil {
		return err
	}
	fmt.Fprintf(opts.Status, "Built %s in %s\n", tag, time.Since(began).Round(time.Second))
	rootfs.RemoveOlder(ctx, opts.Engine, Repository, tag, opts.Status)
	rootfs.RemoveOlder(ctx, opts.Engine, BaseRepository, b.base, opts.Status)
	return nil
}
