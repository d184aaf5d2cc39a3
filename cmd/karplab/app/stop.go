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
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "how long to wait for a clean stop before killing"},
		},
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			err = cluster.Stop(c.Context, home, c.Duration("timeout"), c.App.ErrWriter)
			if cluster.IsNotRunning(err) {
				fmt.Fprintln(c.App.ErrWriter, "karplab is not running")
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(c.App.ErrWriter, "karplab stopped")
			return nil
		},
	}
}
