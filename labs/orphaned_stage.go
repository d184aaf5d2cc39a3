package labs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/labs/evidence"
)

// dataDevice is the render cache's device in the lab's EC2NodeClass.
const dataDevice = "/dev/xvdb"

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
	learner := cluster.NewEC2Client(e.EC2Endpoint, cluster.LearnerAccessKeyID)
	if _, err := SolveOrphans(ctx, learner, out); err != nil {
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
	node := cluster.NewEC2Client(e.EC2Endpoint, cluster.KubeletAccessKeyID)
	id := aws.ToString(in.InstanceId)
	var groups []string
	for _, sg := range in.SecurityGroups {
		groups = append(groups, aws.ToString(sg.GroupId))
	}
	eni, err := node.CreateNetworkInterface(ctx, &ec2.CreateNetworkInterfaceInput{
		SubnetId: in.SubnetId, Groups: groups, Description: aws.String("aws-K8S-" + id),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: []ec2types.Tag{
			{Key: aws.String(cniClusterTag), Value: aws.String(cluster.ClusterName)},
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
	backup := cluster.NewEC2Client(e.EC2Endpoint, backupAccessKeyID)
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
		consolidated, removing, len(live), underused, orNone(evidence.UnattachedSummary(left)))
	return consolidated > 0 && removing == 0 && underused == 0 && len(left) > 0, status, nil
}

// SolveOrphans is solutions/orphaned-storage/commands.sh through the SDK, signed by ec2c (the
// learner's credentials): find the cluster's available volumes and interfaces and its
// snapshots of volumes nothing uses, and delete them. It returns what it deleted.
func SolveOrphans(ctx context.Context, ec2c *ec2.Client, out io.Writer) ([]string, error) {
	owned := "tag:" + clusterOwnedTag
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
		{Name: aws.String("tag:" + cniClusterTag), Values: []string{cluster.ClusterName}}, {Name: aws.String("status"), Values: []string{"available"}},
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
