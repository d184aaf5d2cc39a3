#!/bin/sh
# Reference solution of the leak lab (eval "$(karplab env)" first): compare what EC2 runs for
# the pool with what the NodeClaims own, and terminate the difference. labs.SolveLeak does
# the same through the SDK with the learner's credentials.
set -eu

# What Kubernetes believes: the instance IDs the NodeClaims' providerIDs name.
kubectl get nodeclaims -o custom-columns=NAME:.metadata.name,PROVIDERID:.status.providerID,NODE:.status.nodeName
claimed=$(kubectl get nodeclaims -o jsonpath='{range .items[*]}{.status.providerID}{"\n"}{end}' | sed 's#.*/##')

# What EC2 runs for the pool (the seed's command, narrowed to live instances).
aws ec2 describe-instances \
  --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general Name=instance-state-name,Values=pending,running \
  --query 'Reservations[].Instances[].[InstanceId,InstanceType,Placement.AvailabilityZone,LaunchTime,Tags[?Key==`karpenter.sh/nodeclaim`]|[0].Value]' \
  --output text
running=$(aws ec2 describe-instances \
  --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general Name=instance-state-name,Values=pending,running \
  --query 'Reservations[].Instances[].InstanceId' --output text)

# Terminate what no NodeClaim owns.
for id in $running; do
  if ! printf '%s\n' "$claimed" | grep -qx "$id"; then
    echo "leaked: $id (no NodeClaim owns it)"
    aws ec2 terminate-instances --instance-ids "$id" \
      --query 'TerminatingInstances[].[InstanceId,CurrentState.Name]' --output text
  fi
done

# Its disks and interface go with it; the ledger stops billing it.
aws ec2 describe-volumes --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general \
  --query 'Volumes[].[VolumeId,State,Attachments[0].InstanceId]' --output text
