package fakeec2_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestIntegrationConcurrentClients launches, tags, describes and terminates from many
// clients at once, then checks that the books balance (unique IDs and addresses, one
// ledger entry per instance and volume) before and after a restart.
func TestIntegrationConcurrentClients(t *testing.T) {
	e := newEnv(t, func(o *fakeec2.Options) { o.StateDir = t.TempDir() })
	subnets, groups, amd64, _ := e.discover()
	e.createTemplate("conc", amd64, groups, true, ec2types.LaunchTemplateHttpTokensStateRequired)
	const workers, rounds = 16, 6
	var mu sync.Mutex
	launched := map[string]bool{}
	var terminated []string
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*4)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := newClient(t, e.url, fmt.Sprintf("AKIAWORKER%02d", w))
			for r := 0; r < rounds; r++ {
				out, err := e.fleet(c, "conc", []string{"spot", "on-demand"}[r%2], []ec2types.FleetLaunchTemplateOverridesRequest{
					override("m5.large", subnets[w%3]), override("c6i.large", subnets[(w+1)%3])},
					[]ec2types.Tag{{Key: aws.String("worker"), Value: aws.String(fmt.Sprint(w))}})
				if err != nil {
					errs <- err
					return
				}
				id := out.Instances[0].InstanceIds[0]
				mu.Lock()
				launched[id] = true
				mu.Unlock()
				if _, err := c.CreateTags(e.ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("round"), Value: aws.String(fmt.Sprint(r))}}}); err != nil {
					errs <- err
				}
				if _, err := c.DescribeInstances(e.ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{f("tag:worker", fmt.Sprint(w))}}); err != nil {
					errs <- err
				}
				if r%3 == 2 {
					if _, err := c.TerminateInstances(e.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
						errs <- err
					}
					mu.Lock()
					terminated = append(terminated, id)
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.clock.Advance(time.Minute)
	check := func(when string) {
		ins := e.describe()
		if len(ins) != workers*rounds || len(launched) != workers*rounds {
			t.Fatalf("%s: %d instances described, %d launched, want %d", when, len(ins), len(launched), workers*rounds)
		}
		ips := map[string]bool{}
		running := 0
		for _, in := range ins {
			if in.State.Name == ec2types.InstanceStateNameRunning {
				running++
				ip := aws.ToString(in.PrivateIpAddress)
				if ips[ip] {
					t.Errorf("%s: address %s given twice", when, ip)
				}
				ips[ip] = true
				if tagMap(in.Tags)["round"] == "" {
					t.Errorf("%s: %s lost its round tag", when, aws.ToString(in.InstanceId))
				}
			}
		}
		if running != workers*rounds-len(terminated) {
			t.Errorf("%s: %d running, want %d", when, running, workers*rounds-len(terminated))
		}
		bill, err := e.admin.Billing(e.ctx)
		e.must(err)
		if len(bill.Entries) != 2*workers*rounds {
			t.Errorf("%s: %d ledger entries, want one per instance and volume (%d)", when, len(bill.Entries), 2*workers*rounds)
		}
	}
	check("before restart")
	e.restart()
	check("after restart")
}

// TestIntegrationStockHTTPClientRetries uses the SDK's own HTTP client, whose connections
// a fast local server sometimes sees dropped (see NewHTTPClient): the SDK retries, and
// ClientToken idempotency keeps every launch single.
func TestIntegrationStockHTTPClientRetries(t *testing.T) {
	e := newEnv(t)
	subnets, _, amd64, _ := e.discover()
	c := newClient(t, e.url, karpenterKey, stockHTTP, func(o *ec2.Options) { o.RetryMaxAttempts = 10 })
	const n = 150
	for i := 0; i < n; i++ {
		if _, err := c.RunInstances(e.ctx, &ec2.RunInstancesInput{ImageId: aws.String(amd64), InstanceType: "m5.large",
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: subnets[i%3].SubnetId}); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(e.describe()); got != n {
		t.Errorf("%d instances after %d RunInstances calls", got, n)
	}
	replays, err := e.admin.Audit(e.ctx, trail.AuditQuery{Action: "RunInstances"})
	e.must(err)
	r := 0
	for _, ev := range replays {
		if ev.Replay {
			r++
		}
	}
	t.Logf("%d of %d RunInstances calls were SDK retries answered from the ClientToken record", r, n)
}
