#!/bin/sh
# Reference solution of the runaway-demand lab, after kubectl apply -f nodepool.yaml from
# this directory (the pool bounded again): a cost alert on the pool's machines. AWS Budgets
# would email platform@ziba.dev; the lab records the alert in the audit trail instead.
# labs.runawayBudget is the same budget, set through the emulator's admin API.
set -eu

karplab ec2 budget set ziba-general --period monthly --limit 5 --alert 50% \
  --tag karpenter.sh/nodepool=ziba-general --email platform@ziba.dev

# The same budget as AWS Budgets describes it.
aws budgets describe-budget --account-id "$(aws sts get-caller-identity --query Account --output text)" \
  --budget-name ziba-general --query 'Budget.[BudgetName,TimeUnit,BudgetLimit.Amount,CostFilters]'
