#!/bin/sh
# Your starting point: the seed's commands to compare the two control planes. Complete every
# TODO, run it (eval "$(karplab env)" first), then: karplab check leak
set -eu

# What Kubernetes believes: every NodeClaim and the instance its providerID names.
kubectl get nodeclaims -o custom-columns=NAME:.metadata.name,PROVIDERID:.status.providerID,NODE:.status.nodeName

# TODO: what EC2 runs for the pool — the seed's command:
#   aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general
# (add Name=instance-state-name,Values=pending,running and a --query for the IDs and the
#  karpenter.sh/nodeclaim tag to make the comparison easy)

# TODO: terminate every running instance of the pool that no NodeClaim's providerID names:
#   aws ec2 terminate-instances --instance-ids i-...
# Check the ID twice: terminating an instance a NodeClaim owns takes a worker down.
