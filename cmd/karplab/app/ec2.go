package app

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// ec2Command is the placeholder the fakeec2 work replaces with `ec2 serve`.
func ec2Command() *cli.Command {
	return &cli.Command{
		Name:  "ec2",
		Usage: "the EC2 API emulator on its own",
		Subcommands: []*cli.Command{{
			Name:   "serve",
			Usage:  "serve the EC2 API emulator",
			Action: func(*cli.Context) error { return errors.New("not built yet") },
		}},
	}
}
