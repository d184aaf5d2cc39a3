package app

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// The emulator's admin commands: what a platform engineer reproducing an incident injects
// (faults, policy) and reads (audit trail, billing). They reach the running lab's emulator,
// or --endpoint for a standalone `karplab ec2 serve`.

func endpointFlag() cli.Flag {
	return &cli.StringFlag{Name: "endpoint", Usage: "the emulator's URL (default: the running lab's, else $AWS_ENDPOINT_URL)"}
}

func adminClient(c *cli.Context) (*fakeec2.AdminClient, error) {
	endpoint := c.String("endpoint")
	if endpoint == "" {
		if home, err := cluster.DefaultHome(); err == nil {
			if st, err := home.ReadState(); err == nil && st.EC2Endpoint != "" {
				endpoint = st.EC2Endpoint
			}
		}
	}
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL")
	}
	if endpoint == "" {
		return nil, &exitError{code: ExitError, err: fmt.Errorf("no EC2 emulator: start the lab (karplab start) or pass --endpoint http://127.0.0.1:4566")}
	}
	return fakeec2.NewAdminClient(endpoint), nil
}

func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func ec2AdminCommands() []*cli.Command {
	return []*cli.Command{ec2AuditCommand(), ec2BillingCommand(), ec2FaultCommand(), ec2EventCommand(), ec2PolicyCommand(), ec2DecodeCommand(),
		ec2BudgetCommand()}
}

func ec2AuditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "the emulator's audit trail (CloudTrail-like): every call to every service, who made it, what it created or why it failed",
		Flags: []cli.Flag{
			endpointFlag(),
			&cli.StringFlag{Name: "service", Usage: "only this service: ec2, iam, ssm, sqs, eks, pricing, sts or budgets"},
			&cli.StringFlag{Name: "action", Usage: "only this action (e.g. CreateFleet, GetInstanceProfile, ReceiveMessage)"},
			&cli.StringFlag{Name: "caller", Usage: "only this access key ID (learner AKIAKARPLABLEARNER01, Karpenter AKIAKARPENTERCONTROL)"},
			&cli.StringFlag{Name: "resource", Usage: "only calls that created, terminated or named this resource ID"},
			&cli.StringFlag{Name: "error", Usage: "only calls that failed with this error code (e.g. UnauthorizedOperation)"},
			&cli.DurationFlag{Name: "since", Usage: "only calls in the last `DURATION` (e.g. 10m)"},
			&cli.BoolFlag{Name: "mutating", Usage: "leave out Describe* calls"},
			&cli.IntFlag{Name: "limit", Value: 200, Usage: "show at most the last N calls (0: all)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			admin, err := adminClient(c)
			if err != nil {
				return err
			}
			q := trail.AuditQuery{Service: c.String("service"), Action: c.String("action"), Caller: c.String("caller"), ResourceID: c.String("resource"),
				ErrorCode: c.String("error"), MutatingOnly: c.Bool("mutating"), Limit: c.Int("limit")}
			if d := c.Duration("since"); d > 0 {
				q.Since = time.Now().Add(-d)
			}
			events, err := admin.Audit(c.Context, q)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, events)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tSERVICE\tACTION\tCALLER\tREQUEST ID\tRESULT")
			for _, e := range events {
				result := "ok"
				switch {
				case e.Service == "budgets" && e.Action == budgets.ActionAlert:
					result = budgetAlertResult(e)
				case e.ErrorCode != "" && e.DenialReason != "":
					result = e.ErrorCode + ": " + e.DenialReason
				case e.ErrorCode != "":
					result = e.ErrorCode + ": " + e.ErrorMessage
				case len(e.Created) > 0:
					result = "created " + strings.Join(e.Created, " ")
				case len(e.Terminated) > 0:
					result = "terminated " + strings.Join(e.Terminated, " ")
				}
				if len(e.PartialErrors) > 0 {
					result += " (errors: " + strings.Join(e.PartialErrors, "; ") + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("15:04:05.000"), e.ServiceName(), e.Action, e.Caller, e.RequestID, result)
			}
			return tw.Flush()
		},
	}
}

func ec2BillingCommand() *cli.Command {
	return &cli.Command{
		Name:  "billing",
		Usage: "the billing ledger: every instance, volume and snapshot, its price, running time and accrued cost",
		Flags: []cli.Flag{
			endpointFlag(),
			&cli.StringFlag{Name: "by-tag", Usage: "group the cost by this tag `KEY` (e.g. application, environment, owner)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			admin, err := adminClient(c)
			if err != nil {
				return err
			}
			if key := c.String("by-tag"); key != "" {
				r, err := admin.CostByTag(c.Context, key)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c, r)
				}
				tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
				fmt.Fprintf(tw, "%s\tUSD\tRESOURCES\n", strings.ToUpper(key))
				for _, g := range r.Groups {
					v := g.Value
					if v == "" {
						v = "(untagged)"
					}
					fmt.Fprintf(tw, "%s\t%.6f\t%d\n", v, g.USD, len(g.Resources))
				}
				fmt.Fprintf(tw, "total\t%.6f\t\n", r.TotalUSD)
				return tw.Flush()
			}
			b, err := admin.Billing(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, b)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RESOURCE\tKIND\tTYPE\tZONE\tUSD/H\tSTARTED\tSTOPPED\tUSD")
			for _, e := range b.Entries {
				stopped := "running"
				if e.Stopped != nil {
					stopped = e.Stopped.Local().Format("15:04:05")
				}
				kind := e.Type
				if e.CapacityType != "" {
					kind += " " + e.CapacityType
				}
				if e.SizeGiB > 0 {
					kind += fmt.Sprintf(" %dGiB", e.SizeGiB)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%s\t%s\t%.6f\n", e.ResourceID, e.ResourceType, kind, e.Zone, e.PricePerHour,
					e.Started.Local().Format("15:04:05"), stopped, e.AccruedUSD)
			}
			fmt.Fprintf(tw, "total\t\t\t\t\t\t\t%.6f\n", b.TotalUSD)
			return tw.Flush()
		},
	}
}

func ec2FaultCommand() *cli.Command {
	return &cli.Command{
		Name:  "fault",
		Usage: "inject failures into the emulator: insufficient capacity, leaked terminations, latency, throttling",
		Subcommands: []*cli.Command{
			{
				Name:  "add",
				Usage: "add a fault",
				Description: `Examples:
   karplab ec2 fault add --kind insufficient-capacity --type m6i.large --zone eu-west-2a
   karplab ec2 fault add --kind insufficient-capacity --zone eu-west-2b --capacity-type spot
   karplab ec2 fault add --kind leak --instance i-0123456789abcdef0   (terminate "works", instance keeps running)
   karplab ec2 fault add --kind latency --action CreateFleet --latency 3s
   karplab ec2 fault add --kind throttle --action DescribeInstances --rate 0.5`,
				Flags: []cli.Flag{
					endpointFlag(),
					&cli.StringFlag{Name: "kind", Required: true, Usage: "insufficient-capacity, leak, latency or throttle"},
					&cli.StringFlag{Name: "type", Usage: "instance type (insufficient-capacity)"},
					&cli.StringFlag{Name: "zone", Usage: "availability zone (insufficient-capacity)"},
					&cli.StringFlag{Name: "capacity-type", Usage: "spot or on-demand (insufficient-capacity)"},
					&cli.StringSliceFlag{Name: "instance", Usage: "instance IDs (leak; none: every instance)"},
					&cli.StringFlag{Name: "action", Usage: "EC2 action (latency, throttle; none: every action)"},
					&cli.DurationFlag{Name: "latency", Usage: "added delay (latency)"},
					&cli.Float64Flag{Name: "rate", Usage: "share of calls throttled, 0..1 (throttle)"},
					&cli.IntFlag{Name: "times", Usage: "fire only this many times (0: until cleared)"},
				},
				Action: func(c *cli.Context) error {
					admin, err := adminClient(c)
					if err != nil {
						return err
					}
					f, err := admin.SetFault(c.Context, fakeec2.Fault{
						Kind: c.String("kind"), InstanceType: c.String("type"), Zone: c.String("zone"),
						CapacityType: c.String("capacity-type"), InstanceIDs: c.StringSlice("instance"), Action: c.String("action"),
						LatencyMS: int(c.Duration("latency").Milliseconds()), Rate: c.Float64("rate"), Remaining: c.Int("times"),
					})
					if err != nil {
						return &exitError{code: ExitError, err: err}
					}
					fmt.Fprintf(c.App.ErrWriter, "fault %s added (karplab ec2 fault clear %s removes it)\n", f.ID, f.ID)
					return nil
				},
			},
			{
				Name:  "list",
				Usage: "list the faults in force",
				Flags: []cli.Flag{endpointFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
				Action: func(c *cli.Context) error {
					admin, err := adminClient(c)
					if err != nil {
						return err
					}
					faults, err := admin.Faults(c.Context)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c, faults)
					}
					tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tKIND\tTARGET\tREMAINING")
					for _, f := range faults {
						var target []string
						for k, v := range map[string]string{"type": f.InstanceType, "zone": f.Zone, "capacity": f.CapacityType, "action": f.Action, "instances": strings.Join(f.InstanceIDs, ",")} {
							if v != "" {
								target = append(target, k+"="+v)
							}
						}
						sort.Strings(target)
						if f.LatencyMS > 0 {
							target = append(target, fmt.Sprintf("latency=%dms", f.LatencyMS))
						}
						if f.Rate > 0 {
							target = append(target, fmt.Sprintf("rate=%g", f.Rate))
						}
						remaining := "until cleared"
						if f.Remaining > 0 {
							remaining = fmt.Sprint(f.Remaining)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.ID, f.Kind, strings.Join(target, " "), remaining)
					}
					return tw.Flush()
				},
			},
			{
				Name:      "clear",
				Usage:     "remove one fault by ID, or all of them",
				ArgsUsage: "[ID]",
				Flags:     []cli.Flag{endpointFlag()},
				Action: func(c *cli.Context) error {
					admin, err := adminClient(c)
					if err != nil {
						return err
					}
					return admin.ClearFaults(c.Context, c.Args().First())
				},
			},
		},
	}
}

func ec2PolicyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "the IAM-like policy the emulator enforces on each caller",
		Subcommands: []*cli.Command{
			{
				Name:  "get",
				Usage: "print the policy in force (YAML)",
				Flags: []cli.Flag{endpointFlag()},
				Action: func(c *cli.Context) error {
					admin, err := adminClient(c)
					if err != nil {
						return err
					}
					p, err := admin.Policy(c.Context)
					if err != nil {
						return err
					}
					b, err := yaml.Marshal(p)
					if err != nil {
						return err
					}
					_, err = c.App.Writer.Write(b)
					return err
				},
			},
			{
				Name:      "set",
				Usage:     "replace the policy with FILE (YAML or JSON; - for stdin)",
				ArgsUsage: "FILE",
				Description: `Example:
   statements:
     - sid: karpenter-least-privilege
       callers: [AKIAKARPENTERCONTROL]
       allowedInstanceFamilies: [c6i, c7i, m6i, m7i, r6i, r7i, c6g, c7g, m6g, m7g, r6g, r7g]
       allowedZones: [eu-west-2a, eu-west-2b, eu-west-2c]
       requiredTags: [application, environment, owner]
       requireEncryptedVolumes: true
       requireImdsv2: true`,
				Flags: []cli.Flag{endpointFlag()},
				Action: func(c *cli.Context) error {
					path := c.Args().First()
					if path == "" {
						return &exitError{code: ExitError, err: fmt.Errorf("name the policy FILE (or - for stdin)")}
					}
					var data []byte
					var err error
					if path == "-" {
						data, err = readAll(c.App.Reader)
					} else {
						data, err = os.ReadFile(path)
					}
					if err != nil {
						return &exitError{code: ExitError, err: err}
					}
					var p authz.Policy
					if err := yaml.UnmarshalStrict(data, &p); err != nil {
						return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", path, err)}
					}
					admin, err := adminClient(c)
					if err != nil {
						return err
					}
					if err := admin.SetPolicy(c.Context, p); err != nil {
						return &exitError{code: ExitError, err: err}
					}
					fmt.Fprintf(c.App.ErrWriter, "policy set: %d statements\n", len(p.Statements))
					return nil
				},
			},
		},
	}
}

func ec2DecodeCommand() *cli.Command {
	return &cli.Command{
		Name:      "decode",
		Usage:     "decode an UnauthorizedOperation's encoded message (like aws sts decode-authorization-message)",
		ArgsUsage: "ENCODED-MESSAGE",
		Flags:     []cli.Flag{endpointFlag()},
		Action: func(c *cli.Context) error {
			msg := c.Args().First()
			if msg == "" {
				return &exitError{code: ExitError, err: fmt.Errorf("pass the encoded message from the error")}
			}
			admin, err := adminClient(c)
			if err != nil {
				return err
			}
			reason, err := admin.DecodeAuthorizationMessage(c.Context, msg)
			if err != nil {
				return &exitError{code: ExitError, err: err}
			}
			fmt.Fprintln(c.App.Writer, reason)
			return nil
		},
	}
}
