package app

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/kind/nodeimage"
)

func kindImageCommand() *cli.Command {
	return &cli.Command{
		Name:  "kind-image",
		Usage: "build the kind backend's node image offline (what start --backend kind does when it is missing)",
		Description: `Builds a kind node image from Debian's packages, kind's base-image files and
Kubernetes built from karplab's own go.mod, with the control-plane images preloaded, and
tags it by a hash of those inputs in the container engine kind would use (podman where
Docker refuses privileged containers). A second build of the same inputs is a no-op.
Needs root, debootstrap, gcc and the Go toolchain; 15 to 30 minutes on 2 cores the first
time (measured: 28 minutes beside other builds), about 2 minutes once Kubernetes is in the
Go build cache. Prints the image's name on stdout.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "mirror", Value: nodeimage.DebianMirror, Usage: "the Debian mirror debootstrap reads"},
		},
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			if err := home.Ensure(); err != nil {
				return err
			}
			e, err := engine.Choose(c.Context, engine.Options{ContainersConf: filepath.Join(string(home), "containers.conf")})
			if err != nil {
				return err
			}
			for _, n := range e.Notes {
				fmt.Fprintln(c.App.ErrWriter, n)
			}
			tag, err := nodeimage.Tag()
			if err != nil {
				return err
			}
			if e.ImageExists(c.Context, tag) {
				fmt.Fprintf(c.App.ErrWriter, "%s has %s already: nothing to build\n", e.Label(), tag)
			} else if err := nodeimage.Build(c.Context, tag, nodeimage.Options{Engine: e, Status: c.App.ErrWriter, Mirror: c.String("mirror")}); err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, tag)
			return nil
		},
	}
}
