package seatimage

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/karplab/karplab/cluster/rootfs"
	"github.com/karplab/karplab/exercises"
)

// builder is one build's state.
type builder struct {
	opts   Options
	tag    string
	base   string
	rootfs string // the Debian layer's scratch root file system, when it is built
}

func (b *builder) debootstrap(ctx context.Context) error {
	return rootfs.Debootstrap(ctx, b.rootfs, rootfs.DebianSuite, b.opts.Mirror, packages)
}

// learner adds the learner's account and shell set-up, and drops apt's downloads.
func (b *builder) learner(ctx context.Context) error {
	r := b.rootfs
	id := strconv.Itoa(UID)
	if _, err := rootfs.Run(ctx, r, nil, "chroot", r, "useradd", "--create-home", "--uid", id, "--user-group", "--shell", "/bin/bash", Learner); err != nil {
		return err
	}
	for name, f := range map[string]struct {
		data string
		mode fs.FileMode
	}{
		"etc/profile.d/karplab.sh": {profile, 0o644},
		"usr/local/bin/kubectl":    {kubectl, 0o755},
	} {
		if err := os.WriteFile(filepath.Join(r, name), []byte(f.data), f.mode); err != nil {
			return err
		}
	}
	// An interactive shell that is no login shell reads bash.bashrc only.
	if err := rootfs.AppendFile(filepath.Join(r, "etc/bash.bashrc"), "\n. /etc/profile.d/karplab.sh\n"); err != nil {
		return err
	}
	for _, pattern := range []string{"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*", "var/log/*.log"} {
		matches, _ := filepath.Glob(filepath.Join(r, pattern))
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// importBase imports the root file system with the seat's configuration.
func (b *builder) importBase(ctx context.Context) error {
	return rootfs.Import(ctx, b.opts.Engine, b.rootfs, b.base, config()...)
}

// config is the seat's image configuration: tini as process 1, the learner as the user of
// every process, by number (the engine resolves a name on the host: Docker's cp -a
// failed with "getent unable to find entry"; a Pod's runAsNonRoot wants a number too).
func config() []string {
	entry, _ := json.Marshal(Entrypoint)
	id := strconv.Itoa(UID)
	return []string{"ENTRYPOINT " + string(entry), "USER " + id + ":" + id, "WORKDIR " + Home,
		"ENV HOME=" + Home, "ENV USER=" + Learner, "ENV LANG=C.UTF-8", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
}

// seatLayer copies the binary and the exercises into a container of the base as one
// archive, gives the learner their home, and commits it with the base's configuration. The
// chown is done inside: engines differ on what cp does with an archive's owners (Docker's
// cp -a chowns to the container's user, looked up on the host).
func (b *builder) seatLayer(ctx context.Context) error {
	e := b.opts.Engine
	box := "karplab-seat-image-" + b.tag[strings.LastIndex(b.tag, ":")+1:]
	e.Run(ctx, nil, "rm", "-f", box) //nolint:errcheck // a leftover of an interrupted build
	if _, err := e.Run(ctx, nil, "run", "-d", "--name", box, "--network", "none", "--user", "0", "--entrypoint", "sleep", b.base, "infinity"); err != nil {
		return err
	}
	defer e.Run(context.WithoutCancel(ctx), nil, "rm", "-f", box) //nolint:errcheck // best effort
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(b.writeLayer(pw)) }()
	_, err := e.Run(ctx, pr, "cp", "-", box+":/")
	pr.Close()
	if err != nil {
		return err
	}
	id := strconv.Itoa(UID)
	if _, err := e.Run(ctx, nil, "exec", "--user", "0", box, "chown", "-R", id+":"+id, Home); err != nil {
		return err
	}
	args := []string{"commit"}
	for _, c := range append(config(), "CMD []") {
		args = append(args, "--change", c)
	}
	_, err = e.Run(ctx, nil, append(args, box, b.tag)...)
	return err
}

// writeLayer writes the seat layer's archive: the binary, owned by root, and each lab's
// exercise in the learner's home, owned by the learner.
func (b *builder) writeLayer(w io.Writer) error {
	tw := tar.NewWriter(w)
	bin, err := os.Open(b.opts.Binary)
	if err != nil {
		return err
	}
	defer bin.Close()
	info, err := bin.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "usr/local/bin/karplab", Mode: 0o755, Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, bin); err != nil {
		return err
	}
	home := strings.TrimPrefix(Home, "/")
	err = fs.WalkDir(exercises.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		h := &tar.Header{Name: path.Join(home, p), Uid: UID, Gid: UID, Uname: Learner, Gname: Learner, Mode: 0o644, Typeflag: tar.TypeReg}
		if d.IsDir() {
			h.Name, h.Mode, h.Typeflag = h.Name+"/", 0o755, tar.TypeDir
			return tw.WriteHeader(h)
		}
		data, err := fs.ReadFile(exercises.FS, p)
		if err != nil {
			return err
		}
		h.Size = int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("staging the exercises: %w", err)
	}
	return tw.Close()
}
