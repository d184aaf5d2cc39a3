"""A cost alert through boto3's budgets client: create, paginate, error codes and
notification states as a Python script meets them. Prints one JSON object for
boto3_budgets_test.go."""
import json
import os

import boto3
from botocore.exceptions import ClientError

budgets = boto3.client("budgets", endpoint_url=os.environ["EC2_URL"], region_name="eu-west-2",
                       aws_access_key_id="AKIABOTO3BUDGETS", aws_secret_access_key="lab")
account = "123456789012"
out = {}


def code(call, **kw):
    try:
        call(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"]
    return None


def budget(name, amount):
    return {"BudgetName": name, "BudgetType": "COST", "TimeUnit": "DAILY",
            "BudgetLimit": {"Amount": amount, "Unit": "USD"},
            "CostFilters": {"TagKeyValue": ["user:karpenter.sh/nodepool$ziba-general"]}}


forecast = {"NotificationType": "FORECASTED", "ComparisonOperator": "GREATER_THAN", "Threshold": 100.0,
            "ThresholdType": "PERCENTAGE"}
email = [{"SubscriptionType": "EMAIL", "Address": "platform@ziba.example"}]
for i in range(3):
    budgets.create_budget(AccountId=account, Budget=budget(f"boto3-{i}", "5"),
                          NotificationsWithSubscribers=[{"Notification": forecast, "Subscribers": email}])
pages = budgets.get_paginator("describe_budgets").paginate(AccountId=account, PaginationConfig={"PageSize": 2})
out["pages"] = [[b["BudgetName"] for b in page["Budgets"]] for page in pages]
one = budgets.describe_budget(AccountId=account, BudgetName="boto3-0")["Budget"]
out["limit"] = one["BudgetLimit"]
out["actual"] = one["CalculatedSpend"]["ActualSpend"]
out["states"] = [n["NotificationState"] for n in
                 budgets.describe_notifications_for_budget(AccountId=account, BudgetName="boto3-0")["Notifications"]]
out["subscribers"] = budgets.describe_subscribers_for_notification(
    AccountId=account, BudgetName="boto3-0", Notification=forecast)["Subscribers"]
out["duplicate"] = code(budgets.create_budget, AccountId=account, Budget=budget("boto3-0", "5"))
out["missing"] = code(budgets.describe_budget, AccountId=account, BudgetName="none")
out["other_account"] = code(budgets.describe_budgets, AccountId="210987654321")
out["quarterly"] = code(budgets.create_budget, AccountId=account,
                        Budget=dict(budget("q", "5"), TimeUnit="QUARTERLY"))
budgets.update_budget(AccountId=account, NewBudget=budget("boto3-0", "7.50"))
out["updated"] = budgets.describe_budget(AccountId=account, BudgetName="boto3-0")["Budget"]["BudgetLimit"]["Amount"]
budgets.delete_budget(AccountId=account, BudgetName="boto3-0")
out["deleted"] = code(budgets.delete_budget, AccountId=account, BudgetName="boto3-0")
print(json.dumps(out))
