#!/bin/sh
# Reference solution of the bootstrap-failure lab (eval "$(karplab env)" first). The
# earliest failing boundary, then the fix; then Karpenter's own registration timeout removes
# the stuck NodeClaims.
set -eu

# 1. Pending pods, NodeClaims with no NODE, Registered=Unknown "Node not registered with cluster".
kubectl get pods -A --field-selector=status.phase=Pending
kubectl get nodepools,nodeclaims
kubectl describe nodeclaim | sed -n '/Conditions:/,/Events:/p'
kubectl get nodes -L karpenter.sh/nodepool,karpenter.sh/capacity-type,node.kubernetes.io/instance-type
karplab evidence

# 2. EC2 says the instances run: the boundary is after launch, before registration.
aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general \
  --query 'Reservations[].Instances[].[InstanceId,State.Name,PrivateDnsName,Tags[?Key==`karpenter.sh/nodeclaim`]|[0].Value]' --output text

# 3. What the machine printed at boot (cloud-init names the user-data part that failed),
#    then what it ran: the MIME user data, custom script first.
#    (None when no machine runs at the moment, e.g. right after stuck NodeClaims were deleted.)
id=$(aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general Name=instance-state-name,Values=running \
  --query 'Reservations[0].Instances[0].InstanceId' --output text)
if [ "$id" != None ]; then
  aws ec2 get-console-output --instance-id "$id" --latest --query Output --output text
  aws ec2 describe-instance-attribute --instance-id "$id" --attribute userData --query UserData.Value --output text | base64 -d
else
  echo "no instance of the pool runs now: nothing to read the console of"
fi

# 4. Fix the EC2NodeClass (nodeclass.yaml beside this script: the debug hook's `exit 1`
#    removed). The path is the script's own, so it runs from any folder.
kubectl apply -f "$(dirname "$0")/nodeclass.yaml"

# 5. Let Karpenter's 15-minute registration timeout pass: it deletes the stuck NodeClaims,
#    terminates their instances and launches new ones from the fixed user data. (In an
#    incident you would not wait: kubectl delete nodeclaim each one with no NODE.)
karplab time skip 15m
kubectl wait --for=condition=Ready pods -n ziba -l app.kubernetes.io/name=ziba-render-worker --timeout=3m
kubectl get pods -n ziba -o wide
