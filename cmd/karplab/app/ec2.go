package app

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/fakeec2"
	ec2model "github.com/karplab/karplab/fakeec2/ec2"
)

func ec2Command() *cli.Command {
	return &cli.Command{
		Name:        "ec2",
		Usage:       "the EC2 API emulator: serve it alone; read its audit trail and billing; inject faults and policy",
		Subcommands: append([]*cli.Command{ec2ServeCommand()}, ec2AdminCommands()...),
	}
}

type ec2ServeFlags struct {
	addr, state, region, account  string
	discoveryTag                  string
	zones                         cli.StringSlice
	bootDelay, shutdownDelay, ret time.Duration
}

func ec2ServeCommand() *cli.Command {
	f := &ec2ServeFlags{}
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the EC2 API emulator until interrupted",
		Description: `Serves the EC2 Query API (for the aws CLI and SDKs: --endpoint-url or AWS_ENDPOINT_URL)
at http://ADDR/ and the lab's admin API (audit, billing, policy, faults, reset) under
http://ADDR/_karplab/. With --state the emulator's state survives restarts.

   karplab ec2 serve --state /tmp/ec2
   AWS_ACCESS_KEY_ID=lab AWS_SECRET_ACCESS_KEY=lab aws --region eu-west-2 \
     --endpoint-url http://127.0.0.1:4566 ec2 describe-instances`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:4566", Usage: "listen address", Destination: &f.addr},
			&cli.StringFlag{Name: "state", Usage: "state directory (empty: keep state in memory)", Destination: &f.state},
			&cli.StringFlag{Name: "region", Value: fakeec2.DefaultRegion, Usage: "emulated region: one of " + strings.Join(ec2model.Regions(), ", "), Destination: &f.region},
			&cli.StringSliceFlag{Name: "zones", Usage: "the account's zones (names or letters; default every zone of the region)", Destination: &f.zones},
			&cli.StringFlag{Name: "discovery-tag", Value: "ziba-production", Usage: "karpenter.sh/discovery on the subnets and node security group, and NAME of KarpenterNodeRole-NAME", Destination: &f.discoveryTag},
			&cli.StringFlag{Name: "account-id", Value: fakeec2.DefaultAccountID, Usage: "emulated account ID", Destination: &f.account},
			&cli.DurationFlag{Name: "boot-delay", Value: fakeec2.DefaultBootDelay, Usage: "how long instances stay pending (0: none)", Destination: &f.bootDelay},
			&cli.DurationFlag{Name: "shutdown-delay", Value: fakeec2.DefaultShutdownDelay, Usage: "how long terminating instances stay shutting-down (0: none)", Destination: &f.shutdownDelay},
			&cli.DurationFlag{Name: "terminated-retention", Value: fakeec2.DefaultTerminatedRetention, Usage: "how long terminated instances stay describable", Destination: &f.ret},
		},
		Action: func(c *cli.Context) error { return runEC2Serve(c, f) },
	}
}

func runEC2Serve(c *cli.Context, f *ec2ServeFlags) error {
	if c.NArg() > 0 {
		return &exitError{code: ExitError, err: fmt.Errorf("ec2 serve takes no arguments, got %q", c.Args().Slice())}
	}
	for name, d := range map[string]time.Duration{"boot-delay": f.bootDelay, "shutdown-delay": f.shutdownDelay, "terminated-retention": f.ret} {
		if d < 0 {
			return &exitError{code: ExitError, err: fmt.Errorf("--%s must not be negative", name)}
		}
	}
	log := logger(c)
	srv, err := fakeec2.New(fakeec2.Options{
		Region: f.region, Zones: f.zones.Value(), DiscoveryTag: f.discoveryTag, AccountID: f.account, StateDir: f.state,
		BootDelay: fakeec2.FlagDelay(f.bootDelay), ShutdownDelay: fakeec2.FlagDelay(f.shutdownDelay),
		TerminatedRetention: fakeec2.FlagDelay(f.ret), Logger: log,
	})
	if err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("starting the EC2 emulator: %w", err)}
	}
	// Catch signals before announcing the address: whoever reads it may signal at once.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	state := f.state
	if state == "" {
		state = "in memory"
	}
	listening := false
	err = srv.ListenAndServe(ctx, f.addr, func(addr net.Addr) {
		listening = true
		fmt.Fprintf(c.App.ErrWriter, "fakeec2: serving EC2 (%s) at http://%s (state: %s); admin API at http://%s/_karplab/\n",
			f.region, addr, state, addr)
	})
	if ctx.Err() != nil {
		fmt.Fprintln(c.App.ErrWriter, "fakeec2: shut down")
	}
	if err != nil && !listening { // the address: a usage or environment error
		return &exitError{code: ExitError, err: err}
	}
	return err
}
