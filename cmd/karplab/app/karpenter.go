package app

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/reexec"
)

// internalCommand holds the commands the daemon re-executes itself with; users never type them.
func internalCommand() *cli.Command {
	return &cli.Command{
		Name:   reexec.Internal,
		Usage:  "commands the lab runs as its own child processes",
		Hidden: true,
		Subcommands: []*cli.Command{{
			Name:      reexec.Karpenter,
			Usage:     "run Karpenter's controllers (the real karpenter-provider-aws, or kwok) until SIGTERM",
			ArgsUsage: "[--provider aws|kwok] [--kubeconfig PATH] [--cluster-name NAME] [--batch-idle-duration D] ...",
			// The flags are package karpenter's (Options.Args renders them for the Supervisor).
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				opts, err := karpenter.ParseArgs(c.Args().Slice())
				if err != nil {
					return &exitError{code: ExitError, err: err}
				}
				opts.Logger = logger(c)
				ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
				defer stop()
				return karpenter.Run(ctx, opts)
			},
		}},
	}
}
