package app

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/fakeec2"
)

// ec2EventCommand makes EC2 raise the events it sends Karpenter's interruption queue on AWS.
func ec2EventCommand() *cli.Command {
	raise := func(kind fakeec2.EventKind, usage string) *cli.Command {
		return &cli.Command{
			Name: string(kind), Usage: usage, ArgsUsage: "INSTANCE_ID...",
			Flags: []cli.Flag{endpointFlag()},
			Action: func(c *cli.Context) error {
				if c.NArg() == 0 {
					return &exitError{code: ExitError, err: fmt.Errorf("%s: name at least one instance ID (aws ec2 describe-instances lists them)", kind)}
				}
				admin, err := adminClient(c)
				if err != nil {
					return err
				}
				if _, err := admin.RaiseEvent(c.Context, kind, c.Args().Slice()...); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "%s sent for %v to the interruption queue\n", kind, c.Args().Slice())
				return nil
			},
		}
	}
	return &cli.Command{
		Name:  "event",
		Usage: "make EC2 send an event to Karpenter's interruption queue (SQS), as EventBridge delivers it on AWS",
		Description: `Each event reaches the queue as the EventBridge JSON AWS sends; Karpenter reads the queue
(INTERRUPTION_QUEUE) and acts: it cordons and drains the node and replaces it.

   spot-interruption  the two-minute warning, then EC2 reclaims the spot instance
   spot-warning       the warning alone (the instance is not reclaimed)
   rebalance          EC2 Instance Rebalance Recommendation (elevated interruption risk)
   scheduled-change   AWS Health: the instance is scheduled for retirement

Stopping or terminating an instance (aws ec2 stop-instances / terminate-instances) sends
its state changes too. Read the queue with
   aws sqs receive-message --queue-url "$(aws sqs get-queue-url --queue-name karplab --query QueueUrl --output text)"`,
		Subcommands: []*cli.Command{
			{
				Name: "spot-interruption", Usage: "warn, then reclaim spot instances", ArgsUsage: "INSTANCE_ID...",
				Flags: []cli.Flag{endpointFlag(), &cli.DurationFlag{Name: "warning", Value: fakeec2.DefaultSpotWarning,
					Usage: "how long after the warning EC2 reclaims the instances (AWS: 2m; 0: at once)"}},
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return &exitError{code: ExitError, err: fmt.Errorf("spot-interruption: name at least one spot instance ID")}
					}
					admin, err := adminClient(c)
					if err != nil {
						return err
					}
					if _, err := admin.InterruptSpot(c.Context, c.Duration("warning"), c.Args().Slice()...); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "interruption warning sent for %v; EC2 reclaims them at %s\n",
						c.Args().Slice(), time.Now().Add(c.Duration("warning")).Format("15:04:05"))
					return nil
				},
			},
			raise(fakeec2.EventSpotWarning, "send the spot interruption warning alone"),
			raise(fakeec2.EventRebalance, "send a rebalance recommendation"),
			raise(fakeec2.EventScheduledChange, "send an AWS Health scheduled retirement"),
		},
	}
}
