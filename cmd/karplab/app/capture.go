package app

import (
	"errors"
	"fmt"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/urfave/cli/v2"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/labs/replay"
)

func captureCommand() *cli.Command {
	return &cli.Command{
		Name:      "capture",
		Usage:     "write a read-only, redacted bundle of a real cluster for karplab replay",
		ArgsUsage: "DIR",
		Description: `Reads a cluster (get and list only: it changes nothing) and writes a bundle to DIR, a new
or empty directory, made of existing formats:
   cluster.yaml.gz   the Kubernetes objects in kwok's export format (kwokctl snapshot export):
                     Karpenter's NodePools, NodeClaims and EC2NodeClasses; Nodes, Pods, PDBs,
                     DaemonSets, Deployments, ReplicaSets, StatefulSets with their
                     ControllerRevisions, Jobs, CronJobs; CSINodes, PriorityClasses, namespaces.
                     Never Secrets or ConfigMaps.
   captured-at       when; every time in cluster.yaml.gz is an offset from it
   karpenter.yaml    Karpenter's Deployment, with its settings (FEATURE_GATES, batch windows, ...)
   aws/*.json        with --aws: the aws CLI's JSON of describe-instances (Karpenter's and the
                     nodes'), -subnets, -security-groups, -images, -instance-type-offerings,
                     -spot-price-history (24 hours) and eks describe-cluster (name, version,
                     network; not its endpoint or CA). Owner IDs and ARNs pseudonymised, key
                     pair names taken out; user data is never read.
Redacted at the source, the same way across the whole bundle: env values (names are kept),
command and args, the last-applied annotation, managedFields, EC2NodeClass user data, and
account IDs in ARNs (each becomes the same pseudonym everywhere).

The user needs get and list on those resources (a read-only ClusterRole). Without karplab,
the same bundle by hand:
   kubectl get namespaces,priorityclasses,csinodes,ec2nodeclasses,nodepools,nodeclaims,nodes,pdb,controllerrevisions,daemonsets,deployments,replicasets,statefulsets,jobs,cronjobs,pods -A -o yaml > DIR/cluster.yaml
   date -u +%FT%TZ > DIR/captured-at
(redact it yourself before it leaves your cluster).

Examples:
   karplab capture --context prod-use1 --aws incident-2026-12-06
   tar czf incident.tar.gz -C incident-2026-12-06 .`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kubeconfig", Usage: "the cluster's kubeconfig (default $KUBECONFIG or ~/.kube/config)"},
			&cli.StringFlag{Name: "context", Usage: "the kubeconfig context (default its current context)"},
			&cli.BoolFlag{Name: "aws", Usage: "also read the AWS account through the SDK's default credentials (AWS_PROFILE, AWS_REGION, ...): read-only Describe calls, under aws/"},
		},
		Action: runCapture,
	}
}

func runCapture(c *cli.Context) error {
	if c.NArg() != 1 {
		return &exitError{code: ExitError, err: errors.New("name the bundle's directory: karplab capture DIR (see --help)")}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k := c.String("kubeconfig"); k != "" {
		rules.ExplicitPath = k
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.String("context")}).ClientConfig()
	if err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("reading the kubeconfig: %w", err)}
	}
	dir := c.Args().First()
	opts := replay.CaptureOptions{Config: cfg, Dir: dir, Progress: c.App.ErrWriter}
	if c.Bool("aws") {
		awsCfg, err := awsconfig.LoadDefaultConfig(c.Context)
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("reading the AWS credentials: %w", err)}
		}
		if awsCfg.Region == "" {
			return &exitError{code: ExitError, err: errors.New("--aws needs a region: set AWS_REGION (or the profile's region)")}
		}
		opts.AWS = &awsCfg
	}
	fmt.Fprintf(c.App.ErrWriter, "Capturing %s into %s (read-only)\n", cfg.Host, dir)
	sum, err := replay.Capture(c.Context, opts, replay.NewRedactor())
	if err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("capture: %w", err)}
	}
	total := 0
	for _, n := range sum.Objects {
		total += n
	}
	fmt.Fprintf(c.App.Writer, "%s: %d objects, redacted\n", dir, total)
	if sum.Karpenter == "" {
		fmt.Fprintln(c.App.Writer, "no Karpenter Deployment found: a replay runs Karpenter with the lab's settings")
	} else {
		fmt.Fprintf(c.App.Writer, "Karpenter's settings from deployment %s\n", sum.Karpenter)
	}
	return nil
}
