package nodeimage

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// entry is one file of an image layer: content from a host file, or a symbolic link.
type entry struct {
	from string // host file; empty for a directory or a link
	link string // link target
	mode int64
}

// imageSpec is one FROM-scratch image: its files by path in the image, and its config.
type imageSpec struct {
	files  map[string]entry
	config v1.Config
}

// archive is the control-plane images' docker archive, which the node's containerd imports.
func (b *builder) archive() string { return filepath.Join(b.work, "images.tar") }

// controlPlaneImages builds every image kubeadm listed (and the sandbox image) FROM scratch,
// named exactly as kubeadm and containerd will ask for them, into one docker archive.
func (b *builder) controlPlaneImages(ctx context.Context) error {
	refs := map[name.Reference]v1.Image{}
	for i, img := range b.images {
		spec, err := b.spec(ctx, img)
		if err != nil {
			return err
		}
		layer := filepath.Join(b.work, fmt.Sprintf("layer%d.tar", i))
		if err := writeLayer(layer, spec.files); err != nil {
			return fmt.Errorf("%s: %w", img, err)
		}
		built, err := scratchImage(layer, spec.config)
		if err != nil {
			return fmt.Errorf("%s: %w", img, err)
		}
		ref, err := name.ParseReference(img)
		if err != nil {
			return err
		}
		refs[ref] = built
	}
	return tarball.MultiRefWriteToFile(b.archive(), refs)
}

// spec says what image img holds: the binary built for it, and for kube-proxy the
// iptables (legacy) and conntrack it runs, with their libraries, from the node's Debian.
func (b *builder) spec(ctx context.Context, img string) (imageSpec, error) {
	bin := func(n string) string { return filepath.Join(b.work, "bin", n) }
	onPath := v1.Config{Env: []string{"PATH=/usr/local/bin"}}
	repo, _, _ := strings.Cut(img[strings.LastIndex(img, "/")+1:], ":")
	switch repo {
	case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd":
		// kubeadm's static pods run the command by name.
		return imageSpec{files: map[string]entry{"/usr/local/bin/" + repo: {from: bin(repo), mode: 0o755}}, config: onPath}, nil
	case "coredns":
		// CoreDNS's Deployment passes only arguments.
		return imageSpec{files: map[string]entry{"/coredns": {from: bin("coredns"), mode: 0o755}}, config: v1.Config{Entrypoint: []string{"/coredns"}}}, nil
	case "pause":
		return imageSpec{files: map[string]entry{"/pause": {from: bin("pause"), mode: 0o755}}, config: v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"}}, nil
	case "kube-proxy":
		files, err := b.iptablesFiles(ctx)
		if err != nil {
			return imageSpec{}, err
		}
		files["/usr/local/bin/kube-proxy"] = entry{from: bin("kube-proxy"), mode: 0o755}
		return imageSpec{files: files, config: v1.Config{Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}}}, nil
	}
	return imageSpec{}, fmt.Errorf("kubeadm lists %s, which the lab does not know how to build", img)
}

// iptablesFiles are kube-proxy's iptables (legacy: kind's entrypoint picks legacy on hosts
// like these) and conntrack, their extensions and every library they load, from the rootfs.
func (b *builder) iptablesFiles(ctx context.Context) (map[string]entry, error) {
	r := b.rootfs()
	files := map[string]entry{
		"/usr/sbin/xtables-legacy-multi": {from: filepath.Join(r, "usr/sbin/xtables-legacy-multi"), mode: 0o755},
		"/usr/sbin/conntrack":            {from: filepath.Join(r, "usr/sbin/conntrack"), mode: 0o755},
		"/etc/hosts":                     {from: os.DevNull, mode: 0o644},
		"/tmp":                           {mode: 0o1777},
		"/run":                           {mode: 0o755},
	}
	for _, n := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
		files["/usr/sbin/"+n] = entry{link: "xtables-legacy-multi"}
	}
	elfs := []string{"/usr/sbin/xtables-legacy-multi", "/usr/sbin/conntrack"}
	exts, _ := filepath.Glob(filepath.Join(r, "usr/lib/*-linux-gnu/xtables/*.so"))
	for _, e := range exts {
		p := "/" + strings.TrimPrefix(e, r+"/")
		files[p] = entry{from: e, mode: 0o644}
		elfs = append(elfs, p)
	}
	if len(exts) == 0 {
		return nil, fmt.Errorf("no iptables extensions under %s/usr/lib/*-linux-gnu/xtables", r)
	}
	for _, e := range elfs {
		out, err := run(ctx, r, nil, "chroot", r, "ldd", e)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			lib := ""
			switch {
			case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
				lib = f[2]
			case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
				lib = f[0] // the dynamic loader
			}
			if lib != "" {
				files[lib] = entry{from: filepath.Join(r, lib), mode: 0o755}
			}
		}
	}
	return files, nil
}

// writeLayer writes files as a layer tar, each directory before what it holds. Content is
// read through symbolic links on the host side.
func writeLayer(path string, files map[string]entry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	dirs := map[string]bool{}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := writeEntry(tw, dirs, strings.TrimPrefix(n, "/"), files[n]); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeEntry(tw *tar.Writer, dirs map[string]bool, n string, e entry) error {
	if err := writeParents(tw, dirs, path.Dir(n)); err != nil {
		return err
	}
	switch {
	case e.link != "":
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: n, Linkname: e.link, Mode: 0o777})
	case e.from == "":
		dirs[n] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: n + "/", Mode: e.mode})
	}
	src, err := os.Open(e.from)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: e.mode, Size: st.Size()}); err != nil {
		return err
	}
	_, err = io.Copy(tw, src)
	return err
}

// writeParents writes d and the directories above it that are not written yet.
func writeParents(tw *tar.Writer, dirs map[string]bool, d string) error {
	if d == "." || d == "/" || dirs[d] {
		return nil
	}
	if err := writeParents(tw, dirs, path.Dir(d)); err != nil {
		return err
	}
	dirs[d] = true
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755})
}

// scratchImage is an image of one layer with cfg, for this machine's platform.
func scratchImage(layerPath string, cfg v1.Config) (v1.Image, error) {
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", runtime.GOARCH, cfg
	return mutate.ConfigFile(img, cf)
}
