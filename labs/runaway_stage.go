package labs

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func stageRunaway(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	for _, f := range []string{"nodepool.yaml", "workload.yaml"} {
		if err := e.ApplyExercise(ctx, runawayLab, f, out); err != nil {
			return err
		}
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, runawayHonest, "Running"); err != nil {
		return err
	}
	if !opts.Solution {
		fmt.Fprintf(out, "\nFour render workers run on a NodePool with no limits and an account with no cost alert.\nYour task: karplab lab get %s; bound nodepool.yaml and apply it, set a budget (karplab ec2 budget set), then rehearse surge.yaml as README.md says, and karplab check %s\n", runawayLab, runawayLab)
		return nil
	}
	if err := e.ApplySolution(ctx, runawayLab, out); err != nil {
		return err
	}
	b, err := e.Admin.SetBudget(ctx, runawayBudget)
	if err != nil {
		return fmt.Errorf("setting the solution's budget: %w", err)
	}
	fmt.Fprintf(out, " budget %s: %s limit $%.2f, alert at %g%% of actual spend\n", b.Name, strings.ToLower(b.TimeUnit), b.LimitUSD, runawayBudget.Notifications[0].Threshold)
	if err := e.drillRunaway(ctx, out, opts.Wait); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe surge stopped at the limits, the alert fired, and the workers are back to four. Grade it: karplab check %s\n", runawayLab)
	return nil
}

// drillRunaway is the README's rehearsal: the surge, Karpenter settling against whatever
// bounds the pool, the account's clock skipped so the surge bills, then the honest demand
// restored.
func (e *Env) drillRunaway(ctx context.Context, out io.Writer, wait time.Duration) error {
	if err := e.ApplyExercise(ctx, runawayLab, "surge.yaml", out); err != nil {
		return err
	}
	if err := e.waitSurgeSettled(ctx, out, max(wait, 3*time.Minute)); err != nil {
		return err
	}
	if err := e.skipTime(ctx, out, runawaySkip); err != nil {
		return err
	}
	if err := e.ApplyExercise(ctx, runawayLab, "workload.yaml", out); err != nil {
		return err
	}
	err := e.Kube.CoreV1().Pods(zibaNamespace).Delete(ctx, giantPod, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting pod %s: %w", giantPod, err)
	}
	fmt.Fprintf(out, "pod/%s deleted\n", giantPod)
	if err := e.waitPods(ctx, out, max(wait, 3*time.Minute), zibaNamespace, renderSelector, runawayHonest, "Running"); err != nil {
		return err
	}
	return e.waitRecorded(ctx, out, wait, zibaNamespace, "app.kubernetes.io/name="+giantPod)
}

// waitSurgeSettled waits until Karpenter has done all it will for the surge: every
// surge pod exists, every NodeClaim is initialized, and their number has held for
// surgeQuiet. With limits some workers stay Pending; without, only the giant pod does.
func (e *Env) waitSurgeSettled(ctx context.Context, out io.Writer, timeout time.Duration) error {
	const surgeQuiet = 15 * time.Second
	lastCount, since := -1, time.Now()
	return poll(ctx, out, timeout, time.Second, "Karpenter to settle the surge", func(ctx context.Context) (bool, string, error) {
		counts, total, err := e.podPhases(ctx, zibaNamespace, renderSelector)
		if err != nil {
			return false, "", err
		}
		claims, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		initialized := 0
		for _, u := range claims.Items {
			if st, _ := condition(u, "Initialized"); st == "True" {
				initialized++
			}
		}
		n := len(claims.Items)
		if n != lastCount || initialized != n {
			lastCount, since = n, time.Now()
		}
		status := fmt.Sprintf("%d render workers: %s; %d NodeClaims, %d initialized", total, formatCounts(counts), n, initialized)
		quiet := time.Since(since) >= surgeQuiet
		return total >= runawaySurge && initialized == n && counts["Pending"] == 0 && quiet, status, nil
	})
}
