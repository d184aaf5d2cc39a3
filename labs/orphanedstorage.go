package labs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/fakeec2/trail"
	"github.com/karplab/karplab/labs/evidence"
)

// The orphaned-storage lab: the EC2NodeClass keeps every disk on termination, the VPC CNI's
// secondary interfaces leak when a machine goes, and the nightly backup snapshots the render
// cache. After consolidation the account holds volumes, snapshots and interfaces no running
// instance uses. The learner finds them by the cluster's tags, prices them, deletes them, and
// fixes the EC2NodeClass so it does not happen again.
const (
	orphanedLab      = "orphaned-storage"
	orphPeakReplicas = 6
	orphLowReplicas  = 2
	// cniClusterTag is the tag the VPC CNI puts on the interfaces it creates.
	cniClusterTag = "cluster.k8s.amazonaws.com/name"
)

func init() {
	register(&Lab{
		Name:     orphanedLab,
		Position: 8,
		Title:    "Find, price and delete the storage and interfaces no instance uses",
		Summary: `The EC2NodeClass keeps every disk when a machine goes, the VPC CNI's secondary
interfaces leak, and the nightly backup snapshots the render cache. After consolidation the
account holds volumes, snapshots and interfaces no running instance uses. Find them with the
aws CLI by the cluster's tags, price them with karplab ec2 billing, delete them and fix the
EC2NodeClass; check proves nothing unattached remains, its billing stopped, the new machines
delete their disks on termination, and nothing the cluster still uses was deleted.`,
		Checklist: []string{
			"EC2NodeClass resolves only approved subnets, security groups, IAM role, immutable AMI, encrypted storage, and tags.",
			"Node bootstrap, leaked-instance detection, interruption, consolidation, and rollback are rehearsed.",
		},
		Stage: stageOrphaned,
		Grade: gradeOrphaned,
	})
}

// orphan is a volume, snapshot or interface of the cluster that, at some time, no live
// instance used.
type orphan struct {
	Kind, ID string
	Instance string    // what it last served
	Since    time.Time // unused since
	// Ended is when it was deleted (billing stopped), by EndedBy; nil while it exists.
	Ended   *time.Time
	EndedBy string
	// PricePerHour is its ledger rate; billed says whether it is in the ledger at all.
	PricePerHour float64
	billed       bool
}

func (o orphan) String() string {
	s := fmt.Sprintf("%s %s", o.Kind, o.ID)
	if o.Instance != "" {
		s += " (of " + o.Instance + ")"
	}
	s += " unused since " + hms(o.Since)
	if o.Ended != nil {
		s += fmt.Sprintf(", deleted %s by %s", hms(*o.Ended), deleter(o.EndedBy))
	}
	return s
}

// costWhileUnused is what it billed while nothing used it, until at if it still exists.
func (o orphan) costWhileUnused(at time.Time) float64 {
	end := at
	if o.Ended != nil {
		end = *o.Ended
	}
	if !end.After(o.Since) {
		return 0
	}
	return o.PricePerHour * end.Sub(o.Since).Hours()
}

func deleter(caller string) string {
	if caller == accesskeys.Learner {
		return "you"
	}
	return terminator(caller)
}

// deletions maps each resource a successful Delete* call removed to that call.
func deletions(audit []trail.AuditEvent) map[string]trail.AuditEvent {
	out := map[string]trail.AuditEvent{}
	for _, e := range audit {
		if e.ErrorCode != "" || e.DryRun {
			continue
		}
		for _, p := range []string{"VolumeId", "SnapshotId", "NetworkInterfaceId"} {
			if id := e.Parameters[p]; id != "" && e.Action == "Delete"+strings.TrimSuffix(p, "Id") {
				out[id] = e
			}
		}
	}
	return out
}

// snapshotVolumes maps each snapshot to the volume it was taken of, from CreateSnapshot calls.
func snapshotVolumes(audit []trail.AuditEvent) map[string]string {
	out := map[string]string{}
	for _, e := range audit {
		if e.Action == "CreateSnapshot" && e.ErrorCode == "" && len(e.Created) > 0 {
			out[e.Created[0]] = e.Parameters["VolumeId"]
		}
	}
	return out
}

// everOrphaned finds every volume, snapshot and interface of the cluster that outlived its
// instance or was detached from it, whether it still exists or was deleted since.
func everOrphaned(g *Grading) []orphan {
	ev := g.Evidence
	deleted := deletions(g.Snapshot.Audit)
	ledger := g.Snapshot.LedgerByResource()
	seen := map[string]int{}
	var out []orphan
	add := func(kind, id, inst string, since time.Time) {
		if _, dup := seen[id]; dup {
			return
		}
		o := orphan{Kind: kind, ID: id, Instance: inst, Since: since}
		if l, ok := ledger[id]; ok {
			o.PricePerHour, o.billed, o.Ended = l.PricePerHour, true, l.Stopped
		}
		if d, ok := deleted[id]; ok {
			at := d.Time.UTC()
			o.Ended, o.EndedBy = &at, d.Caller
		}
		seen[id] = len(out)
		out = append(out, o)
	}
	inUse := map[string]bool{} // volumes a live instance uses now
	for _, in := range ev.Instances {
		if in.TerminatedAt == nil {
			for _, v := range in.Volumes {
				if !v.Deleted {
					inUse[v.ID] = true
				}
			}
			continue
		}
		if !evidence.ClusterTagged(in.Tags) {
			continue
		}
		for _, v := range in.Volumes {
			if _, byHand := deleted[v.ID]; v.Outlived || byHand {
				add(evidence.KindVolume, v.ID, in.ID, *in.TerminatedAt)
			}
		}
		for _, n := range in.ENIs {
			if _, byHand := deleted[n.ID]; n.Outlived || byHand {
				add(evidence.KindInterface, n.ID, in.ID, *in.TerminatedAt)
			}
		}
	}
	for _, u := range ev.Unattached {
		add(u.Kind, u.ID, u.LastInstance, u.Since)
	}
	vols := snapshotVolumes(g.Snapshot.Audit)
	for _, l := range g.Snapshot.Billing.Entries {
		if l.ResourceType != "snapshot" || !evidence.ClusterTagged(l.Tags) || inUse[vols[l.ResourceID]] {
			continue
		}
		since, inst := l.Started.UTC(), ""
		if i, ok := seen[vols[l.ResourceID]]; ok {
			inst = out[i].Instance
			if out[i].Since.After(since) {
				since = out[i].Since
			}
		}
		add(evidence.KindSnapshot, l.ResourceID, inst, since)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

func gradeOrphaned(g *Grading) []Check {
	orphans := everOrphaned(g)
	return []Check{
		checkRunning(g.Evidence, zibaNamespace, renderWorker, orphLowReplicas),
		checkNothingUnattached(g.Evidence, orphans),
		checkOrphanBilling(g, orphans),
		checkNodeClassDeletes(g),
		checkInUseKept(g),
		checkNoLeaks(g.Evidence),
	}
}

func noOrphansStaged(id, title string) Check {
	return fail(id, title, "the evidence shows no volume, snapshot or interface that outlived its instance",
		"Stage the lab: karplab lab run "+orphanedLab, "nothing of the cluster outlived an instance: the incident was not staged")
}

const sweepHint = `Find them by the cluster's tags, then delete each:
  aws ec2 describe-volumes --filters Name=tag:kubernetes.io/cluster/karplab,Values=owned Name=status,Values=available
  aws ec2 describe-network-interfaces --filters Name=tag:cluster.k8s.amazonaws.com/name,Values=karplab Name=status,Values=available
  aws ec2 describe-snapshots --owner-ids self --filters Name=tag:kubernetes.io/cluster/karplab,Values=owned
  aws ec2 delete-volume --volume-id vol-...; aws ec2 delete-snapshot --snapshot-id snap-...; aws ec2 delete-network-interface --network-interface-id eni-...`

// checkNothingUnattached: no volume, snapshot or interface of the cluster is left unused.
func checkNothingUnattached(ev *evidence.Evidence, orphans []orphan) Check {
	const id, title = "nothing-unattached", "Nothing unattached remains: no volume, snapshot or interface of the cluster that no live instance uses"
	if len(orphans) == 0 {
		return noOrphansStaged(id, title)
	}
	if len(ev.Unattached) > 0 {
		var rows []string
		hourly := 0.0
		for _, u := range ev.Unattached {
			hourly += u.PricePerHour
			rows = append(rows, fmt.Sprintf("%s %s: %s, last on %s, unused since %s, $%.6f/h", u.Kind, u.ID, u.Detail, evidence.Dash(u.LastInstance), hms(u.Since), u.PricePerHour))
		}
		return fail(id, title, fmt.Sprintf("%s remain unattached, billing $%.4f/h", evidence.UnattachedSummary(ev.Unattached), hourly), sweepHint, first(rows, 12)...)
	}
	var gone []string
	for _, o := range orphans {
		gone = append(gone, o.String())
	}
	return pass(id, title, fmt.Sprintf("all %d orphaned resources are deleted", len(orphans)), first(gone, 12)...)
}

// checkOrphanBilling: the ledger stopped billing every orphaned volume and snapshot, and
// says what they cost while unused.
func checkOrphanBilling(g *Grading, orphans []orphan) Check {
	const id, title = "orphans-billing-stopped", "Billing for the orphaned volumes and snapshots stopped, and the ledger says what they cost unused"
	if len(orphans) == 0 {
		return noOrphansStaged(id, title)
	}
	at := g.Snapshot.TakenAt
	var billing, costs []string
	total, n := 0.0, 0
	for _, o := range orphans {
		if !o.billed {
			continue
		}
		n++
		usd := o.costWhileUnused(at)
		total += usd
		if o.Ended == nil {
			billing = append(billing, fmt.Sprintf("%s %s still bills $%.6f/h ($%.6f unused so far)", o.Kind, o.ID, o.PricePerHour, usd))
			continue
		}
		costs = append(costs, fmt.Sprintf("%s %s: $%.6f/h for %s unused, $%.6f", o.Kind, o.ID, o.PricePerHour, o.Ended.Sub(o.Since).Round(time.Second), usd))
	}
	if len(billing) > 0 {
		return failWith(id, title, fmt.Sprintf("%d of %d orphaned volumes and snapshots still bill; $%.6f unused so far", len(billing), n, total),
			"karplab ec2 billing lists every ledger entry and its rate (karplab ec2 billing --by-tag karpenter.sh/nodeclaim groups them); a volume or snapshot bills per GB-month until it is deleted.",
			first(billing, 8), first(costs, 4))
	}
	return pass(id, title, fmt.Sprintf("%d orphaned volumes and snapshots billed $%.6f while unused; none bills now", n, total), first(costs, 10)...)
}

// keptDevices lists an EC2NodeClass's block devices that outlive their instance.
func keptDevices(nc *unstructured.Unstructured) []string {
	bdms, _, _ := unstructured.NestedSlice(nc.Object, "spec", "blockDeviceMappings")
	var kept []string
	for _, b := range bdms {
		m, _ := b.(map[string]any)
		dev, _ := m["deviceName"].(string)
		if dot, ok, _ := unstructured.NestedBool(m, "ebs", "deleteOnTermination"); ok && !dot {
			kept = append(kept, dev)
		}
	}
	return kept
}

// nodeClassFixedAt is when the EC2NodeClass last stopped keeping volumes on termination; ok
// is false when it never existed, and kept names what it keeps now.
func (g *Grading) nodeClassFixedAt(name string) (fixedAt time.Time, kept []string, ok bool) {
	type state struct {
		at   time.Time
		kept []string
	}
	var states []state
	for _, v := range g.hist.NodeClasses {
		if v.Last().GetName() != name {
			continue
		}
		for i, obj := range v.States {
			states = append(states, state{v.Seen[i].UTC(), keptDevices(obj)})
		}
	}
	if len(states) == 0 {
		return time.Time{}, nil, false
	}
	sort.SliceStable(states, func(i, j int) bool { return states[i].at.Before(states[j].at) })
	last := len(states) - 1
	fixedAt = states[last].at
	for i := last; i >= 0 && len(states[i].kept) == 0; i-- {
		fixedAt = states[i].at
	}
	return fixedAt, states[last].kept, true
}

// checkNodeClassDeletes: the EC2NodeClass deletes every volume on termination, and the
// machines launched since delete theirs; none launched before it still runs.
func checkNodeClassDeletes(g *Grading) Check {
	const id, title = "nodeclass-deletes-volumes", "The fixed EC2NodeClass's new instances delete their volumes on termination"
	fixedAt, kept, ok := g.nodeClassFixedAt(generalPool)
	if !ok {
		return fail(id, title, "no EC2NodeClass "+generalPool+" was ever applied", "Stage the lab: karplab lab run "+orphanedLab,
			"EC2NodeClass "+generalPool+" does not exist")
	}
	if len(kept) > 0 {
		var lines []string
		for _, dev := range kept {
			lines = append(lines, fmt.Sprintf("EC2NodeClass %s: %s has deleteOnTermination: false, so every machine leaves it behind", generalPool, dev))
		}
		return fail(id, title, fmt.Sprintf("the EC2NodeClass keeps %s on termination", strings.Join(kept, ", ")),
			"Set deleteOnTermination: true on every spec.blockDeviceMappings entry of nodeclass.yaml and kubectl apply -f nodeclass.yaml; Karpenter then replaces the drifted machines.",
			lines...)
	}
	var good, bad, old []string
	for _, in := range g.Evidence.InstancesOfPool(generalPool) {
		// A machine shutting down still holds its disks: what it keeps appears only once
		// it is terminated.
		if in.State == "terminated" {
			continue
		}
		if in.LaunchTime.Before(fixedAt.Add(-clockSlack)) {
			old = append(old, fmt.Sprintf("%s (%s) launched %s, before the fix, still %s", in.ID, in.NodeClaim, hms(in.LaunchTime), in.State))
			continue
		}
		if in.State == "shutting-down" {
			continue
		}
		var keeps []string
		for _, v := range in.Volumes {
			if v.DeleteOnTermination == nil || !*v.DeleteOnTermination {
				keeps = append(keeps, v.ID)
			}
		}
		if len(keeps) > 0 {
			bad = append(bad, fmt.Sprintf("%s keeps %s on termination", in.ID, strings.Join(keeps, ", ")))
		} else {
			good = append(good, fmt.Sprintf("%s (%s) launched %s: %d volumes, all DeleteOnTermination", in.ID, in.NodeClaim, hms(in.LaunchTime), len(in.Volumes)))
		}
	}
	switch {
	case len(bad) > 0:
		return fail(id, title, fmt.Sprintf("%d machines launched since the fix keep volumes", len(bad)),
			"aws ec2 describe-instances --query 'Reservations[].Instances[].BlockDeviceMappings' shows each attachment's DeleteOnTermination.", bad...)
	case len(old) > 0:
		return failWith(id, title, fmt.Sprintf("%d machines launched before the fix at %s still run, and will keep their disks", len(old), hms(fixedAt)),
			"Karpenter replaces machines whose EC2NodeClass drifted, within the disruption budget: kubectl get nodeclaims -w. Sweep the disks they leave after that.", old, good)
	case len(good) == 0:
		return fail(id, title, "no machine of the pool was launched since the fix at "+hms(fixedAt),
			"Karpenter replaces the drifted machines: kubectl get nodeclaims -w",
			"no running machine of "+generalPool+" proves the fix yet: none was launched since "+hms(fixedAt))
	}
	return pass(id, title, fmt.Sprintf("%s launched since the fix at %s, every volume DeleteOnTermination", nouns(len(good), "machine"), hms(fixedAt)), good...)
}

// checkInUseKept: the learner deleted nothing a live instance still used: no volume or
// interface detached from one, no snapshot of a volume in use, no NodeClaim's instance.
func checkInUseKept(g *Grading) Check {
	const id, title = "in-use-kept", "Nothing the cluster still uses was deleted: no detach from a live machine, no backup of a disk in use"
	ev := g.Evidence
	owner := map[string]evidence.InstanceRow{}
	for _, in := range ev.Instances {
		for _, v := range in.Volumes {
			owner[v.ID] = in
		}
	}
	claimed := map[string]string{}
	for _, nc := range ev.NodeClaims {
		if nc.InstanceID != "" {
			claimed[nc.InstanceID] = nc.Name
		}
	}
	vols := snapshotVolumes(g.Snapshot.Audit)
	var wrong, fine []string
	for _, e := range g.Snapshot.Audit {
		if e.Caller != accesskeys.Learner || e.ErrorCode != "" || e.DryRun {
			continue
		}
		at := hms(e.Time)
		switch e.Action {
		case "DetachVolume":
			wrong = append(wrong, fmt.Sprintf("%s you detached volume %s from %s", at, e.Parameters["VolumeId"], evidence.Dash(owner[e.Parameters["VolumeId"]].ID)))
		case "DetachNetworkInterface":
			wrong = append(wrong, fmt.Sprintf("%s you detached interface attachment %s from a live instance", at, e.Parameters["AttachmentId"]))
		case "TerminateInstances":
			for _, iid := range e.Terminated {
				if nc, ok := claimed[iid]; ok {
					wrong = append(wrong, fmt.Sprintf("%s you terminated %s, the instance of NodeClaim %s", at, iid, nc))
				}
			}
		case "DeleteSnapshot":
			sid := e.Parameters["SnapshotId"]
			in, ok := owner[vols[sid]]
			if ok && !in.LaunchTime.After(e.Time) && (in.TerminatedAt == nil || in.TerminatedAt.After(e.Time)) {
				wrong = append(wrong, fmt.Sprintf("%s you deleted snapshot %s, the backup of %s while %s still used it", at, sid, vols[sid], in.ID))
			} else {
				fine = append(fine, fmt.Sprintf("%s you deleted snapshot %s", at, sid))
			}
		case "DeleteVolume", "DeleteNetworkInterface":
			fine = append(fine, fmt.Sprintf("%s you deleted %s", at, e.Parameters["VolumeId"]+e.Parameters["NetworkInterfaceId"]))
		}
	}
	if len(wrong) > 0 {
		return failWith(id, title, fmt.Sprintf("%d of your calls took something a live machine used", len(wrong)),
			"Delete only what is available (Name=status,Values=available) and snapshots of volumes no instance uses; never detach from a running node. "+
				"What a live machine lost cannot be given back: to sweep again from the start, karplab reset, then karplab lab run "+orphanedLab+".",
			wrong, first(fine, 4))
	}
	return pass(id, title, fmt.Sprintf("your %d deletions touched only unused resources", len(fine)), first(fine, 12)...)
}

// dataDevice is the render cache's device in the lab's EC2NodeClass.
const dataDevice = "/dev/xvdb"

// consolidationRevisit is how long the lab's consolidation on the wall clock (its seed's
// 20s) may see no progress. Karpenter skips consolidation while the cluster state is
// unchanged since it last found nothing to do, and forces a fresh look only every five
// minutes (state.Cluster.ConsolidationState), so a quiet spell shorter than that is not a
// stall.
const consolidationRevisit = 6 * time.Minute

func stageOrphaned(ctx context.Context, e *Env, out io.Writer, opts StageOptions) error {
	for _, f := range []string{"workload.yaml", "nodeclass.yaml"} {
		if err := e.ApplyExercise(ctx, orphanedLab, f, out); err != nil {
			return err
		}
	}
	if err := e.waitPods(ctx, out, opts.Wait, zibaNamespace, renderSelector, orphPeakReplicas, "Running"); err != nil {
		return err
	}
	peak, err := e.poolInstances(ctx)
	if err != nil {
		return err
	}
	if len(peak) == 0 {
		return errors.New("no running instance of the pool at the peak")
	}
	var ids []string
	for _, in := range peak {
		ids = append(ids, aws.ToString(in.InstanceId))
		if err := attachCNIInterface(ctx, e, out, in); err != nil {
			return err
		}
		if err := backupCache(ctx, e, out, in); err != nil {
			return err
		}
	}
	// The CNI's interfaces will not go with their machines, as when aws-node is killed
	// before it releases them.
	if _, err := e.Admin.SetFault(ctx, fakeec2.Fault{Kind: fakeec2.FaultLeakENIs, InstanceIDs: ids}); err != nil {
		return fmt.Errorf("setting the leak-enis fault: %w", err)
	}
	fmt.Fprintf(out, " the VPC CNI will leave the secondary interfaces of %v behind when they go\n", ids)
	if err := e.scaleDeployment(ctx, out, zibaNamespace, renderWorker, orphLowReplicas); err != nil {
		return err
	}
	fmt.Fprintf(out, " waiting for Karpenter to consolidate (consolidateAfter 20s)\n")
	if err := poll(ctx, out, max(opts.Wait, consolidationRevisit), 3*time.Second, "consolidation to settle", e.orphansSettled); err != nil {
		return err
	}
	if !opts.Solution {
		fmt.Fprintf(out, `
The evening: Karpenter consolidated the pool, and EC2 holds what nothing uses. Your task
(karplab lab get %s): find every volume, snapshot and interface of the cluster no running
instance uses, price them with karplab ec2 billing, delete them, fix nodeclass.yaml so it does
not happen again; then karplab check %s
`, orphanedLab, orphanedLab)
		return nil
	}
	if err := e.ApplySolution(ctx, orphanedLab, out); err != nil {
		return err
	}
	fmt.Fprintf(out, " waiting for Karpenter to replace the machines launched with the old EC2NodeClass (drift)\n")
	if err := e.waitChecks(ctx, out, max(opts.Wait, consolidationRevisit), orphanedLab, "nodeclass-deletes-volumes"); err != nil {
		return err
	}
	learner := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.Learner)
	if _, err := SolveOrphans(ctx, learner, e.Account.ClusterName, out); err != nil {
		return err
	}
	return e.waitChecks(ctx, out, opts.Wait, orphanedLab, "nothing-unattached", "orphans-billing-stopped")
}

// poolInstances are the running instances of the lab's general pool.
func (e *Env) poolInstances(ctx context.Context) ([]ec2types.Instance, error) {
	desc, err := e.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + karpv1.NodePoolLabelKey), Values: []string{generalPool}},
		{Name: aws.String("instance-state-name"), Values: []string{"running"}},
	}})
	if err != nil {
		return nil, fmt.Errorf("describing the pool's instances: %w", err)
	}
	var out []ec2types.Instance
	for _, r := range desc.Reservations {
		out = append(out, r.Instances...)
	}
	return out, nil
}

// attachCNIInterface plays the VPC CNI on a busy node: with the node role's credentials it
// creates a secondary interface in the node's subnet, tagged and described as aws-node does,
// attaches it as device 1 and marks it to go with the instance.
func attachCNIInterface(ctx context.Context, e *Env, out io.Writer, in ec2types.Instance) error {
	node := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.Kubelet)
	id := aws.ToString(in.InstanceId)
	var groups []string
	for _, sg := range in.SecurityGroups {
		groups = append(groups, aws.ToString(sg.GroupId))
	}
	eni, err := node.CreateNetworkInterface(ctx, &ec2.CreateNetworkInterfaceInput{
		SubnetId: in.SubnetId, Groups: groups, Description: aws.String("aws-K8S-" + id),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: []ec2types.Tag{
			{Key: aws.String(cniClusterTag), Value: aws.String(e.Account.ClusterName)},
			{Key: aws.String("node.k8s.amazonaws.com/instance_id"), Value: aws.String(id)},
			{Key: aws.String("node.k8s.amazonaws.com/createdAt"), Value: aws.String(time.Now().UTC().Format(time.RFC3339))},
		}}},
	})
	if err != nil {
		return fmt.Errorf("creating the CNI interface of %s: %w", id, err)
	}
	eid := aws.ToString(eni.NetworkInterface.NetworkInterfaceId)
	att, err := node.AttachNetworkInterface(ctx, &ec2.AttachNetworkInterfaceInput{InstanceId: in.InstanceId, NetworkInterfaceId: aws.String(eid), DeviceIndex: aws.Int32(1)})
	if err != nil {
		return fmt.Errorf("attaching %s to %s: %w", eid, id, err)
	}
	if _, err := node.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{NetworkInterfaceId: aws.String(eid),
		Attachment: &ec2types.NetworkInterfaceAttachmentChanges{AttachmentId: att.AttachmentId, DeleteOnTermination: aws.Bool(true)}}); err != nil {
		return fmt.Errorf("marking %s to go with %s: %w", eid, id, err)
	}
	fmt.Fprintf(out, " the VPC CNI attached secondary interface %s (%s) to %s\n", eid, aws.ToString(eni.NetworkInterface.PrivateIpAddress), id)
	return nil
}

// backupCache plays the nightly backup job: it snapshots the node's render-cache volume,
// copying the volume's tags as AWS Backup does.
func backupCache(ctx context.Context, e *Env, out io.Writer, in ec2types.Instance) error {
	var vid string
	for _, bd := range in.BlockDeviceMappings {
		if aws.ToString(bd.DeviceName) == dataDevice && bd.Ebs != nil {
			vid = aws.ToString(bd.Ebs.VolumeId)
		}
	}
	if vid == "" {
		return fmt.Errorf("instance %s has no %s volume to back up", aws.ToString(in.InstanceId), dataDevice)
	}
	desc, err := e.EC2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{vid}})
	if err != nil {
		return fmt.Errorf("describing %s: %w", vid, err)
	}
	tags := []ec2types.Tag{{Key: aws.String("backup.ziba.dev/plan"), Value: aws.String("nightly-render-cache")}}
	for _, v := range desc.Volumes {
		tags = append(tags, withoutSystemTags(v.Tags)...)
	}
	backup := cluster.NewEC2Client(e.EC2Endpoint, accesskeys.BackupJob)
	snap, err := backup.CreateSnapshot(ctx, &ec2.CreateSnapshotInput{VolumeId: aws.String(vid), Description: aws.String("nightly render cache of " + aws.ToString(in.InstanceId)),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSnapshot, Tags: tags}}})
	if err != nil {
		return fmt.Errorf("snapshotting %s: %w", vid, err)
	}
	fmt.Fprintf(out, " the nightly backup snapshotted %s of %s as %s\n", vid, aws.ToString(in.InstanceId), aws.ToString(snap.SnapshotId))
	return nil
}

// orphansSettled holds once Karpenter consolidated the pool (no NodeClaim being removed, no
// node left whose pods fit elsewhere) and EC2 holds what the removed machines left.
func (e *Env) orphansSettled(ctx context.Context) (bool, string, error) {
	g, err := e.grading(ctx)
	if err != nil {
		return false, "", err
	}
	claims := g.claimLives(generalPool)
	removing := 0
	for _, c := range claims {
		if c.DeletionRequested != nil && c.Deleted == nil {
			removing++
		}
	}
	live := g.liveNodes(generalPool)
	underused := 0
	for i := range live {
		if removable(live, i) {
			underused++
		}
	}
	consolidated := len(consolidatedClaims(claims))
	left := g.Evidence.Unattached
	status := fmt.Sprintf("%d NodeClaims consolidated, %d being removed, %d nodes (%d underused); unattached: %s",
		consolidated, removing, len(live), underused, evidence.OrUntagged(evidence.UnattachedSummary(left)))
	return consolidated > 0 && removing == 0 && underused == 0 && len(left) > 0, status, nil
}

// SolveOrphans is solutions/orphaned-storage/commands.sh through the SDK, signed by ec2c (the
// learner's credentials): find the cluster's available volumes and interfaces and its
// snapshots of volumes nothing uses, and delete them. It returns what it deleted.
func SolveOrphans(ctx context.Context, ec2c *ec2.Client, clusterName string, out io.Writer) ([]string, error) {
	owned := "tag:" + clusterTagPrefix + clusterName
	volumes := func(status string) ([]string, error) {
		var ids []string
		p := ec2.NewDescribeVolumesPaginator(ec2c, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{
			{Name: aws.String(owned), Values: []string{"owned"}}, {Name: aws.String("status"), Values: []string{status}},
		}})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing %s volumes: %w", status, err)
			}
			for _, v := range page.Volumes {
				ids = append(ids, aws.ToString(v.VolumeId))
			}
		}
		return ids, nil
	}
	// aws ec2 describe-volumes --filters Name=tag:kubernetes.io/cluster/karplab,Values=owned Name=status,Values=available
	available, err := volumes("available")
	if err != nil {
		return nil, err
	}
	inUse, err := volumes("in-use")
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, id := range inUse {
		used[id] = true
	}
	// aws ec2 describe-snapshots --owner-ids self --filters Name=tag:kubernetes.io/cluster/karplab,Values=owned
	var snaps []string
	sp := ec2.NewDescribeSnapshotsPaginator(ec2c, &ec2.DescribeSnapshotsInput{OwnerIds: []string{"self"},
		Filters: []ec2types.Filter{{Name: aws.String(owned), Values: []string{"owned"}}}})
	for sp.HasMorePages() {
		page, err := sp.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing snapshots: %w", err)
		}
		for _, s := range page.Snapshots {
			if !used[aws.ToString(s.VolumeId)] {
				snaps = append(snaps, aws.ToString(s.SnapshotId))
			}
		}
	}
	// aws ec2 describe-network-interfaces --filters Name=tag:cluster.k8s.amazonaws.com/name,Values=karplab Name=status,Values=available
	enis, err := ec2c.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + cniClusterTag), Values: []string{clusterName}}, {Name: aws.String("status"), Values: []string{"available"}},
	}})
	if err != nil {
		return nil, fmt.Errorf("describing network interfaces: %w", err)
	}
	fmt.Fprintf(out, " unattached: volumes %v, snapshots %v, %d interfaces\n", available, snaps, len(enis.NetworkInterfaces))
	var deleted []string
	for _, id := range available {
		if _, err := ec2c.DeleteVolume(ctx, &ec2.DeleteVolumeInput{VolumeId: aws.String(id)}); err != nil {
			return deleted, fmt.Errorf("deleting %s: %w", id, err)
		}
		deleted = append(deleted, id)
	}
	for _, id := range snaps {
		if _, err := ec2c.DeleteSnapshot(ctx, &ec2.DeleteSnapshotInput{SnapshotId: aws.String(id)}); err != nil {
			return deleted, fmt.Errorf("deleting %s: %w", id, err)
		}
		deleted = append(deleted, id)
	}
	for _, n := range enis.NetworkInterfaces {
		if _, err := ec2c.DeleteNetworkInterface(ctx, &ec2.DeleteNetworkInterfaceInput{NetworkInterfaceId: n.NetworkInterfaceId}); err != nil {
			return deleted, fmt.Errorf("deleting %s: %w", aws.ToString(n.NetworkInterfaceId), err)
		}
		deleted = append(deleted, aws.ToString(n.NetworkInterfaceId))
	}
	fmt.Fprintf(out, " deleted %v\n", deleted)
	return deleted, nil
}
