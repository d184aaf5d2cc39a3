// Package budgets emulates AWS Budgets (awsJson1_1, target prefix
// AWSBudgetServiceGateway, signing name "budgets"): CreateBudget, DescribeBudget,
// DescribeBudgets, UpdateBudget, DeleteBudget, CreateNotification, DeleteNotification,
// DescribeNotificationsForBudget and DescribeSubscribersForNotification, for COST budgets
// with a DAILY or MONTHLY time unit, a USD limit and, optionally, TagKeyValue cost filters.
//
// A budget's spend is the lab's billing ledger, read through Options.Cost: ActualSpend is
// what the matching resources accrued since the period began (UTC midnight, or the 1st of
// the month, on the emulator's clock) and ForecastedSpend adds what those billing now
// accrue by the period's end at their current rates. AWS refreshes spend a few times a day
// and forecasts from history; the lab is exact and immediate, so that an alert fires close
// to the moment spend crosses it. A notification goes to ALARM the first time its value
// (actual or forecast, against a share of the limit or an absolute amount) crosses the
// threshold in a period; each firing is kept in the budget's alert history (durable,
// bucket "budgets") and handed to Options.OnAlert, which fakeec2 records in its audit
// trail. Nothing is emailed or published to SNS: the lab has neither.
//
// model.go holds the state and its rules, eval.go the evaluation against the ledger;
// neither sees JSON. wire.go decodes requests, checks the account and the policy, calls
// the model and encodes the answers.
//
// This package imports only fakeec2/account and the standard library. It must not import
// fakeec2 itself, k8s.io, sigs.k8s.io, cluster or labs.
package budgets
