package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/karplab/karplab/cluster/rootfs"
)

// baseFiles is where kind's base-image files lie in the kind module.
const baseFiles = "images/base/files"

// conflist is the node's CNI configuration: kind's own CNI (kindnetd) is an image of its own
// that no module here builds, so the node gets a static ptp network on its pod /24 (one node),
// with masquerading for traffic that leaves it.
const conflist = `{
  "cniVersion": "0.3.1",
  "name": "karplab",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": true,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "routes": [{ "dst": "0.0.0.0/0" }],
        "ranges": [[{ "subnet": "10.244.0.0/24" }]]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
`

func (b *builder) rootfs() string { return filepath.Join(b.work, "rootfs") }

// debootstrap makes the Debian root file system.
func (b *builder) debootstrap(ctx context.Context) error {
	return rootfs.Debootstrap(ctx, b.rootfs(), DebianSuite, b.opts.Mirror, debianPackages)
}

// nodeFiles does what kind's base image Dockerfile does on top of its packages, then what
// kind's `build node-image` adds: the Kubernetes binaries and /kind/version.
func (b *builder) nodeFiles(ctx context.Context) error {
	r := b.rootfs()
	if err := b.copyKindFiles(); err != nil {
		return err
	}
	// The Dockerfile's clean-up of the units a container must not start.
	for _, pattern := range []string{
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"lib/systemd/system/multi-user.target.wants/*", "etc/systemd/system/*.wants/*",
		"lib/systemd/system/local-fs.target.wants/*", "lib/systemd/system/sockets.target.wants/*udev*",
		"lib/systemd/system/sockets.target.wants/*initctl*", "lib/systemd/system/basic.target.wants/*",
		"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*",
	} {
		matches, _ := filepath.Glob(filepath.Join(r, pattern))
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	if err := rootfs.AppendFile(filepath.Join(r, "etc/systemd/journald.conf"), "ReadKMsg=no\n"); err != nil {
		return err
	}
	// Debian puts containerd in /usr/bin and the CNI plugins in /usr/lib/cni; kind's unit and
	// containerd's configuration look in /usr/local/bin and /opt/cni/bin.
	for link, target := range map[string]string{"sbin/init": "/usr/lib/systemd/systemd", "usr/local/bin/containerd": "/usr/bin/containerd", "opt/cni/bin": "/usr/lib/cni"} {
		p := filepath.Join(r, link)
		os.RemoveAll(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, p); err != nil {
			return err
		}
	}
	if _, err := run(ctx, r, nil, "chroot", r, "systemctl", "enable", "kubelet.service", "containerd.service", "undo-mount-hacks.service"); err != nil {
		return err
	}
	if _, err := run(ctx, r, nil, "chroot", r, "systemctl", "mask", "systemd-binfmt.service"); err != nil {
		return err
	}
	if err := b.criBaseSpec(ctx); err != nil {
		return err
	}
	for _, c := range []string{"kubelet", "kubeadm", "kubectl"} {
		if err := copyFile(filepath.Join(b.work, "bin", c), filepath.Join(r, "usr/bin", c), 0o755); err != nil {
			return err
		}
	}
	for name, data := range map[string]string{
		"kind/version":                      b.kube + "\n",
		"etc/cni/net.d/10-karplab.conflist": conflist,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(r, name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(r, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(r, "etc/kubernetes/manifests"), 0o755)
}

// copyKindFiles copies kind's base-image files with the Dockerfile's modes: programs 0755,
// everything else 0644.
func (b *builder) copyKindFiles() error {
	src := filepath.Join(b.kind, baseFiles)
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		dst := filepath.Join(b.rootfs(), rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		mode := fs.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		if rel == "etc/systemd/system/containerd-fuse-overlayfs.service" {
			return nil // rootless only, and its binary is not built here
		}
		return copyFile(path, dst, mode)
	})
}

// criBaseSpec writes containerd's base runtime spec as kind's Dockerfile does (ctr oci spec,
// plus kind's createContainer hook, without rlimits).
func (b *builder) criBaseSpec(ctx context.Context) error {
	out, err := run(ctx, b.rootfs(), nil, "chroot", b.rootfs(), "ctr", "oci", "spec")
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal([]byte(out), &spec); err != nil {
		return fmt.Errorf("ctr oci spec printed no JSON: %w", err)
	}
	hooks, _ := spec["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		spec["hooks"] = hooks
	}
	create, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(create, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	if process, ok := spec["process"].(map[string]any); ok {
		delete(process, "rlimits")
	}
	data, err := json.MarshalIndent(spec, "", "    ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.rootfs(), "etc/containerd/cri-base.json"), data, 0o644)
}
