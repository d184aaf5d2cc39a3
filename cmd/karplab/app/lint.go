package app

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/labs/lint"
)

func lintCommand() *cli.Command {
	return &cli.Command{
		Name:  "lint",
		Usage: "check manifests against the course's checklist",
		Subcommands: []*cli.Command{{
			Name:  "nodepools",
			Usage: "find unbounded, wide-open and overlapping NodePools: exit 0 clean, 1 findings, 2 error",
			Description: `Checks the course's item "NodePools are mutually understandable, bounded, and do not overlap
accidentally", on the lab's NodePools or on files (-f, repeatable; multi-document YAML, other
kinds are skipped with a note; - reads stdin):
   unbounded   no spec.limits, or limits without cpu or memory
   wide-open   architecture, capacity type, instance category/family, generation or zones not constrained
   ambiguous   two pools of equal weight admit the same pods: Karpenter picks by name order
   shadowed    (warning) a higher-weight pool takes pods a lower one also admits
Examples:
   karplab lint nodepools
   karplab lint nodepools -f happy-path/nodepool.yaml -f gpu-team.yaml --json`,
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "filename", Aliases: []string{"f"}, Usage: "lint NodePools in `FILE` instead of the lab's (repeatable)"},
				&cli.StringFlag{Name: "kubeconfig", Usage: "the cluster to read NodePools from (default: the lab's)"},
				&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			},
			Action: runLintNodePools,
		}},
	}
}

func runLintNodePools(c *cli.Context) error {
	if c.Args().Present() {
		return &exitError{code: ExitError, err: fmt.Errorf("unexpected argument %q: name files with -f FILE (see --help)", c.Args().First())}
	}
	pools, notes, err := readPools(c)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	report := lint.Lint(pools)
	report.Notes = notes
	if len(pools) == 0 {
		report.Notes = append(report.Notes, "no NodePools to lint")
	}
	if c.Bool("json") {
		err = report.WriteJSON(c.App.Writer)
	} else {
		for _, n := range report.Notes {
			fmt.Fprintln(c.App.ErrWriter, "note:", n)
		}
		err = report.WriteText(c.App.Writer)
	}
	if err != nil {
		return err
	}
	if report.Failed() {
		return failed()
	}
	return nil
}

// readPools reads -f files (and - for stdin), or lists the cluster's NodePools.
func readPools(c *cli.Context) ([]lint.Pool, []string, error) {
	if files := c.StringSlice("filename"); len(files) > 0 {
		var stdin []lint.Pool
		var notes []string
		paths := files[:0:0]
		for _, f := range files {
			if f != "-" {
				paths = append(paths, f)
				continue
			}
			data, err := io.ReadAll(c.App.Reader)
			if err != nil {
				return nil, nil, fmt.Errorf("reading NodePools from stdin: %w", err)
			}
			p, n, err := lint.Parse("stdin", data)
			if err != nil {
				return nil, nil, err
			}
			stdin, notes = append(stdin, p...), append(notes, n...)
		}
		pools, fileNotes, err := lint.ReadFiles(paths)
		return append(pools, stdin...), append(fileNotes, notes...), err
	}
	kubeconfig := c.String("kubeconfig")
	if kubeconfig == "" {
		home, err := cluster.DefaultHome()
		if err != nil {
			return nil, nil, err
		}
		kubeconfig = home.Kubeconfig()
		if _, err := os.Stat(kubeconfig); err != nil {
			return nil, nil, fmt.Errorf("no lab kubeconfig at %s: start the lab (karplab start), or lint files with -f FILE", kubeconfig)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	pools, err := lint.List(c.Context, client)
	if err != nil {
		return nil, nil, fmt.Errorf("reading NodePools from %s (is the lab running? karplab status): %w", kubeconfig, err)
	}
	return pools, nil, nil
}
