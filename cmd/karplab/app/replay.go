package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/labs/replay"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "bring a captured cluster (karplab capture) into a fresh lab and show what Karpenter does with it",
		ArgsUsage: "BUNDLE",
		Description: `Starts a fresh lab from a bundle (a directory, or a .tar.gz of one, that karplab capture or
kubectl get ... -o yaml wrote) and lets the real Karpenter v1.15.0 make its decisions offline:

1. Validates the bundle first, all of it: anything the lab cannot represent (a kind it does
   not replay, Karpenter v1beta1 objects, a region it has no data for, zones, instance types,
   images, subnets or security groups it cannot find, an instance its account would not
   take) is listed at once, and nothing starts (exit 2). A report's pasted manifests say no
   region or cluster name: give them with --region R [--zones a,b,c] [--cluster-name N]
   (Karpenter's AWS_REGION and CLUSTER_NAME in karpenter.yaml are read when present).
2. Starts the lab in the bundle's region and zones under its EKS cluster's name, with the
   scheduler, the controller manager, the kubelets and Karpenter stopped.
3. Imports the account (subnets, security groups, images and running instances with their
   real IDs, types, zones, launch times and tags), then creates the objects with their
   status: NodeClaims Launched, Registered and Initialized; Nodes with their labels, taints
   and finalizer; bound pods where they ran, pending pods pending; PDBs; workloads re-linked
   to their pods. CronJobs are suspended; HPAs are left out. The drift hashes are migrated,
   so the lab's CA does not drift every node. Karpenter's settings (FEATURE_GATES, batch
   windows, VM_MEMORY_OVERHEAD_PERCENT, ...) are carried over.
4. Starts the kubelets, the controller manager, the scheduler and Karpenter, in that order,
   watches for --watch, and reports what Karpenter launched, removed and said, which pods
   stay pending and why, and where the lab placed a pod production left pending.

Then change a NodePool, karplab time skip, and karplab replay --report again: what would
Karpenter have done instead? A failed replay leaves no half-loaded lab: it is stopped and
its data removed. The lab's home must hold no other lab (use another KARPLAB_HOME).

Examples:
   KARPLAB_HOME=~/.karplab-incident karplab replay incident-2026-12-06.tar.gz
   karplab replay --region us-east-1 --cluster-name prod ./issue-manifests/
   karplab time skip 10m && karplab replay --report`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cluster-name", Usage: "the EKS cluster's name, when the bundle does not say it (no karpenter.yaml, no aws/instances.json)"},
			&cli.StringFlag{Name: "region", Usage: "the AWS region, when the bundle does not say it (no node's topology.kubernetes.io/region label, no AWS_REGION in karpenter.yaml)"},
			&cli.StringSliceFlag{Name: "zones", Usage: "the account's zones, a subset of the region's (names or letters: a,b,c; default every zone)"},
			&cli.DurationFlag{Name: "watch", Value: time.Minute, Usage: "how long to watch Karpenter after the release before the report"},
			&cli.BoolFlag{Name: "report", Usage: "report on the running replayed lab again (after a time skip or a change), start nothing"},
			&cli.DurationFlag{Name: "timeout", Value: cluster.DefaultStartTimeout, Usage: "how long to wait for the lab to be ready"},
			&cli.StringFlag{Name: "ec2-addr", Value: cluster.DefaultEC2Addr, Usage: "listen address of the lab's EC2 API emulator; when the default is taken (another lab, LocalStack), a free port on 127.0.0.1, which karplab env exports"},
		},
		Action: runReplay,
	}
}

func runReplay(c *cli.Context) error {
	home, err := cluster.DefaultHome()
	if err != nil {
		return err
	}
	if c.Bool("report") {
		return replayReport(c, home)
	}
	if c.NArg() != 1 {
		return &exitError{code: ExitError, err: errors.New("name the bundle: karplab replay BUNDLE (see --help)")}
	}
	if err := freshHome(home); err != nil {
		return &exitError{code: ExitError, err: err}
	}
	opts, err := openBundle(c, home)
	if err != nil {
		return err
	}
	st, err := cluster.Start(c.Context, home, *opts, c.App.ErrWriter)
	if err != nil {
		// A half-loaded lab is no use to anyone: what this replay made goes.
		return errors.Join(err, removeLabData(home))
	}
	printReady(c, home, st)
	fmt.Fprintf(c.App.ErrWriter, "\nWatching Karpenter for %s...\n", c.Duration("watch"))
	select {
	case <-time.After(c.Duration("watch")):
	case <-c.Context.Done():
		return c.Context.Err()
	}
	return replayReport(c, home)
}

// openBundle reads and validates the bundle (a .tar.gz is unpacked into the home) and
// chooses the lab's account from it; a bundle the lab cannot represent is refused with the
// list, exit 2, nothing started.
func openBundle(c *cli.Context, home cluster.Home) (*cluster.StartOptions, error) {
	src, err := filepath.Abs(c.Args().First())
	if err != nil {
		return nil, err
	}
	unpacked := filepath.Join(string(home), "replay-bundle")
	if st, err := os.Stat(src); err == nil && !st.IsDir() {
		if err := home.Ensure(); err != nil {
			return nil, err
		}
	}
	opened, err := validBundle(c, src, unpacked)
	if err != nil {
		os.RemoveAll(unpacked) // a refused bundle leaves nothing behind
		return nil, err
	}
	return opened, nil
}

// validBundle opens and validates the bundle, and chooses the lab's account from it.
func validBundle(c *cli.Context, src, unpacked string) (*cluster.StartOptions, error) {
	b, err := replay.Open(src, unpacked, replay.DefaultLimits)
	if err != nil {
		return nil, &exitError{code: ExitError, err: fmt.Errorf("the bundle: %w", err)}
	}
	given := replay.Given{Region: c.String("region"), Zones: c.StringSlice("zones"), ClusterName: c.String("cluster-name")}
	rep, name, _ := replay.Check(b, replay.LabCatalog{}, given)
	for _, n := range rep.Notes {
		fmt.Fprintf(c.App.ErrWriter, "note: %s\n", n)
	}
	if len(rep.Gaps) > 0 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "the lab cannot replay this bundle; nothing started (%d problems):", len(rep.Gaps))
		for _, g := range rep.Gaps {
			sb.WriteString("\n  - " + g)
		}
		return nil, &exitError{code: ExitError, err: errors.New(sb.String())}
	}
	captured := b.CapturedAt.Local().Format(time.RFC3339)
	if b.CapturedAtInferred {
		captured += ", the latest time its objects carry: it has no captured-at"
	}
	fmt.Fprintf(c.App.ErrWriter, "Replaying %s (captured %s): %d objects, region %s, cluster %s\n", src,
		captured, len(b.Objects), rep.Region, name)
	return &cluster.StartOptions{
		Region: rep.Region, Zones: given.Zones, ClusterName: name, Replay: b.Dir,
		Verbosity: c.Int("verbosity"), Timeout: c.Duration("timeout"), EC2Addr: namedEC2Addr(c),
	}, nil
}

// freshHome refuses a home that holds a lab already: a replay starts from nothing.
func freshHome(h cluster.Home) error {
	for _, p := range []string{h.ControlPlaneDir(), h.EC2Dir(), h.AccountFile()} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%s holds a lab already (%s): a replay starts a fresh one; set KARPLAB_HOME to a new directory", h, filepath.Base(p))
		}
	}
	return nil
}

// removeLabData takes away what a failed replay made in its (fresh) home.
func removeLabData(h cluster.Home) error {
	var errs []error
	for _, p := range []string{h.ControlPlaneDir(), h.EC2Dir(), h.AccountFile(), h.History(), h.ReplayRecordFile(), h.Kubeconfig(), h.EnvFile(), h.BaselineFile(), h.InstallRecord()} {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// replayReport explains the running replayed lab.
func replayReport(c *cli.Context, home cluster.Home) error {
	rec, err := home.ReadReplayRecord()
	if errors.Is(err, os.ErrNotExist) {
		return &exitError{code: ExitError, err: fmt.Errorf("the lab in %s is no replay: karplab replay BUNDLE starts one", home)}
	}
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", home.Kubeconfig())
	if err != nil {
		return err
	}
	ex, err := replay.Explain(c.Context, cfg, replay.Replayed{Since: rec.ReleasedAt, NodeClaims: rec.NodeClaims, Nodes: rec.Nodes, Pending: rec.Pending})
	if err != nil {
		return err
	}
	w := c.App.Writer
	fmt.Fprintf(w, "Replayed from %s, captured %s: %d instances; %s; load %s.\n", rec.Bundle, rec.CapturedAt.Local().Format(time.RFC3339),
		rec.Instances, rec.CreatedLine(), rec.LoadTook.Round(time.Millisecond))
	for _, l := range rec.LeftOut {
		fmt.Fprintf(w, "  left out: %s\n", l)
	}
	if len(rec.Settings) > 0 {
		fmt.Fprintf(w, "  Karpenter's settings carried over: %s\n", strings.Join(rec.Settings, " "))
	}
	fmt.Fprintf(w, "  %d pods were pending in production.\n", len(rec.Pending))
	ex.Write(w)
	return nil
}
