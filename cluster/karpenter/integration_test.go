package karpenter_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/karplab/karplab/cluster/karpenter"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/trail"
)

// TestIntegrationSeedScaleUpAndConsolidation is the course's happy path: the seed NodePool
// and EC2NodeClass applied verbatim, ten ziba-render-worker pods that fit no node, Karpenter
// launching EC2 machines for them through the emulator, the simulated kubelet registering
// them, the pods running; then scale to zero and consolidation within the 20% budget
// until every instance, volume and ENI is gone and nothing is billed any more.
func TestIntegrationSeedScaleUpAndConsolidation(t *testing.T) {
	e := lab(t)
	ctx := context.Background()
	e.applySeed(t)
	t.Cleanup(func() { e.resetCluster(t, "ziba") })
	class := &awsv1.EC2NodeClass{}
	if err := e.client.Get(ctx, client.ObjectKey{Name: "ziba-general"}, class); err != nil {
		t.Fatal(err)
	}

	limits := e.sampleLimits(t)
	began := time.Now()
	// 6Gi each: no node exists, and a large (8GiB, about 6.7Gi allocatable) holds one at most.
	// Spread over the three zones, as a production worker is: that makes several machines,
	// so the scale-down below has a disruption budget to respect.
	worker := deployment("ziba", "ziba-render-worker", 10, "1", "6Gi", nil)
	worker.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: worker.Spec.Selector,
	}}
	e.createDeployment(t, worker)
	took := e.waitRunning(t, "ziba", "ziba-render-worker", 10, 90*time.Second)
	t.Logf("10 ziba-render-worker pods Running %s after the Deployment was created", took.Round(time.Millisecond))
	limits.check(t)

	claims := e.nodeClaims(t)
	if len(claims) == 0 {
		t.Fatal("pods run but there are no NodeClaims")
	}
	subnets := map[string]string{}
	for _, s := range class.Status.Subnets {
		subnets[s.ID] = s.Zone
	}
	sgs := map[string]bool{}
	for _, g := range class.Status.SecurityGroups {
		sgs[g.ID] = true
	}
	live := e.liveInstances(t)
	nodes, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: karpv1.NodePoolLabelKey + "=ziba-general"})
	if err != nil {
		t.Fatal(err)
	}
	// `kubectl get nodeclaims`, `kubectl get nodes -L karpenter.sh/nodepool,...` and
	// `aws ec2 describe-instances --filters Name=tag:karpenter.sh/nodepool,Values=ziba-general`
	// show the same machines.
	if len(claims) != len(live) || len(claims) != len(nodes.Items) {
		t.Errorf("%d NodeClaims, %d Nodes, %d instances tagged for ziba-general: want the same machines", len(claims), len(nodes.Items), len(live))
	}
	nodeByProvider := map[string]corev1.Node{}
	for _, n := range nodes.Items {
		nodeByProvider[n.Spec.ProviderID] = n
	}
	var ids []string
	for _, nc := range claims {
		id := instanceID(t, nc.Status.ProviderID)
		ids = append(ids, id)
		inst, ok := live[id]
		if !ok {
			t.Errorf("NodeClaim %s: provider ID %s names no live ziba-general instance", nc.Name, nc.Status.ProviderID)
			continue
		}
		if inst.State.Name != ec2types.InstanceStateNameRunning {
			t.Errorf("instance %s is %s, want running", id, inst.State.Name)
		}
		node, ok := nodeByProvider[nc.Status.ProviderID]
		if !ok || node.Name != nc.Status.NodeName || node.Name != aws.ToString(inst.PrivateDnsName) {
			t.Errorf("NodeClaim %s: Node %q, instance private DNS %q, want one Node named after the instance", nc.Name, nc.Status.NodeName, aws.ToString(inst.PrivateDnsName))
		}
		for _, k := range []string{corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, karpv1.CapacityTypeLabelKey} {
			if node.Labels[k] != nc.Labels[k] {
				t.Errorf("Node %s label %s=%q, NodeClaim says %q", node.Name, k, node.Labels[k], nc.Labels[k])
			}
		}
		if node.Labels[corev1.LabelInstanceTypeStable] != string(inst.InstanceType) || node.Labels["workload.ziba.dev/tier"] != "general" {
			t.Errorf("Node %s labels %v, want instance type %s and the NodePool's template label", node.Name, node.Labels, inst.InstanceType)
		}
		if subnets[aws.ToString(inst.SubnetId)] != aws.ToString(inst.Placement.AvailabilityZone) {
			t.Errorf("instance %s in subnet %s, not an EC2NodeClass subnet of its zone", id, aws.ToString(inst.SubnetId))
		}
		for _, g := range inst.SecurityGroups {
			if !sgs[aws.ToString(g.GroupId)] {
				t.Errorf("instance %s has security group %s, not the EC2NodeClass's", id, aws.ToString(g.GroupId))
			}
		}
		e.checkTags(t, id, nc)
		e.checkVolumeAndENI(t, id)
	}

	// Scale to zero with a short consolidateAfter: the seed's 5m would make the test wait
	// five minutes per round for nothing but the clock.
	e.setConsolidateAfter(t, "5s")
	budget := int(math.Ceil(float64(len(claims)) * 0.2)) // nodes: "20%", rounded up as Karpenter does
	e.scale(t, "ziba", "ziba-render-worker", 0)
	maxDisrupting := 0
	took = waitFor(t, 4*time.Minute, 100*time.Millisecond, "NodeClaims consolidated away", func() (bool, string) {
		current := e.nodeClaims(t)
		disrupting := 0
		for _, nc := range current {
			if nc.DeletionTimestamp != nil {
				disrupting++
			}
		}
		maxDisrupting = max(maxDisrupting, disrupting)
		return len(current) == 0, fmt.Sprintf("%d NodeClaims, %d being deleted", len(current), disrupting)
	})
	t.Logf("%d nodes consolidated in %s, at most %d at a time (budget %d)", len(claims), took.Round(time.Millisecond), maxDisrupting, budget)
	if maxDisrupting > budget {
		t.Errorf("%d nodes disrupted at once, the 20%% budget of %d nodes allows %d", maxDisrupting, len(claims), budget)
	}
	waitFor(t, time.Minute, 250*time.Millisecond, "instances terminated", func() (bool, string) {
		out, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
		if err != nil {
			return false, err.Error()
		}
		for _, r := range out.Reservations {
			for _, i := range r.Instances {
				if i.State.Name != ec2types.InstanceStateNameTerminated {
					return false, fmt.Sprintf("%s is %s", aws.ToString(i.InstanceId), i.State.Name)
				}
			}
		}
		return true, ""
	})
	vols, err := e.ec2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{"ziba-general"}}}})
	if err != nil || len(vols.Volumes) != 0 {
		t.Errorf("volumes after consolidation: %v, %d left", err, len(vols.Volumes))
	}
	enis, err := e.ec2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{"ziba-general"}}}})
	if err != nil || len(enis.NetworkInterfaces) != 0 {
		t.Errorf("ENIs after consolidation: %v, %d left", err, len(enis.NetworkInterfaces))
	}
	billing, err := e.admin.Billing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	billed := map[string]bool{}
	for _, id := range ids {
		billed[id] = true
	}
	for _, entry := range billing.Entries {
		if (billed[entry.ResourceID] || billed[entry.InstanceID]) && entry.Stopped == nil {
			t.Errorf("%s %s still billed", entry.ResourceType, entry.ResourceID)
		}
	}
	t.Logf("%d launches, %.4f USD accrued in the emulator (began %s)", len(ids), billing.TotalUSD, began.Format(time.TimeOnly))
}

// checkTags: the instance carries the provider's tags, the EC2NodeClass's cost tags, and
// (once registered) Name = the Node's name.
func (e *testEnv) checkTags(t *testing.T, id string, nc karpv1.NodeClaim) {
	t.Helper()
	want := map[string]string{
		"karpenter.sh/nodepool":          "ziba-general",
		"karpenter.sh/nodeclaim":         nc.Name,
		"karpenter.k8s.aws/ec2nodeclass": "ziba-general",
		"kubernetes.io/cluster/karplab":  "owned",
		"eks:eks-cluster-name":           "karplab",
		"application":                    "ziba",
		"environment":                    "production",
		"owner":                          "platform",
		"Name":                           nc.Status.NodeName,
	}
	waitFor(t, 20*time.Second, 250*time.Millisecond, "instance "+id+" tags", func() (bool, string) {
		out, err := e.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			return false, err.Error()
		}
		got := tags(out.Reservations[0].Instances[0].Tags)
		for k, v := range want {
			if got[k] != v {
				return false, fmt.Sprintf("tag %s=%q, want %q (all: %v)", k, got[k], v, got)
			}
		}
		return true, ""
	})
}

// checkVolumeAndENI: the seed's root volume (encrypted gp3, 80 GiB, deleted with the
// instance) and the primary ENI, both tagged for cost.
func (e *testEnv) checkVolumeAndENI(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	byInstance := []ec2types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{id}}}
	vols, err := e.ec2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{Filters: byInstance})
	if err != nil || len(vols.Volumes) != 1 {
		t.Errorf("instance %s volumes: %v, %d, want 1", id, err, len(vols.Volumes))
		return
	}
	v := vols.Volumes[0]
	if v.VolumeType != ec2types.VolumeTypeGp3 || aws.ToInt32(v.Size) != 80 || !aws.ToBool(v.Encrypted) ||
		len(v.Attachments) != 1 || !aws.ToBool(v.Attachments[0].DeleteOnTermination) {
		t.Errorf("instance %s root volume %s: %s %d GiB encrypted=%v attachments %+v, want gp3 80 GiB encrypted, deleted on termination",
			id, aws.ToString(v.VolumeId), v.VolumeType, aws.ToInt32(v.Size), aws.ToBool(v.Encrypted), v.Attachments)
	}
	if tags(v.Tags)["application"] != "ziba" {
		t.Errorf("volume %s tags %v lack the cost tags", aws.ToString(v.VolumeId), tags(v.Tags))
	}
	enis, err := e.ec2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{Filters: byInstance})
	if err != nil || len(enis.NetworkInterfaces) != 1 {
		t.Errorf("instance %s ENIs: %v, %d, want 1", id, err, len(enis.NetworkInterfaces))
		return
	}
	if got := tags(enis.NetworkInterfaces[0].TagSet); got["karpenter.sh/nodepool"] != "ziba-general" || got["owner"] != "platform" {
		t.Errorf("ENI %s tags %v lack the NodePool and cost tags", aws.ToString(enis.NetworkInterfaces[0].NetworkInterfaceId), got)
	}
}

// TestIntegrationDeniedPods: pods the NodePool forbids get no NodeClaim and cause no
// CreateFleet; Karpenter's events on each pod say why.
func TestIntegrationDeniedPods(t *testing.T) {
	e := lab(t)
	ctx := context.Background()
	e.applySeed(t)
	t.Cleanup(func() { e.resetCluster(t, "ziba-denied") })
	e.namespace(t, "ziba-denied")
	since := time.Now()
	claimsBefore := len(e.nodeClaims(t))
	tests := []struct {
		name     string
		selector map[string]string
		cpu      string
		// why is what Karpenter's FailedScheduling event must mention.
		why string
	}{
		{name: "zone-2d", selector: map[string]string{corev1.LabelTopologyZone: "eu-west-2d"}, cpu: "1", why: "eu-west-2d"},
		{name: "category-p", selector: map[string]string{awsv1.LabelInstanceCategory: "p"}, cpu: "1", why: "instance-category"},
		// More CPU than the NodePool's limit of 200 (and than any instance type).
		{name: "over-limits", cpu: "201", why: "cpu"},
	}
	for _, tt := range tests {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ziba-denied", Name: tt.name},
			Spec: corev1.PodSpec{
				NodeSelector: tt.selector,
				Containers: []corev1.Container{{Name: "worker", Image: "registry.ziba.dev/render-worker:1.0",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.cpu)}}}},
			},
		}
		if _, err := e.kube.CoreV1().Pods("ziba-denied").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msg string
			waitFor(t, 60*time.Second, 500*time.Millisecond, "Karpenter's event on pod "+tt.name, func() (bool, string) {
				for _, ev := range e.karpenterEvents(t, "ziba-denied", tt.name) {
					if ev.Reason == "FailedScheduling" {
						msg = ev.Message
						return true, ""
					}
				}
				return false, "no FailedScheduling event from karpenter"
			})
			t.Logf("event: %s", msg)
			if !strings.Contains(msg, tt.why) {
				t.Errorf("event %q does not mention %q", msg, tt.why)
			}
			p, err := e.kube.CoreV1().Pods("ziba-denied").Get(ctx, tt.name, metav1.GetOptions{})
			if err != nil || p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
				t.Errorf("pod %s: node %q phase %s, want Pending and unbound", tt.name, p.Spec.NodeName, p.Status.Phase)
			}
		})
	}
	// A batch window more, then: nothing was launched for them.
	time.Sleep(12 * time.Second)
	if n := len(e.nodeClaims(t)); n != claimsBefore {
		t.Errorf("%d NodeClaims, want %d: a forbidden pod got a NodeClaim", n, claimsBefore)
	}
	if calls := e.karpenterCalls(t, "CreateFleet", since); len(calls) != 0 {
		t.Errorf("%d CreateFleet calls for forbidden pods, want none", len(calls))
	}
}

// TestIntegrationNodePoolLimits: more demand than the seed's cpu limit of 200 buys machines
// up to the limit and no further; the pod left over is told why.
func TestIntegrationNodePoolLimits(t *testing.T) {
	e := lab(t)
	e.applySeed(t)
	t.Cleanup(func() { e.resetCluster(t, "ziba-limits") })
	limits := e.sampleLimits(t)
	// 30 CPUs each needs a 32-vCPU machine per pod: seven would be 224 CPUs.
	e.createDeployment(t, deployment("ziba-limits", "ziba-batch", 7, "30", "8Gi", nil))
	e.waitRunning(t, "ziba-limits", "ziba-batch", 6, 90*time.Second)
	var pending string
	waitFor(t, 60*time.Second, 500*time.Millisecond, "the seventh pod's event", func() (bool, string) {
		list, err := e.kube.CoreV1().Pods("ziba-limits").List(context.Background(), metav1.ListOptions{FieldSelector: "status.phase=Pending"})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Sprintf("pending pods: %v %d", err, len(list.Items))
		}
		pending = list.Items[0].Name
		// Karpenter drops the instance types the remaining limits cannot pay for; a 30-CPU pod
		// fits a 32-vCPU type, so "no instance type has enough resources" is the limit speaking.
		for _, ev := range e.karpenterEvents(t, "ziba-limits", pending) {
			if ev.Reason == "FailedScheduling" && (strings.Contains(ev.Message, "exceed limits") || strings.Contains(ev.Message, "no instance type has enough resources")) {
				t.Logf("event: %s", ev.Message)
				return true, ""
			}
		}
		return false, "no FailedScheduling event about the pod's resources yet"
	})
	time.Sleep(5 * time.Second)
	limits.check(t)
	if p := e.pods(t, "ziba-limits", "ziba-batch"); p[corev1.PodRunning] != 6 || p[corev1.PodPending] != 1 {
		t.Errorf("pods by phase %v, want 6 Running and 1 Pending", p)
	}
}

// TestIntegrationKarpenterRestart kills the Karpenter child (as a crash would) while it
// provisions: the supervisor restarts it, the pods still run, and any instance launched
// but not recorded in a NodeClaim is garbage collected: a restart loses nothing.
func TestIntegrationKarpenterRestart(t *testing.T) {
	e := lab(t)
	e.applySeed(t)
	t.Cleanup(func() { e.resetCluster(t, "ziba-restart") })
	before := e.sup.Status()
	e.createDeployment(t, deployment("ziba-restart", "ziba-render-worker", 4, "1", "6Gi", nil))
	// Kill it as soon as it asked EC2 for the first machine, mid-launch.
	since := time.Now().Add(-time.Second)
	waitFor(t, 30*time.Second, 20*time.Millisecond, "the first CreateFleet", func() (bool, string) {
		return len(e.karpenterCalls(t, "CreateFleet", since)) > 0, "no CreateFleet yet"
	})
	e.sup.Restart()
	waitFor(t, 30*time.Second, 100*time.Millisecond, "a new Karpenter process", func() (bool, string) {
		st := e.sup.Status()
		return st.Running && st.Restarts > before.Restarts && st.PID != before.PID, fmt.Sprintf("%+v", st)
	})
	if err := e.waitKarpenterReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := e.sup.Status()
	if after.LastExit == nil || after.LastExit.Code != -1 {
		t.Errorf("last exit %+v, want the SIGKILL", after.LastExit)
	}
	took := e.waitRunning(t, "ziba-restart", "ziba-render-worker", 4, 90*time.Second)
	t.Logf("pods Running %s after the restart (%d restarts)", took.Round(time.Millisecond), after.Restarts)
	launched := 0
	for _, ev := range e.karpenterCalls(t, "CreateFleet", since) {
		for _, id := range ev.Created {
			if strings.HasPrefix(id, "i-") {
				launched++
			}
		}
	}
	defer func() {
		// More instances than NodeClaims: the killed process launched one it never recorded.
		t.Logf("%d instances launched around the kill, %d NodeClaims own instances after it", launched, len(e.nodeClaims(t)))
	}()
	// Every live instance belongs to a NodeClaim once the provider's collector had its chance:
	// it sweeps every 10s after a start and spares instances younger than 30s.
	waitFor(t, 2*time.Minute, time.Second, "no leaked instance", func() (bool, string) {
		owned := map[string]bool{}
		for _, nc := range e.nodeClaims(t) {
			if nc.Status.ProviderID != "" {
				owned[instanceID(t, nc.Status.ProviderID)] = true
			}
		}
		var leaked []string
		for id, inst := range e.liveInstances(t) {
			if !owned[id] && inst.State.Name != ec2types.InstanceStateNameShuttingDown {
				leaked = append(leaked, id)
			}
		}
		sort.Strings(leaked)
		return len(leaked) == 0, fmt.Sprintf("instances without a NodeClaim: %v", leaked)
	})
}

// TestIntegrationKWOKProvider runs Karpenter's stock kwok provider beside the real one (as
// `karplab start --provider kwok` does, for comparison): a KWOKNodeClass NodePool gets Nodes
// with no EC2 instance behind them, and the real provider launches nothing for it.
func TestIntegrationKWOKProvider(t *testing.T) {
	e := lab(t)
	ctx := context.Background()
	logFile := e.startKWOKProvider(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logTail(logFile, 40))
		}
		e.resetCluster(t, "ziba-kwok")
	})
	since := time.Now()
	e.createDeployment(t, deployment("ziba-kwok", "kwok-demo", 3, "1", "1Gi", map[string]string{karpv1.NodePoolLabelKey: "kwok"}))
	took := e.waitRunning(t, "ziba-kwok", "kwok-demo", 3, 90*time.Second)
	t.Logf("3 pods Running on kwok nodes %s after the Deployment was created", took.Round(time.Millisecond))
	pods, err := e.kube.CoreV1().Pods("ziba-kwok").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		node, err := e.kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil || !strings.HasPrefix(node.Spec.ProviderID, "kwok://") {
			t.Errorf("pod %s runs on %q (provider ID %q), want a kwok Node", p.Name, p.Spec.NodeName, node.Spec.ProviderID)
		}
	}
	if calls := e.karpenterCalls(t, "CreateFleet", since); len(calls) != 0 {
		t.Errorf("%d CreateFleet calls for the kwok NodePool, want none", len(calls))
	}
}

// TestIntegrationUnauthorized: when IAM denies the controller ec2:CreateFleet, the
// provider's DryRun validation catches it before any launch: the EC2NodeClass says
// ValidationSucceeded=False (CreateFleetAuthCheckFailed), no NodeClaim and no machine
// exists, and the audit trail keeps the denied DryRun. Once the policy allows it and the
// EC2NodeClass changes (the provider caches a validation for 30 minutes, keyed on the
// EC2NodeClass and its annotations), it is Ready and the pod runs.
func TestIntegrationUnauthorized(t *testing.T) {
	e := lab(t)
	ctx := context.Background()
	e.applySeed(t)
	allowed := authz.KarpenterControllerPolicy(karpenterKey)
	if err := e.admin.SetPolicy(ctx, authz.Policy{Statements: []authz.PolicyStatement{allowed, {
		Sid: "karpenter-may-not-launch", Callers: []string{karpenterKey}, DenyActions: []string{"CreateFleet"},
	}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.admin.SetPolicy(ctx, authz.Policy{Statements: []authz.PolicyStatement{allowed}})
		e.resetCluster(t, "ziba-denied-iam")
	})
	since := time.Now()
	e.revalidate(t, "denied")
	e.createDeployment(t, deployment("ziba-denied-iam", "ziba-render-worker", 1, "1", "6Gi", nil))
	waitFor(t, 60*time.Second, 250*time.Millisecond, "EC2NodeClass ValidationSucceeded=False (CreateFleetAuthCheckFailed)", func() (bool, string) {
		class := &awsv1.EC2NodeClass{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: "ziba-general"}, class); err != nil {
			return false, err.Error()
		}
		c := class.StatusConditions().Get(awsv1.ConditionTypeValidationSucceeded)
		if c == nil || !c.IsFalse() || c.Reason != "CreateFleetAuthCheckFailed" {
			return false, fmt.Sprintf("ValidationSucceeded %+v", c)
		}
		t.Logf("EC2NodeClass ValidationSucceeded=False %s: %s", c.Reason, c.Message)
		return true, ""
	})
	denied, err := e.admin.Audit(ctx, trail.AuditQuery{Caller: karpenterKey, Action: "CreateFleet", ErrorCode: "UnauthorizedOperation", Since: since})
	if err != nil || len(denied) == 0 {
		t.Fatalf("audit trail: %v, %d denied CreateFleet calls, want some", err, len(denied))
	}
	t.Logf("audit: %s denied: %s", denied[0].Action, denied[0].DenialReason)
	time.Sleep(5 * time.Second) // a batch window and more: still nothing launches
	if n := len(e.nodeClaims(t)); n != 0 {
		t.Errorf("%d NodeClaims while the EC2NodeClass is not valid, want none", n)
	}
	if live := e.liveInstances(t); len(live) != 0 {
		t.Errorf("%d instances exist while CreateFleet is denied", len(live))
	}
	if err := e.admin.SetPolicy(ctx, authz.Policy{Statements: []authz.PolicyStatement{allowed}}); err != nil {
		t.Fatal(err)
	}
	fixed := time.Now()
	e.revalidate(t, "allowed")
	e.waitRunning(t, "ziba-denied-iam", "ziba-render-worker", 1, 2*time.Minute)
	t.Logf("pod Running %s after the policy allowed CreateFleet", time.Since(fixed).Round(time.Millisecond))
}

// revalidate annotates the seed EC2NodeClass, which makes the provider validate it anew.
func (e *testEnv) revalidate(t testing.TB, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"karplab.dev/revalidate":%q}}}`, value)
	if _, err := e.dyn.Resource(nodeClassGVR).Patch(context.Background(), "ziba-general", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotating the EC2NodeClass: %v", err)
	}
}

// startKWOKProvider runs Karpenter's stock kwok provider, Ready, with a KWOKNodeClass and
// an on-demand NodePool "kwok"; it stops both at cleanup.
func (e *testEnv) startKWOKProvider(t testing.TB) (logFile string) {
	t.Helper()
	ctx := context.Background()
	health, _, err := freePorts()
	if err != nil {
		t.Fatal(err)
	}
	logFile = filepath.Join(e.dir, "karpenter-kwok.log")
	sup := &karpenter.Supervisor{
		Path:    os.Args[0],
		Args:    karpenter.Options{Provider: karpenter.ProviderKWOK, Kubeconfig: e.kubeconfig, HealthProbePort: health}.Args(),
		Env:     []string{childEnv + "=karpenter", "KUBECONFIG=" + e.kubeconfig},
		LogFile: logFile,
	}
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.dyn.Resource(nodePoolGVR).Delete(ctx, "kwok", metav1.DeleteOptions{})
		_ = sup.Stop(ctx)
	})
	if err := e.waitReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", health), logFile); err != nil {
		t.Fatal(err)
	}
	for gvr, obj := range map[schema.GroupVersionResource]string{
		{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}: `{"apiVersion":"karpenter.kwok.sh/v1alpha1","kind":"KWOKNodeClass","metadata":{"name":"default"}}`,
		nodePoolGVR: `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"kwok"},"spec":{"template":{"spec":{
			"nodeClassRef":{"group":"karpenter.kwok.sh","kind":"KWOKNodeClass","name":"default"},
			"requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]}]}}}}`,
	} {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(obj)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.dyn.Resource(gvr).Patch(ctx, u.GetName(), types.ApplyPatchType, []byte(obj), metav1.PatchOptions{FieldManager: "test", Force: new(true)}); err != nil {
			t.Fatalf("applying %s: %v", u.GetKind(), err)
		}
	}
	return logFile
}
