#!/bin/sh
# Your starting point for the sweep. Fix and apply nodeclass.yaml first and wait for
# Karpenter's replacement (kubectl get nodeclaims -w); complete every TODO, run it
# (eval "$(karplab env)" first), then: karplab check orphaned-storage
set -eu

# Volumes of the cluster no instance uses.
aws ec2 describe-volumes \
  --filters Name=tag:kubernetes.io/cluster/karplab,Values=owned Name=status,Values=available \
  --query 'Volumes[].[VolumeId,Size,VolumeType]' --output text

# TODO: the CNI's interfaces no instance uses (tag cluster.k8s.amazonaws.com/name=karplab,
#   status available): aws ec2 describe-network-interfaces --filters ...

# TODO: the cluster's snapshots (aws ec2 describe-snapshots --owner-ids self --filters ...),
#   and of those, the ones whose VolumeId no in-use volume has.

# What they cost so far.
karplab ec2 billing

# TODO: delete each one you found:
#   aws ec2 delete-volume --volume-id vol-...
#   aws ec2 delete-snapshot --snapshot-id snap-...
#   aws ec2 delete-network-interface --network-interface-id eni-...
