package labs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2/accesskeys"

	"github.com/karplab/karplab/labs/evidence"
)

// The leak lab: after a normal provisioning, the Karpenter controller crashed between a
// launch and recording it on a NodeClaim. The instance runs and bills, no NodeClaim owns it,
// and it never joined the cluster, so only EC2 shows it. The learner finds it with the
// seed's commands and terminates it (or watches Karpenter's garbage collection do so).
const (
	leakLab      = "leak"
	leakReplicas = 2
)

func init() {
	register(&Lab{
		Name:     leakLab,
		Position: 4,
		Title:    "Find and end an instance no NodeClaim owns",
		Summary: `After a normal provisioning the Karpenter controller crashed right after a launch: one
instance runs and bills with no NodeClaim, and never joined the cluster. Find it with the
seed's aws/kubectl commands and terminate it (or let Karpenter's garbage collection); check
proves your detection in the audit trail, who terminated it, that its disks and interface
went with it, and what it cost while leaked.`,
		Checklist: []string{
			"Node bootstrap, leaked-instance detection, interruption, consolidation, and rollback are rehearsed.",
			"Cost alerts and aggregate capacity limits cover reconciliation races and unexpected demand.",
		},
		Stage: stageLeak,
		Grade: gradeLeak,
	})
}

// leakedInstance is an instance tagged for the cluster that no NodeClaim owned, at some time.
type leakedInstance struct {
	evidence.InstanceRow
	// Since is when it became a leak: its launch, or its NodeClaim's deletion.
	Since time.Time
}

// historicLeaks finds every instance tagged for the cluster that no NodeClaim ever owned (a
// launch never recorded), plus those still running after their NodeClaim went (a lost
// terminate), whatever their state now.
func historicLeaks(ev *evidence.Evidence) []leakedInstance {
	owned := map[string]bool{}
	for _, nc := range ev.NodeClaims {
		if nc.InstanceID != "" {
			owned[nc.InstanceID] = true
		}
	}
	current := map[string]evidence.Leak{}
	for _, l := range ev.Leaks {
		current[l.InstanceID] = l
	}
	var out []leakedInstance
	for _, in := range ev.Instances {
		if !ownedByACluster(in.Tags) {
			continue
		}
		if l, ok := current[in.ID]; ok {
			out = append(out, leakedInstance{in, l.Since})
		} else if !owned[in.ID] {
			out = append(out, leakedInstance{in, in.LaunchTime})
		}
	}
	return out
}

func gradeLeak(g *Grading) []Check {
	ev := g.Evidence
	leaks := historicLeaks(ev)
	return []Check{
		checkLeakDetected(g, leaks),
		checkLeakTerminated(leaks),
		checkLeakReleased(leaks),
		checkLeakCost(g, leaks),
		checkWorkloadIntact(ev),
		checkNoLeaks(ev),
	}
}

func noLeakStaged(id, title string) Check {
	return fail(id, title, "the evidence shows no leaked instance at all", "Stage the lab: karplab lab run "+leakLab,
		"no instance tagged for the cluster ever ran without a NodeClaim: the leak was not staged")
}

// checkLeakDetected: the learner described the instances after the leak began, with a call
// whose instance IDs and filters let the answer include a leaked instance.
func checkLeakDetected(g *Grading, leaks []leakedInstance) Check {
	const id, title = "leak-detected", "You detected the leak: your DescribeInstances after it began is in the audit trail"
	if len(leaks) == 0 {
		return noLeakStaged(id, title)
	}
	since := leaks[0].Since
	for _, l := range leaks {
		if l.Since.Before(since) {
			since = l.Since
		}
	}
	var calls, missed []string
	var before *time.Time // the learner's last successful DescribeInstances before the leak
	for _, e := range g.Snapshot.Audit {
		if e.Action != "DescribeInstances" || e.Caller != accesskeys.Learner {
			continue
		}
		at := e.Time.Local().Format("15:04:05")
		call := fmt.Sprintf("DescribeInstances %s at %s%s", e.RequestID, at, describeFilters(e.Parameters))
		switch {
		case e.Time.Before(since):
			if e.ErrorCode == "" {
				before = &e.Time
			}
		case e.ErrorCode != "":
			missed = append(missed, fmt.Sprintf("your %s failed: %s", call, e.ErrorCode))
		case !slices.ContainsFunc(leaks, func(l leakedInstance) bool { return mayReturn(e.Parameters, l.InstanceRow) }):
			missed = append(missed, fmt.Sprintf("your %s could not return the leaked %s: its instance IDs or filters leave it out", call, leaks[0].ID))
		default:
			calls = append(calls, call)
		}
	}
	if len(calls) > 0 {
		return pass(id, title, fmt.Sprintf("%d DescribeInstances calls of yours after the leak began could return it", len(calls)), first(calls, 3)...)
	}
	began := since.Local().Format("15:04:05")
	problems := []string{fmt.Sprintf("no DescribeInstances signed %s since the leak began at %s could return it: kubectl does not show an instance that never joined", accesskeys.Learner, began)}
	if before != nil {
		problems = append(problems, fmt.Sprintf("your last DescribeInstances before it, at %s, came before the leak began", before.Local().Format("15:04:05")))
	}
	return fail(id, title, fmt.Sprintf("no DescribeInstances with your credentials (%s) since the leak began at %s that could return it", accesskeys.Learner, began),
		"Compare what EC2 runs for the pool with what Kubernetes claims, after eval \"$(karplab env)\": aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general (no --instance-ids: the leak is the one no NodeClaim names) and kubectl get nodeclaims.",
		append(problems, first(missed, 3)...)...)
}

// mayReturn tells whether a DescribeInstances call with params could have answered with in:
// its instance IDs name it, and each filter the lab knows matches it (the state filter
// matches pending and running, what a leak was while the learner looked).
func mayReturn(params map[string]string, in evidence.InstanceRow) bool {
	ids := map[string]bool{}
	for k, v := range params {
		if strings.HasPrefix(k, "InstanceId.") {
			ids[v] = true
		}
	}
	if len(ids) > 0 && !ids[in.ID] {
		return false
	}
	for k, name := range params {
		if !strings.HasPrefix(k, "Filter.") || !strings.HasSuffix(k, ".Name") {
			continue
		}
		prefix := strings.TrimSuffix(k, "Name") + "Value."
		var values []string
		for k2, v := range params {
			if strings.HasPrefix(k2, prefix) {
				values = append(values, v)
			}
		}
		var have []string
		switch {
		case name == "instance-id":
			have = []string{in.ID}
		case strings.HasPrefix(name, "tag:"):
			v, ok := in.Tags[strings.TrimPrefix(name, "tag:")]
			if !ok {
				return false
			}
			have = []string{v}
		case name == "tag-key":
			have = slices.Collect(maps.Keys(in.Tags))
		case name == "instance-state-name":
			have = []string{"pending", "running"}
		case name == "instance-type":
			have = []string{in.Type}
		case name == "availability-zone":
			have = []string{in.Zone}
		default:
			continue // a filter the lab does not judge: it may match
		}
		if !slices.ContainsFunc(values, func(v string) bool {
			return slices.ContainsFunc(have, func(h string) bool { ok, _ := path.Match(v, h); return ok })
		}) {
			return false
		}
	}
	return true
}

// describeFilters renders a DescribeInstances call's filters and instance IDs.
func describeFilters(params map[string]string) string {
	var parts []string
	for k, v := range params {
		if strings.HasPrefix(k, "Filter.") && strings.HasSuffix(k, ".Name") {
			var vals []string
			prefix := strings.TrimSuffix(k, "Name") + "Value."
			for k2, v2 := range params {
				if strings.HasPrefix(k2, prefix) {
					vals = append(vals, v2)
				}
			}
			sort.Strings(vals)
			parts = append(parts, v+"="+strings.Join(vals, ","))
		}
		if strings.HasPrefix(k, "InstanceId.") {
			parts = append(parts, "id="+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return " (" + strings.Join(parts, " ") + ")"
}

// checkLeakTerminated: every leaked instance is terminated, by the learner or by Karpenter.
func checkLeakTerminated(leaks []leakedInstance) Check {
	const id, title = "leak-terminated", "The leaked instance was terminated (by you or by Karpenter's garbage collection)"
	if len(leaks) == 0 {
		return noLeakStaged(id, title)
	}
	var done, open []string
	for _, l := range leaks {
		switch {
		case l.State == "terminated" || l.State == "shutting-down":
			at := "-"
			if l.TerminatedAt != nil {
				at = l.TerminatedAt.Local().Format("15:04:05")
			}
			done = append(done, fmt.Sprintf("%s (%s, nodeclaim tag %q) %s at %s by %s", l.ID, l.Type, l.NodeClaim, l.State, at, terminator(l.TerminatedBy)))
		default:
			open = append(open, fmt.Sprintf("%s (%s in %s, nodeclaim tag %q) is %s, leaked since %s", l.ID, l.Type, l.Zone, l.NodeClaim, l.State, l.Since.Local().Format("15:04:05")))
		}
	}
	if len(open) == 0 {
		return pass(id, title, fmt.Sprintf("%d leaked instance(s) terminated", len(done)), done...)
	}
	return fail(id, title, fmt.Sprintf("%d leaked instance(s) not terminated", len(open)),
		"Terminate what no NodeClaim owns: aws ec2 terminate-instances --instance-ids i-... (check the ID against kubectl get nodeclaims first).",
		first(open, 5)...)
}

// checkLeakReleased: the leaked instance's volumes and network interface went with it.
func checkLeakReleased(leaks []leakedInstance) Check {
	const id, title = "leak-released", "The leaked instance's EBS volumes and network interface are gone too"
	if len(leaks) == 0 {
		return noLeakStaged(id, title)
	}
	var gone, left []string
	for _, l := range leaks {
		for _, v := range l.Volumes {
			if v.Deleted {
				gone = append(gone, "volume "+v.ID+" deleted")
			} else {
				left = append(left, fmt.Sprintf("volume %s of %s still exists", v.ID, l.ID))
			}
		}
		for _, n := range l.ENIs {
			if n.Deleted {
				gone = append(gone, "network interface "+n.ID+" deleted")
			} else {
				left = append(left, fmt.Sprintf("network interface %s of %s still exists", n.ID, l.ID))
			}
		}
		if len(l.Volumes)+len(l.ENIs) == 0 {
			left = append(left, l.ID+": no volume or interface known for it")
		}
	}
	if len(left) == 0 {
		return pass(id, title, fmt.Sprintf("%d resources released", len(gone)), gone...)
	}
	return fail(id, title, fmt.Sprintf("%d resources of leaked instances remain", len(left)),
		"Terminating an instance deletes volumes with DeleteOnTermination and its primary interface; anything else must be deleted by hand (aws ec2 describe-volumes --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general).",
		first(left, 6)...)
}

// checkLeakCost: the ledger stopped billing the leak, and says what it cost while leaked.
func checkLeakCost(g *Grading, leaks []leakedInstance) Check {
	const id, title = "leak-cost", "The leak stopped billing, and the ledger says what it cost while leaked"
	if len(leaks) == 0 {
		return noLeakStaged(id, title)
	}
	ledger := map[string]int{}
	for i, e := range g.Snapshot.Billing.Entries {
		ledger[e.ResourceID] = i
	}
	var costs, billing []string
	total := 0.0
	for _, l := range leaks {
		ids := []string{l.ID}
		for _, v := range l.Volumes {
			ids = append(ids, v.ID)
		}
		usd := 0.0
		var end time.Time
		for _, rid := range ids {
			i, ok := ledger[rid]
			if !ok {
				continue
			}
			e := g.Snapshot.Billing.Entries[i]
			usd += e.AccruedUSD
			if e.Stopped == nil {
				billing = append(billing, fmt.Sprintf("%s %s still billing at $%.4f/h ($%.6f so far)", e.ResourceType, rid, e.PricePerHour, e.AccruedUSD))
			} else if rid == l.ID {
				end = *e.Stopped
			}
		}
		total += usd
		leaked := "leaked for " + end.Sub(l.Since).Round(time.Second).String()
		if end.IsZero() {
			leaked = fmt.Sprintf("leaked %s ago and still running", g.Snapshot.TakenAt.Sub(l.Since).Round(time.Second))
		}
		costs = append(costs, fmt.Sprintf("%s (%s, $%.4f/h): $%.6f for instance and volumes, %s", l.ID, l.Type, l.PricePerHour, usd, leaked))
	}
	if len(billing) == 0 {
		return pass(id, title, fmt.Sprintf("the leak cost $%.6f before it stopped billing", total), costs...)
	}
	return failWith(id, title, fmt.Sprintf("the leak is still billing: $%.6f so far", total),
		"Billing stops when the instance shuts down and its volumes are deleted: terminate it.",
		first(billing, 4), costs)
}

// checkWorkloadIntact: the render workers still run, and no instance a live NodeClaim owns
// was terminated by the learner (the wrong instance is the usual mistake).
func checkWorkloadIntact(ev *evidence.Evidence) Check {
	const id, title = "workload-intact", "The workload is intact: its pods run and you terminated no instance a NodeClaim owns"
	running := 0
	for _, p := range ev.PodsOf(zibaNamespace, renderWorker) {
		if p.Phase == "Running" {
			running++
		}
	}
	var wrong []string
	for _, nc := range ev.NodeClaims {
		if nc.InstanceID == "" {
			continue
		}
		if in, ok := ev.Instance(nc.InstanceID); ok && in.TerminatedBy == accesskeys.Learner {
			wrong = append(wrong, fmt.Sprintf("you terminated %s, the instance of NodeClaim %s", in.ID, nc.Name))
		}
	}
	reason := fmt.Sprintf("%d of %d render workers Running", running, leakReplicas)
	if len(wrong) == 0 && running >= leakReplicas {
		return pass(id, title, reason)
	}
	hint := "Karpenter replaces the machines the workers lost: kubectl get pods -n ziba -w."
	if len(wrong) > 0 {
		hint = "Check an instance ID against kubectl get nodeclaims -o wide before you terminate it. Karpenter replaces what you took, " +
			"but the workers' outage cannot be undone: to try again from the start, karplab reset, then karplab lab run " + leakLab + "."
	}
	owned := len(wrong)
	if running < leakReplicas {
		wrong = append(wrong, fmt.Sprintf("%d of %d render workers Running", running, leakReplicas))
	}
	return fail(id, title, reason+fmt.Sprintf("; %d owned instances terminated by you", owned), hint, first(wrong, 5)...)
}

func stageLeak(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	if err := e.ApplyExercise(ctx, leakLab, "workload.yaml", out); err != nil {
		return err
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, leakReplicas, "Running"); err != nil {
		return err
	}
	id, err := crashLeak(ctx, e, out)
	if err != nil {
		return err
	}
	if !opts.Solution {
		fmt.Fprintf(out, "\nSomething bills that Kubernetes does not show. Your task: karplab lab get %s, find it with the seed's commands, end it, then karplab check %s\n", leakLab, leakLab)
		return nil
	}
	learner := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.Learner)
	ids, err := SolveLeak(ctx, e, learner, out)
	if err != nil {
		return err
	}
	if len(ids) != 1 || ids[0] != id {
		return fmt.Errorf("the solution terminated %v, want the leaked %s", ids, id)
	}
	return waitFor(ctx, out, opts.Wait, "the leaked instance to terminate", func(ctx context.Context) (bool, string, error) {
		state, err := instanceState(ctx, e.EC2, id)
		return state == "terminated", fmt.Sprintf("instance %s %s", id, state), err
	})
}

// crashLeak plays the Karpenter controller crashing right after a launch: with the
// controller's credentials it launches one more instance like its pool's, tagged for a
// NodeClaim that was never recorded, without the node bootstrap (so it never joins).
func crashLeak(ctx context.Context, e *Env, out io.Writer) (string, error) {
	karp := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.Karpenter)
	desc, err := karp.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + karpv1.NodePoolLabelKey), Values: []string{generalPool}},
		{Name: aws.String("instance-state-name"), Values: []string{"running"}},
	}})
	if err != nil {
		return "", fmt.Errorf("describing the pool's instances: %w", err)
	}
	var model *ec2types.Instance
	for _, r := range desc.Reservations {
		for i := range r.Instances {
			model = &r.Instances[i]
		}
	}
	if model == nil {
		return "", errors.New("no running instance of the pool to model the leak on")
	}
	claims, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing NodeClaims: %w", err)
	}
	taken := map[string]bool{}
	for _, c := range claims.Items {
		taken[c.GetName()] = true
	}
	name := ""
	for name == "" || taken[name] {
		name = generalPool + "-" + randomSuffix(5)
	}
	var tags []ec2types.Tag
	for _, t := range withoutSystemTags(model.Tags) {
		key := aws.ToString(t.Key)
		switch {
		case key == awsv1.NameTagKey:
		case key == awsv1.NodeClaimTagKey:
			tags = append(tags, ec2types.Tag{Key: t.Key, Value: aws.String(name)})
		default:
			tags = append(tags, t)
		}
	}
	var groups []string
	for _, sg := range model.SecurityGroups {
		groups = append(groups, aws.ToString(sg.GroupId))
	}
	in := &ec2.RunInstancesInput{
		ImageId: model.ImageId, InstanceType: model.InstanceType, SubnetId: model.SubnetId, SecurityGroupIds: groups,
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		BlockDeviceMappings: []ec2types.BlockDeviceMapping{{DeviceName: aws.String("/dev/xvda"), Ebs: &ec2types.EbsBlockDevice{
			VolumeSize: aws.Int32(80), VolumeType: ec2types.VolumeTypeGp3, Encrypted: aws.Bool(true), DeleteOnTermination: aws.Bool(true),
		}}},
		MetadataOptions: &ec2types.InstanceMetadataOptionsRequest{HttpTokens: ec2types.HttpTokensStateRequired, HttpEndpoint: ec2types.InstanceMetadataEndpointStateEnabled},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: tags},
			{ResourceType: ec2types.ResourceTypeVolume, Tags: tags},
			{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: tags},
		},
	}
	if model.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		in.InstanceMarketOptions = &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}
	}
	run, err := karp.RunInstances(ctx, in)
	if err != nil {
		return "", fmt.Errorf("launching the leaked instance: %w", err)
	}
	id := aws.ToString(run.Instances[0].InstanceId)
	fmt.Fprintf(out, " the Karpenter controller launched %s (%s) for NodeClaim %s and crashed before recording it\n", id, model.InstanceType, name)
	fmt.Fprintf(out, " ... the controller restarted; NodeClaim %s does not exist; %s runs, bills, and never joins the cluster\n", name, id)
	return id, nil
}

func randomSuffix(n int) string {
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// SolveLeak is solutions/leak/commands.sh through the SDK, signed by ec2c (the learner's
// credentials): list what the NodeClaims own, describe what EC2 runs for the pool, and
// terminate the running instances nothing claims. It returns the instances it terminated.
func SolveLeak(ctx context.Context, e *Env, ec2c *ec2.Client, out io.Writer) ([]string, error) {
	// kubectl get nodeclaims -o jsonpath='{range .items[*]}{.status.providerID}{"\n"}{end}'
	claims, err := e.Dynamic.Resource(nodeClaimsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	claimed := map[string]bool{}
	for _, c := range claims.Items {
		pid, _, _ := unstructured.NestedString(c.Object, "status", "providerID")
		if id := evidence.InstanceIDFromProviderID(pid); id != "" {
			claimed[id] = true
		}
	}
	// aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general
	//   Name=instance-state-name,Values=pending,running
	desc, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + karpv1.NodePoolLabelKey), Values: []string{generalPool}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}})
	if err != nil {
		return nil, fmt.Errorf("describing instances: %w", err)
	}
	var leaked []string
	for _, r := range desc.Reservations {
		for _, in := range r.Instances {
			if id := aws.ToString(in.InstanceId); !claimed[id] {
				leaked = append(leaked, id)
			}
		}
	}
	fmt.Fprintf(out, " NodeClaims own %d instances; EC2 runs %d for the pool; unclaimed: %v\n", len(claimed), len(leaked)+len(claimed), leaked)
	if len(leaked) == 0 {
		return nil, nil
	}
	// aws ec2 terminate-instances --instance-ids ...
	if _, err := ec2c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: leaked}); err != nil {
		return nil, fmt.Errorf("terminating %v: %w", leaked, err)
	}
	fmt.Fprintf(out, " terminated %v\n", leaked)
	return leaked, nil
}
