package fakeec2_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// TestIntegrationAWSCLIBudgets sets the runaway-demand lab's cost alert the way a learner
// would, with every aws CLI on the machine (Debian's v2 first): create-budget with a
// forecast notification on a node pool's tag (one pool per CLI), then describe-budgets
// and describe-notifications-for-budget after a burst of launches in that pool.
func TestIntegrationAWSCLIBudgets(t *testing.T) {
	clis := karplabtest.AWSCLIs(t)
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	for _, cli := range clis {
		t.Run(cli.Name, func(t *testing.T) {
			const learner = "AKIACOURSELEARNER"
			name := "ziba-general-" + cli.Name
			run := func(args ...string) string {
				t.Helper()
				stdout, stderr, err := cli.Run(t, e.url, learner, args...)
				if err != nil {
					t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				return stdout
			}
			run("budgets", "create-budget", "--account-id", labAccount, "--budget", fmt.Sprintf(
				`{"BudgetName":%q,"BudgetLimit":{"Amount":"5","Unit":"USD"},"TimeUnit":"DAILY","BudgetType":"COST",`+
					`"CostFilters":{"TagKeyValue":["user:karpenter.sh/nodepool$%s"]}}`, name, name),
				"--notifications-with-subscribers",
				`[{"Notification":{"NotificationType":"FORECASTED","ComparisonOperator":"GREATER_THAN","Threshold":100,"ThresholdType":"PERCENTAGE"},`+
					`"Subscribers":[{"SubscriptionType":"EMAIL","Address":"platform@ziba.example"}]}]`)
			var notes struct {
				Notifications []struct{ NotificationType, NotificationState, ThresholdType string }
			}
			args := []string{"budgets", "describe-notifications-for-budget", "--account-id", labAccount, "--budget-name", name}
			mustJSON(t, run(args...), &notes)
			if len(notes.Notifications) != 1 || notes.Notifications[0].NotificationState != "OK" || notes.Notifications[0].ThresholdType != "PERCENTAGE" {
				t.Fatalf("before the launches: %+v", notes)
			}

			e.launch("m6i.large", amd64, subnets[0], 5, map[string]string{"karpenter.sh/nodepool": name})
			e.clock.Advance(time.Minute)
			mustJSON(t, run(args...), &notes)
			if len(notes.Notifications) != 1 || notes.Notifications[0].NotificationState != "ALARM" {
				t.Errorf("after five launches: %+v, want the forecast in ALARM", notes)
			}
			var list struct {
				Budgets []struct {
					BudgetName      string
					BudgetLimit     struct{ Amount, Unit string }
					CalculatedSpend struct{ ActualSpend, ForecastedSpend struct{ Amount, Unit string } }
				}
			}
			mustJSON(t, run("budgets", "describe-budgets", "--account-id", labAccount), &list)
			var found bool
			for _, b := range list.Budgets {
				if b.BudgetName == name {
					found = true
					forecast, err := strconv.ParseFloat(b.CalculatedSpend.ForecastedSpend.Amount, 64)
					if b.BudgetLimit.Amount != "5" || b.CalculatedSpend.ForecastedSpend.Unit != "USD" || err != nil || forecast <= 5 {
						t.Errorf("describe-budgets: %+v", b)
					}
				}
			}
			if !found {
				t.Errorf("describe-budgets lacks %s: %+v", name, list)
			}
			for _, tt := range []struct {
				args []string
				want string
			}{
				{[]string{"budgets", "describe-budget", "--account-id", labAccount, "--budget-name", "none"}, "NotFoundException"},
				{[]string{"budgets", "describe-budgets", "--account-id", "210987654321"}, "AccessDeniedException"},
			} {
				if _, stderr, err := cli.Run(t, e.url, learner, tt.args...); err == nil || !strings.Contains(stderr, tt.want) {
					t.Errorf("aws %s: %v %s, want %s", strings.Join(tt.args, " "), err, stderr, tt.want)
				}
			}
		})
	}
}
