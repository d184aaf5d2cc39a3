package app

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/cluster/reexec"
	"github.com/karplab/karplab/fakeec2"
)

// startFlags are `karplab start`'s choices; `karplab daemon` takes the same ones.
func startFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "backend", Value: "embedded", Usage: "Kubernetes backend: embedded (in-process control plane, no Docker), kind (a kind cluster on Docker or podman; its node image is built offline when missing) or existing (a cluster you have: --kubeconfig, --context)"},
		&cli.StringFlag{Name: "kubeconfig", Usage: "with --backend existing: the cluster's kubeconfig (default $KUBECONFIG or ~/.kube/config)"},
		&cli.StringFlag{Name: "context", Usage: "with --backend existing: the kubeconfig context (default its current context)"},
		&cli.StringFlag{Name: "provider", Value: "aws", Usage: "Karpenter cloud provider: aws (the real karpenter-provider-aws v1.15.0 on the emulated AWS account) or kwok (Karpenter's stock kwok provider, no EC2: the floor to compare with)"},
		&cli.StringFlag{Name: "ec2-addr", Value: cluster.DefaultEC2Addr, Usage: "listen address of the EC2 API emulator; when the default is taken (another lab, LocalStack), a free port on 127.0.0.1, which karplab env exports"},
		&cli.DurationFlag{Name: "boot-delay", Value: cluster.DefaultBootDelay, Usage: "how long an emulated instance stays pending before it runs"},
		&cli.StringFlag{Name: "region", Usage: "the lab account's AWS region, at its first start (default " + cluster.DefaultRegion + "; kept in $KARPLAB_HOME)"},
		&cli.StringSliceFlag{Name: "zones", Usage: "the account's zones, a subset of the region's (names or letters: a,b,c; default every zone)"},
		&cli.StringFlag{Name: "cluster-name", Usage: "the EKS cluster's name, at the first start (default " + cluster.DefaultClusterName + "; another name sets the account up as Karpenter's getting-started guide does: discovery tag and KarpenterNodeRole-NAME)"},
		&cli.StringSliceFlag{Name: "set", Usage: "a Karpenter setting for this start, NAME=VALUE as its Deployment's env has it (FEATURE_GATES=SpotToSpotConsolidation=true, BATCH_MAX_DURATION=20s; repeat for more); one Karpenter v1.15.0 does not read is refused"},
	}
}

func startCommand() *cli.Command {
	return &cli.Command{
		Name:  "start",
		Usage: "start the lab: Kubernetes control plane, EC2 emulator, Karpenter, simulated kubelet",
		Description: `Starts the lab daemon in the background and returns once everything is Ready,
printing each step. State lives in $KARPLAB_HOME (default ~/.karplab); a start after a stop
comes back with the same cluster data and EC2 state.

With --backend existing the lab runs on a cluster you have (Kubernetes 1.26 to 1.37, an
admin kubeconfig, no Karpenter of its own): it installs Karpenter's CRDs, the kube-dns
Service if missing and the namespace karplab, runs everything else on this host, and
records what it creates. reset and the labs never touch the cluster's own namespaces,
nodes and workloads; karplab stop --uninstall removes exactly what the lab made:
   karplab start --backend existing --kubeconfig ~/.kube/training.yaml --context lab

The lab's AWS account is the course's (eu-west-2, cluster karplab) unless the first start
names another; the home keeps it across stop and start:
   karplab start --region us-east-1 --cluster-name prod-use1

Karpenter's settings, as its Deployment's env would carry them, for this start (a report
that needs a feature gate): karplab start --set FEATURE_GATES=SpotToSpotConsolidation=true

Then point kubectl and the aws CLI at the lab:
   eval "$(karplab env)"
or use the built-in kubectl:
   karplab kubectl get nodepools,nodeclaims`,
		Flags: append(startFlags(),
			&cli.BoolFlag{Name: "foreground", Usage: "run the lab in this terminal until Ctrl-C instead of in the background"},
			&cli.DurationFlag{Name: "timeout", Value: cluster.DefaultStartTimeout, Usage: "how long to wait for the lab to be ready"},
		),
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			for _, kv := range c.StringSlice("set") {
				if err := karpenter.CheckSetting(kv); err != nil {
					return &exitError{code: ExitError, err: fmt.Errorf("--set %s (nothing started)", err)}
				}
			}
			if c.Bool("foreground") {
				return runDaemon(c, home)
			}
			kubeconfig, err := absPath(c.String("kubeconfig"))
			if err != nil {
				return err
			}
			st, err := cluster.Start(c.Context, home, cluster.StartOptions{
				Region:      c.String("region"),
				Zones:       c.StringSlice("zones"),
				ClusterName: c.String("cluster-name"),
				Backend:     c.String("backend"),
				Kubeconfig:  kubeconfig,
				Context:     c.String("context"),
				Provider:    c.String("provider"),
				EC2Addr:     namedEC2Addr(c),
				BootDelay:   fakeec2.FlagDelay(c.Duration("boot-delay")),
				Verbosity:   c.Int("verbosity"),
				Timeout:     c.Duration("timeout"),
				Settings:    c.StringSlice("set"),
			}, c.App.ErrWriter)
			var running *cluster.AlreadyRunningError
			if errors.As(err, &running) {
				fmt.Fprintln(c.App.ErrWriter, running.Error())
				return nil
			}
			if err != nil {
				return err
			}
			printReady(c, home, st)
			return nil
		},
	}
}

// namedEC2Addr is the --ec2-addr the user gave, or "" for the default (which moves to a free
// port when it is taken).
func namedEC2Addr(c *cli.Context) string {
	if c.IsSet("ec2-addr") {
		return c.String("ec2-addr")
	}
	return ""
}

// absPath makes a path flag absolute: the daemon may not share the shell's directory.
func absPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return filepath.Abs(p)
}

func printReady(c *cli.Context, home cluster.Home, st *cluster.State) {
	w := c.App.ErrWriter
	fmt.Fprintf(w, "\nkarplab is ready.\n")
	fmt.Fprintf(w, "  kubeconfig:   %s\n", st.Kubeconfig)
	fmt.Fprintf(w, "  API server:   %s\n", st.APIServer)
	if st.EC2Endpoint != "" {
		acct, _ := home.ReadAccount()
		fmt.Fprintf(w, "  EC2 endpoint: %s (region %s, zones %s, cluster %s)\n", st.EC2Endpoint, acct.Region,
			strings.Join(acct.Zones, ","), acct.ClusterName)
	}
	fmt.Fprintf(w, "\nPoint kubectl and the aws CLI at the lab:\n  eval \"$(karplab env)\"\n")
	fmt.Fprintf(w, "or run kubectl built in: karplab kubectl get nodes\n")
}

// daemonCommand runs the lab in this process; `start` launches it in the background.
func daemonCommand() *cli.Command {
	return &cli.Command{
		Name:   reexec.Daemon,
		Hidden: true,
		Usage:  "run the lab in the foreground (what start launches)",
		Flags: append(startFlags(), &cli.BoolFlag{Name: reexec.PreflightDoneFlag, Hidden: true,
			Usage: "start has just checked these choices (and the cluster): do not check again"},
			&cli.StringFlag{Name: reexec.ReplayFlag, Hidden: true, Usage: "start from this bundle's directory (karplab replay)"}),
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			return runDaemon(c, home)
		},
	}
}

// daemonMemoryLimit is the daemon's soft memory limit unless GOMEMLIMIT sets one.
const daemonMemoryLimit = 1152 << 20

func runDaemon(c *cli.Context, home cluster.Home) error {
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv("GOMEMLIMIT") == "" {
		// One process holds a control plane's caches, many simulated kubelets and the
		// emulator; at a replay's scale the collector's default headroom (GOGC=100) doubles
		// its live heap. A soft limit makes it collect harder only near the limit, and keeps
		// a replay of 5,000 pods within the lab's 2 GiB with Karpenter's process.
		debug.SetMemoryLimit(daemonMemoryLimit)
	}
	kubeconfig, err := absPath(c.String("kubeconfig"))
	if err != nil {
		return err
	}
	acct, err := home.ChooseAccount(c.String("region"), c.StringSlice("zones"), c.String("cluster-name"))
	if err != nil {
		return err
	}
	ec2Addr, note, err := cluster.ChooseEC2Addr(home, namedEC2Addr(c))
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintln(c.App.ErrWriter, note)
	}
	err = cluster.RunDaemon(ctx, cluster.DaemonConfig{
		Account:    acct,
		Home:       home,
		Backend:    c.String("backend"),
		Kubeconfig: kubeconfig,
		Context:    c.String("context"),
		Provider:   c.String("provider"),
		EC2Addr:    ec2Addr,
		BootDelay:  fakeec2.FlagDelay(c.Duration("boot-delay")),
		Logger:     logger(c),
		Status:     c.App.ErrWriter,
		// Set when start launched this daemon: start --foreground has checked nothing.
		Preflighted: c.Bool(reexec.PreflightDoneFlag),
		Replay:      replayFlag(c),
		Settings:    c.StringSlice("set"),
	})
	var running *cluster.AlreadyRunningError
	if errors.As(err, &running) {
		fmt.Fprintln(c.App.ErrWriter, running.Error())
		return nil
	}
	return err
}

// replayFlag is the daemon's --replay, "" for start (which has no such flag).
func replayFlag(c *cli.Context) string {
	for _, f := range c.Command.Flags {
		if f.Names()[0] == reexec.ReplayFlag {
			return c.String(reexec.ReplayFlag)
		}
	}
	return ""
}
