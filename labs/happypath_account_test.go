package labs

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karplab/karplab/cluster"
)

// TestIntegrationHappyPathInAnotherAccount runs the happy path in a lab started as
// `karplab start --region us-east-1 --cluster-name prod-use1`: six zones with AWS's zone
// IDs, subnets and a security group tagged karpenter.sh/discovery=prod-use1, the node
// role KarpenterNodeRole-prod-use1. The solution, written for that account, passes, and
// the nodes carry the account's region, zones and zone IDs.
func TestIntegrationHappyPathInAnotherAccount(t *testing.T) {
	ensurePool(t)
	t.Parallel()
	dir := t.TempDir()
	home := cluster.Home(filepath.Join(dir, "home"))
	if _, err := home.ChooseAccount("us-east-1", nil, "prod-use1"); err != nil {
		t.Fatal(err)
	}
	l, err := startLab(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.stop(); err != nil {
			t.Error(err)
		}
	})
	e := l.env
	if e.Account.Region != "us-east-1" || e.Account.ClusterName != "prod-use1" || len(e.Account.Zones) != 6 {
		t.Fatalf("the lab's account: %+v", e.Account)
	}
	subnets, err := e.EC2.DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{"prod-use1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var zoneIDs []string
	for _, s := range subnets.Subnets {
		zoneIDs = append(zoneIDs, aws.ToString(s.AvailabilityZone)+"="+aws.ToString(s.AvailabilityZoneId))
	}
	if got := strings.Join(zoneIDs, " "); got != "us-east-1a=use1-az1 us-east-1b=use1-az2 us-east-1c=use1-az3 us-east-1d=use1-az4 us-east-1e=use1-az5 us-east-1f=use1-az6" {
		t.Errorf("the discovery-tagged subnets: %s", got)
	}

	lab, _ := Get("happy-path")
	if err := lab.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	r, err := lab.Check(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Passed {
		t.Fatalf("the solution does not pass in us-east-1:\n%s", reportText(r))
	}
	nodes, err := e.Kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("Karpenter's nodes: %v, %v", nodes, err)
	}
	for _, n := range nodes.Items {
		zone, id := n.Labels["topology.kubernetes.io/zone"], n.Labels["topology.k8s.aws/zone-id"]
		if n.Labels["topology.kubernetes.io/region"] != "us-east-1" || !strings.HasPrefix(zone, "us-east-1") || !strings.HasPrefix(id, "use1-az") {
			t.Errorf("node %s: region %q, zone %q, zone ID %q", n.Name, n.Labels["topology.kubernetes.io/region"], zone, id)
		}
	}
}
