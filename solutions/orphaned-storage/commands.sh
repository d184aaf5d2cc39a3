#!/bin/sh
# Reference sweep of the orphaned-storage lab (eval "$(karplab env)" first), run after
# nodeclass.yaml is applied and Karpenter replaced the drifted machines: delete every volume,
# interface and snapshot of the cluster that no live instance uses. labs.SolveOrphans does
# the same through the SDK with the learner's credentials.
set -eu
owned=Name=tag:kubernetes.io/cluster/karplab,Values=owned

volumes=$(aws ec2 describe-volumes --filters "$owned" Name=status,Values=available \
  --query 'Volumes[].VolumeId' --output text)
in_use=$(aws ec2 describe-volumes --filters "$owned" Name=status,Values=in-use \
  --query 'Volumes[].VolumeId' --output text)
enis=$(aws ec2 describe-network-interfaces \
  --filters Name=tag:cluster.k8s.amazonaws.com/name,Values=karplab Name=status,Values=available \
  --query 'NetworkInterfaces[].NetworkInterfaceId' --output text)
# Snapshots of volumes nothing uses; a live disk's backup stays.
snapshots=$(aws ec2 describe-snapshots --owner-ids self --filters "$owned" \
  --query 'Snapshots[].[SnapshotId,VolumeId]' --output text |
  while read -r snap vol; do
    printf '%s\n' $in_use | grep -qx "$vol" || echo "$snap"
  done)

echo "unused volumes: $volumes"
echo "unused snapshots: $snapshots"
echo "unused interfaces: $enis"
karplab ec2 billing

for v in $volumes; do aws ec2 delete-volume --volume-id "$v"; done
for s in $snapshots; do aws ec2 delete-snapshot --snapshot-id "$s"; done
for n in $enis; do aws ec2 delete-network-interface --network-interface-id "$n"; done

# The ledger stopped billing them.
karplab ec2 billing
