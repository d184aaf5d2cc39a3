package app

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
)

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:  "stop",
		Usage: "stop the lab and every process it started (data is kept for the next start)",
		Description: `Stops the daemon, Karpenter, the emulator and the simulated kubelet. The cluster's
data and the EC2 account stay in $KARPLAB_HOME for the next start.

With --uninstall on a cluster of yours (start --backend existing), it first resets the lab
(Karpenter terminates its machines), stops, and then removes everything the lab created on
the cluster: the labs' namespaces, NodePools and nodes, Karpenter's CRDs, the namespace
karplab, kube-dns if the lab made it, the metrics API, and the events about them. The
cluster's own objects stay as they were. It works after a plain stop too.`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "how long to wait for a clean stop before killing"},
			&cli.BoolFlag{Name: "uninstall", Usage: "also remove from the cluster everything the lab created (--backend existing)"},
		},
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			w := c.App.ErrWriter
			if c.Bool("uninstall") {
				if err := cluster.Reset(c.Context, home, w); err != nil && !cluster.IsNotRunning(err) {
					return fmt.Errorf("resetting before the uninstall: %w", err)
				}
			}
			err = cluster.Stop(c.Context, home, c.Duration("timeout"), w)
			switch {
			case cluster.IsNotRunning(err):
				fmt.Fprintln(w, "karplab is not running")
			case err != nil:
				return err
			default:
				fmt.Fprintln(w, "karplab stopped")
			}
			if c.Bool("uninstall") {
				return cluster.Uninstall(c.Context, home, w)
			}
			return nil
		},
	}
}
