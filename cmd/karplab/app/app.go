package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/urfave/cli/v2"
)

// Exit codes of the CLI contract.
const (
	ExitPass   = 0
	ExitFailed = 1 // checks ran and some failed
	ExitError  = 2 // usage or environment error
)

// exitError carries a non-default exit code up to Run; its message (if any) is printed once.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// failed reports that checks ran and failed: exit 1, nothing more printed.
func failed() error { return &exitError{code: ExitFailed} }

// Run runs the CLI with args (args[0] is the program name) and returns the exit code.
// Errors are printed once, here, as kind's app.Run does.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.Run(interspersed(app, args))
	if err == nil {
		return ExitPass
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "error: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return ExitError
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "karplab",
		Usage: "an offline lab for Karpenter node provisioning on AWS",
		Description: `karplab runs a Kubernetes control plane, real Karpenter controllers and an EC2 API
emulator on this machine, so you can watch Pending pods become NodeClaims, EC2 instances,
registered Nodes and running workloads, and grade the evidence that links them.

Start here:
   karplab start                 bring the lab up (returns once everything is Ready)
   eval "$(karplab env)"         point kubectl and the aws CLI at the lab
   karplab lab list              the scenarios
   karplab lab run happy-path    watch one
   karplab check happy-path      grade it
   karplab evidence              the pod -> NodeClaim -> instance -> Node table
   karplab stop`,
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Flags: []cli.Flag{
			&cli.IntFlag{
				Name:    "verbosity",
				Aliases: []string{"v"},
				Usage:   "log detail on stderr: 0 status, 1 one line per EC2 request, 2 request and response bodies",
			},
		},
		// A usage error (unknown flag, missing argument) exits 2 like any environment error.
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return &exitError{code: ExitError, err: fmt.Errorf("%w (see --help)", err)}
		},
		ExitErrHandler: func(*cli.Context, error) {}, // Run prints errors and picks the code
		Commands: []*cli.Command{
			startCommand(),
			statusCommand(),
			stopCommand(),
			resetCommand(),
			envCommand(),
			kubectlCommand(),
			labCommand(),
			checkCommand(),
			lintCommand(),
			evidenceCommand(),
			captureCommand(),
			replayCommand(),
			timeCommand(),
			kubeletCommand(),
			ec2Command(),
			kindImageCommand(),
			workshopCommand(),
			daemonCommand(),
			internalCommand(),
		},
	}
}

// logger returns the slog logger for the -v level set on the root command.
func logger(c *cli.Context) *slog.Logger {
	level := slog.LevelInfo
	switch v := c.Int("verbosity"); {
	case v >= 2:
		level = slog.LevelDebug - 4
	case v == 1:
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
}
