package labs

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/labs/evidence"
)

// TestIntegrationProviderHandlesEachMessage rehearses, beside the spot interruption the
// interruption lab grades, every other message the real provider reads from its queue:
//   - a rebalance recommendation: Karpenter records it on the node and does nothing more;
//   - an AWS Health scheduled change (instance retirement): it replaces the node now;
//   - a person stopping an instance: the state change makes it replace the node.
func TestIntegrationProviderHandlesEachMessage(t *testing.T) {
	e := freshLab(t)
	ctx, out := t.Context(), testOut(t)
	// Three spread render workers on three spot machines.
	if err := e.ApplySolution(ctx, interruptionLab, out); err != nil {
		t.Fatal(err)
	}
	if err := e.waitRolledOut(ctx, out, 2*time.Minute, zibaNamespace, renderWorker); err != nil {
		t.Fatal(err)
	}
	claims := liveClaims(t, e)
	if len(claims) < 2 {
		t.Fatalf("%d NodeClaims, want one per zone: %v", len(claims), claims)
	}
	rebalanced, retired := claims[0], claims[1]

	if _, err := e.Admin.RaiseEvent(ctx, fakeec2.EventRebalance, rebalanced.instance); err != nil {
		t.Fatal(err)
	}
	waitNodeEvent(t, e, out, rebalanced.node, "SpotRebalanceRecommendation")
	// Karpenter acts on a rebalance by recording it, not by draining: once it has deleted
	// the message, it has done all it will do.
	waitQueueDrained(t, e, out)
	if c, ok := claimNamed(t, e, rebalanced.name); !ok || c.deleting {
		t.Errorf("after a rebalance recommendation NodeClaim %s exists %t, deleting %t; Karpenter should leave it", rebalanced.name, ok, c.deleting)
	}

	// Spot is gone from now on, so the replacement of the retired machine is on-demand: a
	// machine a person can stop (one-time spot instances cannot be stopped).
	exhaustSpot(t, e)
	if _, err := e.Admin.RaiseEvent(ctx, fakeec2.EventScheduledChange, retired.instance); err != nil {
		t.Fatal(err)
	}
	waitNodeEvent(t, e, out, retired.node, "InstanceUnhealthy")
	waitClaimGone(t, e, out, retired.name)
	if err := e.waitRolledOut(ctx, out, 2*time.Minute, zibaNamespace, renderWorker); err != nil {
		t.Fatal(err)
	}

	var stopped claimRef
	for _, c := range liveClaims(t, e) {
		if c.capacityType == "on-demand" {
			stopped = c
		}
	}
	if stopped.name == "" {
		t.Fatalf("no on-demand NodeClaim replaced %s: %v", retired.name, liveClaims(t, e))
	}
	if _, err := e.EC2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{stopped.instance}}); err != nil {
		t.Fatal(err)
	}
	waitNodeEvent(t, e, out, stopped.node, "InstanceStopping")
	// A stopped machine's kubelet never confirms its pods are gone, so Karpenter lets the
	// node go only when they are a minute past their 30 s grace (stuck terminating), on its
	// clock: skip those 90 s of lab time, as the course's long waits are skipped.
	if err := e.skipTime(t.Context(), out, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	waitClaimGone(t, e, out, stopped.name)
	if err := e.waitRolledOut(ctx, out, 2*time.Minute, zibaNamespace, renderWorker); err != nil {
		t.Fatal(err)
	}
}

type claimRef struct {
	name, node, instance, capacityType string
	deleting                           bool
}

func claimFrom(u unstructured.Unstructured) claimRef {
	node, _, _ := unstructured.NestedString(u.Object, "status", "nodeName")
	pid, _, _ := unstructured.NestedString(u.Object, "status", "providerID")
	return claimRef{name: u.GetName(), node: node, instance: evidence.InstanceIDFromProviderID(pid),
		capacityType: u.GetLabels()["karpenter.sh/capacity-type"], deleting: u.GetDeletionTimestamp() != nil}
}

// liveClaims are the NodeClaims with a registered node that are not being deleted.
func liveClaims(t *testing.T, e *Env) []claimRef {
	t.Helper()
	list, err := e.Dynamic.Resource(nodeClaimsGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []claimRef
	for _, u := range list.Items {
		if c := claimFrom(u); c.node != "" && c.instance != "" && !c.deleting {
			out = append(out, c)
		}
	}
	return out
}

func claimNamed(t *testing.T, e *Env, name string) (claimRef, bool) {
	t.Helper()
	u, err := e.Dynamic.Resource(nodeClaimsGVR).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return claimRef{}, false
	}
	return claimFrom(*u), true
}

func exhaustSpot(t *testing.T, e *Env) {
	t.Helper()
	health, err := e.Admin.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range health.Zones {
		if _, err := e.Admin.SetFault(t.Context(), fakeec2.Fault{Kind: fakeec2.FaultInsufficientCapacity, Zone: zone, CapacityType: "spot"}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitNodeEvent waits for Karpenter's event with reason on the named Node.
func waitNodeEvent(t *testing.T, e *Env, out io.Writer, node, reason string) {
	t.Helper()
	err := waitFor(t.Context(), out, time.Minute, reason+" on node "+node, func(ctx context.Context) (bool, string, error) {
		evs, err := e.Kube.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node})
		if err != nil {
			return false, "", err
		}
		for _, ev := range evs.Items {
			if ev.Reason == reason && ev.Type != "" && ev.Source.Component == "karpenter" {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d events on the node, none %s", len(evs.Items), reason), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitQueueDrained waits until the interruption queue holds no message, visible or
// in flight: Karpenter deletes a message only after it has acted on it.
func waitQueueDrained(t *testing.T, e *Env, out io.Writer) {
	t.Helper()
	client := sqs.New(sqs.Options{Region: e.Account.Region, BaseEndpoint: aws.String(e.EC2Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(accesskeys.Grader, accesskeys.DummySecret, "")})
	url, err := client.GetQueueUrl(t.Context(), &sqs.GetQueueUrlInput{QueueName: aws.String(e.Account.ClusterName)})
	if err != nil {
		t.Fatal(err)
	}
	err = waitFor(t.Context(), out, time.Minute, "the interruption queue drained", func(ctx context.Context) (bool, string, error) {
		got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: url.QueueUrl,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			return false, "", err
		}
		visible, inFlight := got.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)], got.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)]
		return visible == "0" && inFlight == "0", fmt.Sprintf("%s messages waiting, %s taken and not yet deleted", visible, inFlight), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitClaimGone waits until the NodeClaim is deleted (Karpenter replaced and terminated it).
func waitClaimGone(t *testing.T, e *Env, out io.Writer, name string) {
	t.Helper()
	err := waitFor(t.Context(), out, 2*time.Minute, "NodeClaim "+name+" deleted", func(ctx context.Context) (bool, string, error) {
		c, ok := claimNamed(t, e, name)
		return !ok, fmt.Sprintf("NodeClaim %s deleting %t", name, c.deleting), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
