package nodeimage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/rootfs"
)

// commit imports the root file system as an image, runs it with containerd as kind's own
// build does, preloads the control-plane images into containerd's k8s.io namespace (pinned,
// not unpacked, as kind does), and commits the container as the node image. The intermediate
// image and the container go either way.
func (b *builder) commit(ctx context.Context) (err error) {
	e := b.opts.Engine
	suffix := b.tag[strings.LastIndex(b.tag, "-")+1:]
	base, box := Repository+"-base:"+suffix, "karplab-kind-image-"+suffix
	e.Run(ctx, nil, "rm", "-f", box) //nolint:errcheck // a leftover of an interrupted build
	if err := rootfs.Import(ctx, e, b.rootfs(), base); err != nil {
		return err
	}
	defer e.Run(context.WithoutCancel(ctx), nil, "rmi", "-f", base) //nolint:errcheck // best effort
	if _, err := e.Run(ctx, nil, "run", "-d", "--name", box, "--privileged", "--network", "none",
		"--volume", b.archive()+":/kind/images.tar:ro", "--entrypoint", "sleep", base, "infinity"); err != nil {
		return err
	}
	defer e.Run(context.WithoutCancel(ctx), nil, "rm", "-f", box) //nolint:errcheck // best effort
	if _, err := e.Run(ctx, nil, "exec", "-d", box, "sh", "-c", "containerd >/tmp/containerd.log 2>&1"); err != nil {
		return err
	}
	if err := waitContainerd(ctx, func() error { _, err := e.Run(ctx, nil, "exec", box, "ctr", "version"); return err }); err != nil {
		log, _ := e.Run(ctx, nil, "exec", box, "cat", "/tmp/containerd.log")
		return fmt.Errorf("%w: %s", err, engine.LastLines(log, 3))
	}
	if _, err := e.Run(ctx, nil, "exec", box, "ctr", "-n", "k8s.io", "images", "import", "--label=io.cri-containerd.pinned=pinned",
		"--all-platforms", "--no-unpack", "--digests", "/kind/images.tar"); err != nil {
		return err
	}
	out, err := e.Run(ctx, nil, "exec", box, "ctr", "-n", "k8s.io", "images", "ls", "-q")
	if err != nil {
		return err
	}
	for _, img := range b.images {
		if !strings.Contains(out, img+"\n") {
			return fmt.Errorf("containerd holds no %s after the import (it holds: %s)", img, strings.Join(strings.Fields(out), ", "))
		}
	}
	// containerd's state in /run and /tmp is the container's own (tmpfs in kind's node).
	if _, err := e.Run(ctx, nil, "exec", box, "sh", "-c", "kill $(pidof containerd); while pidof containerd >/dev/null; do sleep 0.1; done; rm -rf /run/containerd /tmp/*"); err != nil {
		return err
	}
	_, err = e.Run(ctx, nil, "commit",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`, "--change", "CMD []",
		"--change", "ENV container=docker", "--change", "STOPSIGNAL SIGRTMIN+3", box, b.tag)
	return err
}

// waitContainerd polls ready until containerd answers, for up to 30 seconds.
func waitContainerd(ctx context.Context, ready func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd did not answer within 30s: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
