package app

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/kubelet"
)

func kubeletCommand() *cli.Command {
	return &cli.Command{
		Name:  "kubelet",
		Usage: "the simulated kubelets: what each instance's node is doing, and bootstrap faults",
		Subcommands: []*cli.Command{
			{
				Name:  "status",
				Usage: "every pending or running instance as a node: booting, registered, or bootstrap failed (and why)",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
				Action: func(c *cli.Context) error {
					home, err := cluster.DefaultHome()
					if err != nil {
						return err
					}
					v, err := cluster.Kubelet(c.Context, home)
					if err != nil {
						return &exitError{code: ExitError, err: err}
					}
					if c.Bool("json") {
						return printJSON(c, v)
					}
					tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
					fmt.Fprintln(tw, "INSTANCE\tTYPE\tZONE\tNODE\tPHASE\tSINCE\tREASON")
					for _, n := range v.Nodes {
						since := "-"
						if !n.RunningSince.IsZero() {
							since = n.RunningSince.Local().Format(time.TimeOnly)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.InstanceID, n.InstanceType, n.Zone, orDash(n.NodeName), n.Phase, since, orDash(n.Reason))
					}
					tw.Flush()
					for _, f := range v.Faults {
						fmt.Fprintf(c.App.Writer, "bootstrap fault: instances %v tags %v: %s\n", f.InstanceIDs, f.Tags, f.Reason)
					}
					return nil
				},
			},
			{
				Name:  "break-bootstrap",
				Usage: "make instances that boot from now on run without ever registering a Node",
				Description: `Reproduces a broken bootstrap: the EC2 instance runs (and bills), the NodeClaim stays
Launched, no Node registers, pods stay Pending, and after 15 minutes Karpenter's registration
timeout deletes the NodeClaim. (A user-data script with a top-level 'exit 1' in the
EC2NodeClass's spec.userData does the same, the way it would on AWS.)

   karplab kubelet break-bootstrap --nodepool ziba-general
   karplab kubelet repair-bootstrap`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "nodepool", Usage: "break instances of this NodePool (their karpenter.sh/nodepool tag)"},
					&cli.StringSliceFlag{Name: "instance", Usage: "break these instance IDs"},
					&cli.StringFlag{Name: "reason", Usage: "the cause the kubelet reports"},
				},
				Action: func(c *cli.Context) error {
					home, err := cluster.DefaultHome()
					if err != nil {
						return err
					}
					f := kubelet.BootstrapFault{InstanceIDs: c.StringSlice("instance"), Reason: c.String("reason")}
					if np := c.String("nodepool"); np != "" {
						f.Tags = map[string]string{"karpenter.sh/nodepool": np}
					}
					if err := cluster.BreakBootstrap(c.Context, home, f); err != nil {
						return &exitError{code: ExitError, err: err}
					}
					fmt.Fprintln(c.App.ErrWriter, "bootstrap broken for matching instances that boot from now on (karplab kubelet repair-bootstrap undoes it)")
					return nil
				},
			},
			{
				Name:  "repair-bootstrap",
				Usage: "clear every bootstrap fault",
				Action: func(c *cli.Context) error {
					home, err := cluster.DefaultHome()
					if err != nil {
						return err
					}
					if err := cluster.RepairBootstrap(c.Context, home); err != nil {
						return &exitError{code: ExitError, err: err}
					}
					fmt.Fprintln(c.App.ErrWriter, "bootstrap faults cleared")
					return nil
				},
			},
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
