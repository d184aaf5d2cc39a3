package labs

import (
	"strings"
	"testing"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/solutions"
)

func TestSolutionsNameTheLabsAccount(t *testing.T) {
	data, err := solutions.FS.ReadFile("happy-path/nodepool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := forAccount(data, cluster.DefaultAccount()); string(got) != string(data) {
		t.Error("the course's account changed the course's manifest")
	}
	acct, err := cluster.NewAccount("us-east-1", nil, "prod-use1")
	if err != nil {
		t.Fatal(err)
	}
	got := string(forAccount(data, acct))
	for _, want := range []string{
		`values: ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"]`,
		"role: KarpenterNodeRole-prod-use1", "karpenter.sh/discovery: prod-use1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the happy path's solution for us-east-1 lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "eu-west-2") || strings.Contains(got, "ziba-production") {
		t.Errorf("the solution for us-east-1 still names the course's account:\n%s", got)
	}
}
