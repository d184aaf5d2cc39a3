package app

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/fakeec2"
)

// timeCommand shows and skips the lab account's clock: the emulator's half of lab time.
func timeCommand() *cli.Command {
	return &cli.Command{
		Name:  "time",
		Usage: "the AWS account's clock (lab time), the wall clock and how far the account runs ahead",
		Description: `The lab has its own clock, lab time: the AWS account's and Karpenter's. It starts at wall
time and moves forward only with karplab time skip, so that hours of spend, budget
alerts, consolidateAfter, expireAfter and registration timeouts happen in a second.
karplab reset puts it back to wall time.`,
		Flags:       []cli.Flag{endpointFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Subcommands: []*cli.Command{timeSkipCommand()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitError{code: ExitError, err: fmt.Errorf("time: unknown argument %q (karplab time skip DURATION skips)", c.Args().First())}
			}
			admin, err := adminClient(c)
			if err != nil {
				return err
			}
			lt, err := admin.Time(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, lt)
			}
			fmt.Fprintf(c.App.Writer, "lab time   %s\nwall time  %s\noffset     %s ahead\n", labStamp(lt.Now), labStamp(lt.Wall), lt.Offset)
			return nil
		},
	}
}

func timeSkipCommand() *cli.Command {
	return &cli.Command{
		Name:      "skip",
		Usage:     "move the AWS account's clock forward, as if DURATION had passed (5m, 2h, 30d)",
		ArgsUsage: "DURATION",
		Description: `Examples:
   karplab time skip 2h      two hours of spend in a second: does the budget alert?
   karplab time skip 30d     a month (d is 24h; any Go duration works: 90m, 1h30m, 720h)

What moves: the EC2 emulator's clock, so instance launch and state times and their
timers (boot, shutdown, spot reclaim, how long terminated instances stay describable),
the billing ledger (karplab ec2 billing), AWS Budgets, which are evaluated minute by
minute through the skipped span (1/1440 of it beyond a day) so that each alert fires at
the moment its spend crossed, and the times of EventBridge events.
Then Karpenter's controllers, whose injected clock follows the account's:
consolidateAfter, expireAfter and the 15-minute registration timeout count the skipped
span, and every NodeClaim is nudged to be re-evaluated at once (the ConfigMap
karplab/karplab-lab-clock says which lab time Karpenter runs on). It prints what
the span cost, by NodePool, each alert that fired in it, and each NodeClaim decision
that came due: consolidatable, expiry, registration or launch timeout, with the pods
still on a consolidatable node (a node that runs any is not empty), and the NodeClaims
that were consolidatable already and whose node runs no pod now. Karpenter then acts at
its own pace: an empty node goes about 30 s after the skip (its disruption controller looks
every 10 s and waits 15 s to be sure the node stays empty before draining it).

What does not move: Kubernetes' own timestamps (creationTimestamp, events, the
conditions the API server, the scheduler and the kubelet set) stay on the wall clock.
Karpenter's NodeClaim conditions and the EC2 times are lab time. karplab reset returns
both clocks to wall time. A skip is one way: the clock never goes back.`,
		Flags: []cli.Flag{endpointFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitError{code: ExitError, err: fmt.Errorf("time skip: name one duration (karplab time skip 2h)")}
			}
			d, err := parseSkip(c.Args().First())
			if err != nil {
				return &exitError{code: ExitError, err: err}
			}
			sk, err := skipLabTime(c, d)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, sk)
			}
			if err := printSkip(c.App.Writer, d, sk.TimeSkip); err != nil {
				return err
			}
			return printDue(c.App.Writer, sk)
		},
	}
}

// skipLabTime skips the running lab's clocks through its daemon (the account's and
// Karpenter's), or only the emulator's when it runs alone (karplab ec2 serve, --endpoint).
func skipLabTime(c *cli.Context, d time.Duration) (*cluster.LabTimeSkip, error) {
	if c.String("endpoint") == "" {
		if home, err := cluster.DefaultHome(); err == nil {
			sk, err := cluster.SkipTime(c.Context, home, d)
			if err == nil {
				return sk, nil
			}
			if !cluster.IsNotRunning(err) {
				return nil, &exitError{code: ExitError, err: err}
			}
		}
	}
	admin, err := adminClient(c)
	if err != nil {
		return nil, err
	}
	sk, err := admin.SkipTime(c.Context, d)
	if err != nil {
		return nil, &exitError{code: ExitError, err: err}
	}
	return &cluster.LabTimeSkip{TimeSkip: sk}, nil
}

// printDue says what Karpenter now does because of the skip.
func printDue(w io.Writer, sk *cluster.LabTimeSkip) error {
	if !sk.KarpenterFollowed {
		fmt.Fprintln(w, "Karpenter is not part of this emulator: only the account's clock moved")
		return nil
	}
	if len(sk.Due) == 0 {
		fmt.Fprintln(w, "no NodeClaim decision came due in the span (Karpenter's controllers run on the new lab time)")
	} else if err := printDueTable(w, sk.Due); err != nil {
		return err
	}
	for _, d := range sk.Empty {
		fmt.Fprintf(w, "%s (NodePool %s) was consolidatable before the skip, since %s, and its node runs no pod now: nothing about it came due, and Karpenter removes it at its next look, about 30 s from now, unless a disruption budget or karpenter.sh/do-not-disrupt holds it\n",
			d.NodeClaim, d.NodePool, labStamp(d.At))
	}
	return nil
}

// printDueTable lists the decisions that came due, and what Karpenter does about them.
func printDueTable(w io.Writer, due []karpenter.Due) error {
	fmt.Fprintln(w, "came due in the span (Karpenter's controllers run on the new lab time and act on these now):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODECLAIM\tNODEPOOL\tDUE\tAT\tWHAT")
	busy := false
	for _, d := range due {
		what := d.What
		if len(d.Pods) > 0 {
			busy = true
			what += fmt.Sprintf("; not empty, its node still runs %s", podList(d.Pods))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", d.NodeClaim, d.NodePool, d.Kind, labStamp(d.At), what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range due {
		if d.Kind == karpenter.DueConsolidatable && len(d.Pods) == 0 {
			fmt.Fprintln(w, "an empty node goes about 30 s after the skip: the disruption controller looks every 10 s, waits 15 s to be sure the node stays empty, then drains it and terminates its instance")
			break
		}
	}
	if busy {
		fmt.Fprintln(w, "a node that still runs pods goes only if they fit on other nodes or on a cheaper replacement; Karpenter says why not in its events:\n  kubectl get events -A --field-selector reason=Unconsolidatable")
	}
	return nil
}

// podList names a few pods and counts the rest.
func podList(pods []string) string {
	const show = 3
	if len(pods) == 1 {
		return "1 pod: " + pods[0]
	}
	if len(pods) <= show {
		return fmt.Sprintf("%d pods: %s", len(pods), strings.Join(pods, ", "))
	}
	return fmt.Sprintf("%d pods: %s and %d more", len(pods), strings.Join(pods[:show], ", "), len(pods)-show)
}

// parseSkip reads a Go duration, or days with a d suffix (30d, 1d12h), and checks the
// bounds the emulator takes before asking it.
func parseSkip(v string) (time.Duration, error) {
	bad := fmt.Errorf("duration %q: want a Go duration or days (e.g. 5m, 2h, 30d)", v)
	var days time.Duration
	rest := v
	if n, after, ok := strings.Cut(v, "d"); ok {
		k, err := strconv.Atoi(n)
		if err != nil || k > int(fakeec2.MaxSkip/(24*time.Hour))+1 {
			return 0, bad
		}
		days, rest = time.Duration(k)*24*time.Hour, after
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, bad
		}
	}
	d += days
	return d, fakeec2.CheckSkip(d)
}

func printSkip(w io.Writer, d time.Duration, sk fakeec2.TimeSkip) error {
	fmt.Fprintf(w, "skipped %s: %s -> %s (the account now runs %s ahead of the wall clock)\n",
		d, labStamp(sk.From), labStamp(sk.To), sk.Offset)
	fmt.Fprintf(w, "cost accrued in the span: %.4f USD\n", sk.CostUSD)
	pools := make([]string, 0, len(sk.CostByNodePool))
	for p := range sk.CostByNodePool {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(pools) > 0 {
		fmt.Fprintln(tw, "  NODEPOOL\tUSD")
	}
	for _, p := range pools {
		name := p
		if name == "" {
			name = "(no karpenter.sh/nodepool tag)"
		}
		fmt.Fprintf(tw, "  %s\t%.4f\n", name, sk.CostByNodePool[p])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(sk.Alerts) == 0 {
		fmt.Fprintln(w, "no budget alert fired in the span")
		return nil
	}
	fmt.Fprintln(w, "budget alerts fired in the span:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  BUDGET\tTYPE\tTHRESHOLD\tACTUAL USD\tAT")
	for _, a := range sk.Alerts {
		fmt.Fprintf(tw, "  %s\t%s\t> %s (%s USD)\t%.4f\t%s\n", a.Budget, a.NotificationType,
			thresholdText(a.Threshold, a.ThresholdType), usd(a.ThresholdUSD), a.ActualUSD, labStamp(a.Time))
	}
	return tw.Flush()
}

// labStamp prints a time in UTC: budget periods are UTC days and months.
func labStamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
