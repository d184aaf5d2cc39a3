package labs

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karplab/karplab/cluster"
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
	// backupAccessKeyID signs the nightly backup job's snapshots.
	backupAccessKeyID = "AKIAZIBABACKUPJOB001"
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
	if caller == cluster.LearnerAccessKeyID {
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
		"Stage the lab: karplab lab run "+orphanedLab)
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
			rows = append(rows, fmt.Sprintf("%s %s: %s, last on %s, unused since %s, $%.6f/h", u.Kind, u.ID, u.Detail, dash(u.LastInstance), hms(u.Since), u.PricePerHour))
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
		return fail(id, title, fmt.Sprintf("%d of %d orphaned volumes and snapshots still bill; $%.6f unused so far", len(billing), n, total),
			"karplab ec2 billing lists every ledger entry and its rate (karplab ec2 billing --by-tag karpenter.sh/nodeclaim groups them); a volume or snapshot bills per GB-month until it is deleted.",
			append(first(billing, 8), first(costs, 4)...)...)
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
		return fail(id, title, "no EC2NodeClass "+generalPool+" was ever applied", "Stage the lab: karplab lab run "+orphanedLab)
	}
	if len(kept) > 0 {
		return fail(id, title, fmt.Sprintf("the EC2NodeClass keeps %s on termination", strings.Join(kept, ", ")),
			"Set deleteOnTermination: true on every spec.blockDeviceMappings entry of nodeclass.yaml and kubectl apply -f nodeclass.yaml; Karpenter then replaces the drifted machines.")
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
		return fail(id, title, fmt.Sprintf("%d machines launched before the fix at %s still run, and will keep their disks", len(old), hms(fixedAt)),
			"Karpenter replaces machines whose EC2NodeClass drifted, within the disruption budget: kubectl get nodeclaims -w. Sweep the disks they leave after that.", append(old, good...)...)
	case len(good) == 0:
		return fail(id, title, "no machine of the pool was launched since the fix at "+hms(fixedAt),
			"Karpenter replaces the drifted machines: kubectl get nodeclaims -w")
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
		if e.Caller != cluster.LearnerAccessKeyID || e.ErrorCode != "" || e.DryRun {
			continue
		}
		at := hms(e.Time)
		switch e.Action {
		case "DetachVolume":
			wrong = append(wrong, fmt.Sprintf("%s you detached volume %s from %s", at, e.Parameters["VolumeId"], dash(owner[e.Parameters["VolumeId"]].ID)))
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
		return fail(id, title, fmt.Sprintf("%d of your calls took something a live machine used", len(wrong)),
			"Delete only what is available (Name=status,Values=available) and snapshots of volumes no instance uses; never detach from a running node.",
			append(wrong, first(fine, 4)...)...)
	}
	return pass(id, title, fmt.Sprintf("your %d deletions touched only unused resources", len(fine)), first(fine, 12)...)
}
