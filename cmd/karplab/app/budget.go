package app

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// ec2BudgetCommand sets, lists and deletes the account's AWS Budgets: the cost alerts of
// the runaway-demand lab.
func ec2BudgetCommand() *cli.Command {
	return &cli.Command{
		Name:  "budget",
		Usage: "cost alerts (AWS Budgets): alert when the account's spend, or its forecast, crosses a share of a daily or monthly limit",
		Description: `A budget watches what the lab's account spends (the billing ledger: instances, volumes,
snapshots) in the current day or month, UTC, on the emulator's clock, and alerts when
   --alert 80%      ACTUAL: the spend so far passes 80% of the limit
   --forecast 100%  FORECASTED: the spend so far plus the current burn rate until the
                    period ends passes the limit. This is the early warning: a runaway
                    autoscaler trips it minutes after its launches, while most of the
                    money is still there; the ACTUAL alert comes once it is spent.
An alert fires once per period, the moment its value crosses (the lab evaluates on every
launch, stop or termination and every 2 s; AWS refreshes a few times a day). Each firing
is kept with the budget (karplab ec2 budget list) and in the audit trail
(karplab ec2 audit --service budgets). A budget caps nothing: a NodePool's spec.limits is
what stops Karpenter launching; the budget tells you it is time to look.

It is the AWS Budgets API, which the aws CLI reaches too:
   aws budgets describe-budgets --account-id ` + fakeec2.DefaultAccountID + `
   aws budgets describe-notifications-for-budget --account-id ` + fakeec2.DefaultAccountID + ` --budget-name NAME`,
		Subcommands: []*cli.Command{budgetSetCommand(), budgetListCommand(), budgetDeleteCommand()},
	}
}

func budgetSetCommand() *cli.Command {
	return &cli.Command{
		Name:      "set",
		Usage:     "create a budget, or replace its limit, period, filter and alerts",
		ArgsUsage: "NAME",
		Description: `Examples:
   karplab ec2 budget set ziba-general --limit 5.00 --alert 80% --forecast 100% --tag karpenter.sh/nodepool=ziba-general
   karplab ec2 budget set account --limit 100 --period monthly --alert 50% --alert 90%

An alert is a share of the limit (80%) or an amount in USD (4.00). --tag counts only the
resources with that tag (repeat it: any of them); it is AWS's cost filter
TagKeyValue "user:KEY$VALUE". Alerts that stay keep their state; a new limit, period or
filter puts them back to OK.`,
		Flags: []cli.Flag{
			endpointFlag(),
			&cli.Float64Flag{Name: "limit", Required: true, Usage: "the budget in `USD` for the period"},
			&cli.StringFlag{Name: "period", Value: "daily", Usage: "daily or monthly (UTC, on the emulator's clock)"},
			&cli.StringSliceFlag{Name: "alert", Usage: "ACTUAL alert: when spend passes `THRESHOLD` (80% of the limit, or 4.00 USD)"},
			&cli.StringSliceFlag{Name: "forecast", Usage: "FORECASTED alert: when the forecast passes `THRESHOLD` (100%, or 5.00 USD)"},
			&cli.StringSliceFlag{Name: "tag", Usage: "count only resources tagged `KEY=VALUE` (karpenter.sh/nodepool=ziba-general)"},
			&cli.StringSliceFlag{Name: "email", Usage: "subscriber `ADDRESS` AWS would email (the lab records, sends nothing)"},
		},
		Action: func(c *cli.Context) error {
			sp, err := budgetSpec(c)
			if err != nil {
				return &exitError{code: ExitError, err: err}
			}
			admin, err := adminClient(c)
			if err != nil {
				return err
			}
			b, err := admin.SetBudget(c.Context, sp)
			if err != nil {
				return &exitError{code: ExitError, err: err}
			}
			fmt.Fprintf(c.App.ErrWriter, "budget %s set: %s USD %s, %d alerts (karplab ec2 budget list shows them)\n",
				b.Name, usd(b.LimitUSD), strings.ToLower(b.TimeUnit), len(b.Notifications))
			return nil
		},
	}
}

// budgetSpec reads set's arguments.
func budgetSpec(c *cli.Context) (budgets.Spec, error) {
	if c.NArg() != 1 {
		return budgets.Spec{}, fmt.Errorf("budget set: name one budget (karplab ec2 budget set NAME --limit 5.00)")
	}
	sp := budgets.Spec{Name: c.Args().First(), LimitUSD: c.Float64("limit"), TimeUnit: strings.ToUpper(c.String("period"))}
	if sp.TimeUnit != budgets.Daily && sp.TimeUnit != budgets.Monthly {
		return sp, fmt.Errorf("--period %q: want daily or monthly", c.String("period"))
	}
	var subs []budgets.Subscriber
	for _, a := range c.StringSlice("email") {
		subs = append(subs, budgets.Subscriber{SubscriptionType: budgets.Email, Address: a})
	}
	for _, kind := range []struct{ flag, typ string }{{"alert", budgets.Actual}, {"forecast", budgets.Forecasted}} {
		for _, v := range c.StringSlice(kind.flag) {
			n, err := threshold(v)
			if err != nil {
				return sp, fmt.Errorf("--%s %q: %w", kind.flag, v, err)
			}
			n.Type, n.Subscribers = kind.typ, subs
			sp.Notifications = append(sp.Notifications, n)
		}
	}
	for _, kv := range c.StringSlice("tag") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return sp, fmt.Errorf("--tag %q: want KEY=VALUE", kv)
		}
		if sp.CostFilters == nil {
			sp.CostFilters = map[string][]string{}
		}
		sp.CostFilters[budgets.FilterTagKeyValue] = append(sp.CostFilters[budgets.FilterTagKeyValue], "user:"+k+"$"+v)
	}
	return sp, nil
}

// threshold reads "80%" (a share of the limit) or "4.00" / "$4.00" (USD).
func threshold(v string) (budgets.NotificationSpec, error) {
	n := budgets.NotificationSpec{ComparisonOperator: budgets.GreaterThan, ThresholdType: budgets.AbsoluteValue}
	num := strings.TrimPrefix(strings.TrimSpace(v), "$")
	if p, ok := strings.CutSuffix(num, "%"); ok {
		n.ThresholdType, num = budgets.Percentage, p
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return n, fmt.Errorf("want a share of the limit (80%%) or an amount in USD (4.00)")
	}
	n.Threshold = f
	return n, nil
}

func budgetListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "each budget's limit, spend so far and forecast in the current period, and every alert it fired",
		Flags: []cli.Flag{endpointFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON (times and spend of every alert)"}},
		Action: func(c *cli.Context) error {
			admin, err := adminClient(c)
			if err != nil {
				return err
			}
			list, err := admin.Budgets(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, list)
			}
			return printBudgets(c.App.Writer, list)
		},
	}
}

func printBudgets(w io.Writer, list []budgets.Budget) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPERIOD\tLIMIT\tACTUAL\tFORECAST\tUSD/H\tALERTS")
	for _, b := range list {
		var notes []string
		for _, n := range b.Notifications {
			notes = append(notes, fmt.Sprintf("%s>%s %s", n.Type, thresholdText(n.Threshold, n.ThresholdType), n.State))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%s\n", b.Name, strings.ToLower(b.TimeUnit), usd(b.LimitUSD),
			b.ActualUSD, b.ForecastUSD, b.USDPerHour, strings.Join(notes, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range list {
		for _, a := range b.Alerts {
			fmt.Fprintf(w, "%s  %s fired: %s > %s (%s USD): actual %.4f, forecast %.4f USD, %.4f USD/h\n",
				a.Time.Local().Format("2006-01-02 15:04:05"), b.Name, a.NotificationType, thresholdText(a.Threshold, a.ThresholdType),
				usd(a.ThresholdUSD), a.ActualUSD, a.ForecastUSD, a.USDPerHour)
		}
	}
	return nil
}

func thresholdText(t float64, typ string) string {
	if typ == budgets.Percentage {
		return strconv.FormatFloat(t, 'f', -1, 64) + "%"
	}
	return usd(t) + " USD"
}

func usd(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// budgetAlertResult words a BudgetAlert audit event for karplab ec2 audit.
func budgetAlertResult(e trail.AuditEvent) string {
	p := e.Parameters
	t, _ := strconv.ParseFloat(p["threshold"], 64)
	return fmt.Sprintf("%s %s > %s: actual %s, forecast %s USD", p["budgetName"], p["notificationType"],
		thresholdText(t, p["thresholdType"]), p["actualSpend"], p["forecastedSpend"])
}

func budgetDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete a budget with its alerts and their history",
		ArgsUsage: "NAME",
		Flags:     []cli.Flag{endpointFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitError{code: ExitError, err: fmt.Errorf("budget delete: name one budget (karplab ec2 budget list shows them)")}
			}
			admin, err := adminClient(c)
			if err != nil {
				return err
			}
			if err := admin.DeleteBudget(c.Context, c.Args().First()); err != nil {
				return &exitError{code: ExitError, err: err}
			}
			fmt.Fprintf(c.App.ErrWriter, "budget %s deleted\n", c.Args().First())
			return nil
		},
	}
}
