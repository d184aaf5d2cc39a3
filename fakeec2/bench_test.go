package fakeec2_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/fakeec2"
)

// The benchmarks size themselves (make bench runs -benchtime 1x): each runs a fixed
// amount of work through the real SDK client against a persisted emulator on a loopback
// listener, and reports latency percentiles or throughput with b.ReportMetric.

type benchEnv struct {
	srv    *fakeec2.Server
	url    string
	client *ec2.Client
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	srv, err := fakeec2.New(fakeec2.Options{StateDir: b.TempDir(), BootDelay: -1, ShutdownDelay: -1})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { srv.Close() })
	url := "http://" + l.Addr().String()
	return &benchEnv{srv: srv, url: url, client: newClient(b, url, karpenterKey)}
}

func (be *benchEnv) amiAndSubnets(b *testing.B) (string, []ec2types.Subnet) {
	ctx := context.Background()
	imgs, err := be.client.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{f("name", "amazon-eks-node-al2023-x86_64-standard-1.37-*")}})
	if err != nil {
		b.Fatal(err)
	}
	sn, err := be.client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil {
		b.Fatal(err)
	}
	return aws.ToString(imgs.Images[0].ImageId), sn.Subnets
}

// seed launches n instances in batches of 1000, one nodepool tag value per 100 instances.
func (be *benchEnv) seed(b *testing.B, n int) {
	b.Helper()
	ami, subnets := be.amiAndSubnets(b)
	for i := 0; i < n; i += 1000 {
		batch := min(1000, n-i)
		// RunInstances tags a whole batch alike; retag per 100 below.
		out, err := be.client.RunInstances(context.Background(), &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: "m6i.large",
			MinCount: aws.Int32(int32(batch)), MaxCount: aws.Int32(int32(batch)), SubnetId: subnets[(i/1000)%3].SubnetId,
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{
				{Key: aws.String("application"), Value: aws.String("ziba")}}}}})
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < batch; j += 100 {
			var ids []string
			for _, in := range out.Instances[j:min(j+100, batch)] {
				ids = append(ids, aws.ToString(in.InstanceId))
			}
			pool := fmt.Sprintf("pool-%03d", (i+j)/100)
			if _, err := be.client.CreateTags(context.Background(), &ec2.CreateTagsInput{Resources: ids,
				Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String(pool)}}}); err != nil {
				b.Fatal(err)
			}
			for k := 0; k < len(ids); k += 10 {
				group := fmt.Sprintf("group-%04d", (i+j+k)/10)
				if _, err := be.client.CreateTags(context.Background(), &ec2.CreateTagsInput{Resources: ids[k:min(k+10, len(ids))],
					Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim-group"), Value: aws.String(group)}}}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

func percentile(d []time.Duration, p float64) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
}

// BenchmarkDescribeInstancesTagFilter10k: DescribeInstances with a tag filter over 10,000
// instances, as `aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,...`
// does. match=100 selects one nodepool (100 instances), match=10 one group of 10.
// p50-ms/p99-ms are end to end through the SDK (its XML decoding of ~3.5 KB per instance
// is most of it); server-p50-ms is the emulator alone (ServeHTTP: parse, filter, encode).
// Target: p50 < 20 ms.
func BenchmarkDescribeInstancesTagFilter10k(b *testing.B) {
	be := newBenchEnv(b)
	be.seed(b, 10000)
	for _, tc := range []struct {
		name   string
		key    string
		value  func(i int) string
		expect int
	}{
		{"match=100", "karpenter.sh/nodepool", func(i int) string { return fmt.Sprintf("pool-%03d", i%100) }, 100},
		{"match=10", "karpenter.sh/nodeclaim-group", func(i int) string { return fmt.Sprintf("group-%04d", (i*37)%1000) }, 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const calls = 200
			for n := 0; n < b.N; n++ {
				var lat, server []time.Duration
				for i := 0; i < calls; i++ {
					start := time.Now()
					out, err := be.client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{
						Filters: []ec2types.Filter{f("tag:"+tc.key, tc.value(i)), f("instance-state-name", "running")}})
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
					if got := len(out.Reservations[0].Instances); got != tc.expect {
						b.Fatalf("filter matched %d instances, want %d", got, tc.expect)
					}
					form := url.Values{"Action": {"DescribeInstances"}, "Filter.1.Name": {"tag:" + tc.key},
						"Filter.1.Value.1": {tc.value(i)}, "Filter.2.Name": {"instance-state-name"}, "Filter.2.Value.1": {"running"}}
					req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					rec := httptest.NewRecorder()
					start = time.Now()
					be.srv.ServeHTTP(rec, req)
					server = append(server, time.Since(start))
					if rec.Code != http.StatusOK {
						b.Fatalf("HTTP %d", rec.Code)
					}
				}
				b.ReportMetric(percentile(lat, 0.50), "p50-ms")
				b.ReportMetric(percentile(lat, 0.99), "p99-ms")
				b.ReportMetric(percentile(server, 0.50), "server-p50-ms")
			}
		})
	}
}

// BenchmarkCreateFleetLatency: one instant CreateFleet (1 instance, 12 overrides, state
// written to disk before the answer), as Karpenter launches a node.
func BenchmarkCreateFleetLatency(b *testing.B) {
	be := newBenchEnv(b)
	ami, subnets := be.amiAndSubnets(b)
	ctx := context.Background()
	if _, err := be.client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("bench"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami)}}); err != nil {
		b.Fatal(err)
	}
	var overrides []ec2types.FleetLaunchTemplateOverridesRequest
	for _, typ := range []string{"m6i.large", "m6i.xlarge", "c6i.large", "c6i.xlarge"} {
		for _, sn := range subnets {
			overrides = append(overrides, override(typ, sn))
		}
	}
	const calls = 100
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var lat []time.Duration
		for i := 0; i < calls; i++ {
			start := time.Now()
			out, err := be.client.CreateFleet(ctx, &ec2.CreateFleetInput{Type: ec2types.FleetTypeInstant,
				LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
					LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String("bench"), Version: aws.String("$Latest")},
					Overrides:                   overrides}},
				TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: "spot"},
				TagSpecifications:           []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: seedTags}}})
			if err != nil || len(out.Instances) != 1 {
				b.Fatalf("CreateFleet: %v %+v", err, out)
			}
			lat = append(lat, time.Since(start))
		}
		b.ReportMetric(percentile(lat, 0.50), "p50-ms")
		b.ReportMetric(percentile(lat, 0.99), "p99-ms")
	}
}

// BenchmarkConcurrentClients50: 50 clients for 3 seconds against 1,000 instances, a
// Karpenter-like read mix (DescribeInstances by ID and by tag, DescribeSubnets,
// DescribeInstanceTypes page) plus, in the "mixed" case, one CreateTags in ten (durable
// writes). Target: > 2,000 requests/s on 2 cores (client and server share them).
func BenchmarkConcurrentClients50(b *testing.B) {
	for _, writes := range []bool{false, true} {
		name := "reads"
		if writes {
			name = "mixed"
		}
		b.Run(name, func(b *testing.B) {
			be := newBenchEnv(b)
			be.seed(b, 1000)
			ids := be.instanceIDs(b)
			ctx := context.Background()
			runClients(b, func(c, i int) error {
				id := ids[(c*7919+i*31)%len(ids)]
				var err error
				switch {
				case writes && i%10 == 0:
					_, err = be.client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id},
						Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/registered"), Value: aws.String("true")}}})
				case i%4 == 1:
					_, err = be.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
						f("tag:karpenter.sh/nodepool", fmt.Sprintf("pool-%03d", i%10)), f("instance-type", "c6i.large")}})
				case i%4 == 2:
					_, err = be.client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{f("tag:karpenter.sh/discovery", "ziba-production")}})
				default:
					_, err = be.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
				}
				return err
			})
		})
	}
}

// BenchmarkConcurrentRawHTTP50: the same read mix from 50 plain net/http clients (form
// bodies, no SDK signing or XML decoding), for the emulator's own capacity.
func BenchmarkConcurrentRawHTTP50(b *testing.B) {
	be := newBenchEnv(b)
	be.seed(b, 1000)
	ids := be.instanceIDs(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	runClients(b, func(c, i int) error {
		var form url.Values
		switch i % 4 {
		case 1:
			form = url.Values{"Action": {"DescribeInstances"}, "Filter.1.Name": {"tag:karpenter.sh/nodepool"},
				"Filter.1.Value.1": {fmt.Sprintf("pool-%03d", i%10)}, "Filter.2.Name": {"instance-type"}, "Filter.2.Value.1": {"c6i.large"}}
		case 2:
			form = url.Values{"Action": {"DescribeSubnets"}, "Filter.1.Name": {"tag:karpenter.sh/discovery"}, "Filter.1.Value.1": {"ziba-production"}}
		default:
			form = url.Values{"Action": {"DescribeInstances"}, "InstanceId.1": {ids[(c*7919+i*31)%len(ids)]}}
		}
		form.Set("Version", "2016-11-15")
		resp, err := client.Post(be.url, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return err
	})
}

// instanceIDs lists every instance the emulator holds.
func (be *benchEnv) instanceIDs(b *testing.B) []string {
	out, err := be.client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			ids = append(ids, aws.ToString(in.InstanceId))
		}
	}
	return ids
}

// runClients runs call from 50 concurrent clients for 3 seconds per iteration (i counts
// client c's calls) and reports the request rate; any failed call fails the benchmark.
func runClients(b *testing.B, call func(c, i int) error) {
	const clients = 50
	const duration = 3 * time.Second
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var done, failed atomic.Int64
		deadline := time.Now().Add(duration)
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				for i := 0; time.Now().Before(deadline); i++ {
					if call(c, i) != nil {
						failed.Add(1)
					}
					done.Add(1)
				}
			}(c)
		}
		wg.Wait()
		if f := failed.Load(); f > 0 {
			b.Errorf("%d of %d requests failed", f, done.Load())
		}
		b.ReportMetric(float64(done.Load())/duration.Seconds(), "req/s")
	}
}
