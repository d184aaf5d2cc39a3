package app

import (
	"github.com/urfave/cli/v2"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "grade a lab from both control planes: exit 0 pass, 1 fail, 2 error",
		ArgsUsage: "NAME",
		Description: `Reads the evidence (Kubernetes objects, events and the lab's recorded history; the EC2
emulator's instances, audit trail and billing) and prints the lab's checklist: what passed,
what failed and why, with a hint for each failure.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"}},
		Action: func(c *cli.Context) error {
			l, err := labArg(c)
			if err != nil {
				return err
			}
			env, err := labEnv(c)
			if err != nil {
				return err
			}
			report, err := l.Check(c.Context, env)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				err = report.WriteJSON(c.App.Writer)
			} else {
				err = report.WriteText(c.App.Writer)
			}
			if err != nil {
				return err
			}
			if !report.Passed {
				return failed()
			}
			return nil
		},
	}
}
