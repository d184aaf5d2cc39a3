package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
)

func resetCommand() *cli.Command {
	return &cli.Command{
		Name:  "reset",
		Usage: "bring the running lab back to its starting point (the daemon keeps running)",
		Description: `Deletes the workload namespaces and the default namespace's workloads, NodePools,
NodeClaims, nodes, EC2NodeClasses, and resets the EC2 account (instances, volumes, ENIs,
launch templates, billing, audit trail, policy, faults, and the account's clock goes back
to wall time; the default VPC, subnets, security groups and images stay), then restarts
Karpenter and starts a new evidence history.`,
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			fmt.Fprintln(c.App.ErrWriter, "Resetting the lab")
			if err := cluster.Reset(c.Context, home, c.App.ErrWriter); err != nil {
				return err
			}
			fmt.Fprintln(c.App.ErrWriter, "The lab is back at its starting point")
			return nil
		},
	}
}
