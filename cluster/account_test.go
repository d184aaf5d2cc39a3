package cluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewAccount(t *testing.T) {
	for _, tc := range []struct {
		name, region, cluster string
		zones                 []string
		want                  Account
		wantErr               string
	}{
		{name: "the course's", want: Account{Region: "eu-west-2", Zones: []string{"eu-west-2a", "eu-west-2b", "eu-west-2c"},
			ClusterName: "karplab", DiscoveryTag: "ziba-production"}},
		{name: "us-east-1 with another cluster", region: "us-east-1", cluster: "prod-use1",
			want: Account{Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"},
				ClusterName: "prod-use1", DiscoveryTag: "prod-use1"}},
		{name: "some zones, by letter", region: "us-east-1", zones: []string{"c", "us-east-1a"},
			want: Account{Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1c"}, ClusterName: "karplab", DiscoveryTag: "ziba-production"}},
		{name: "unknown region", region: "eu-west-9", wantErr: `region "eu-west-9": the lab has data for ap-northeast-1`},
		{name: "zone the region lacks", zones: []string{"eu-west-2d"}, wantErr: `zone "eu-west-2d": eu-west-2 has eu-west-2a, eu-west-2b, eu-west-2c`},
		{name: "name too long", cluster: strings.Repeat("a", 64), wantErr: "at most 63 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewAccount(tc.region, tc.zones, tc.cluster)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChooseAccountKeepsTheHomes: the first start's choice is kept; a later start that
// names another is refused, one that names none gets the home's.
func TestChooseAccountKeepsTheHomes(t *testing.T) {
	h := Home(t.TempDir())
	first, err := h.ChooseAccount("us-east-1", nil, "prod-use1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.ChooseAccount("", nil, "")
	if err != nil || again.Region != "us-east-1" || again.ClusterName != "prod-use1" || len(again.Zones) != 6 {
		t.Fatalf("second start: %+v, %v; want the home's %+v", again, err, first)
	}
	if _, err := h.ChooseAccount("eu-west-2", nil, ""); err == nil || !strings.Contains(err.Error(), "us-east-1") {
		t.Errorf("a start naming another region: %v, want a refusal naming the home's", err)
	}
	if got := EnvVars(h, "http://127.0.0.1:9"); !strings.Contains(strings.Join(got, " "), "AWS_REGION=us-east-1") {
		t.Errorf("EnvVars %v, want the account's region", got)
	}
}
