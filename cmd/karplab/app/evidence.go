package app

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/labs"
	"github.com/karplab/karplab/labs/evidence"
)

func evidenceCommand() *cli.Command {
	return &cli.Command{
		Name:  "evidence",
		Usage: "print the correlation report: pending pod UID -> NodeClaim -> EC2 instance -> Node -> running pod, with costs",
		Description: `Reads both control planes — the Kubernetes history the lab recorded, and the EC2
emulator's instances, audit trail and billing ledger — and joins them by identifiers only.
Times are relative to the first workload pod's creation. In a lab karplab replay loaded,
they are relative to the load: earlier times are production's, from the bundle (a replayed
object keeps its creation time in production), later ones the lab's.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the evidence record as JSON"},
			&cli.StringFlag{Name: "html", Usage: "write a self-contained HTML page (timeline per pod, cost by tag) to `FILE`"},
			&cli.StringFlag{Name: "snapshot", Usage: "also save the raw snapshot both control planes gave (JSON) to `FILE`", Hidden: true},
		},
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			env, err := labs.NewEnv(c.Context, home)
			if err != nil {
				return err
			}
			snap, err := env.TakeSnapshot(c.Context)
			if err != nil {
				return err
			}
			if path := c.String("snapshot"); path != "" {
				if err := writeJSONFile(path, snap); err != nil {
					return err
				}
			}
			ev := evidence.Correlate(snap)
			switch {
			case c.Bool("json"):
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(ev)
			case c.String("html") != "":
				if err := writeHTMLFile(c.String("html"), ev); err != nil {
					return err
				}
				fmt.Fprintf(c.App.ErrWriter, "wrote %s\n", c.String("html"))
				return nil
			}
			return ev.WriteText(c.App.Writer)
		},
	}
}
