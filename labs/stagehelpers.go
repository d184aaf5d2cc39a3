package labs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What several labs' stagings do: wait for their checks, scale and roll out the render
// workers, copy a machine's tags without EC2's own, read an instance's state.

// waitChecks grades lab every few seconds until the named checks pass, printing their
// reasons as they change: staging waits on the same evidence the grader reads.
func (e *Env) waitChecks(ctx context.Context, out io.Writer, timeout time.Duration, lab string, ids ...string) error {
	l, err := Get(lab)
	if err != nil {
		return err
	}
	return poll(ctx, out, timeout, 3*time.Second, strings.Join(ids, ", "), func(ctx context.Context) (bool, string, error) {
		r, err := l.Check(ctx, e)
		if err != nil {
			return false, "", err
		}
		passed, status := checksPassed(r, ids)
		return passed, status, nil
	})
}

// checksPassed reports whether every check named in ids passed, and their reasons.
func checksPassed(r *Report, ids []string) (bool, string) {
	var status []string
	passed := 0
	for _, c := range r.Checks {
		if slices.Contains(ids, c.ID) {
			status = append(status, c.Reason)
			if c.Passed {
				passed++
			}
		}
	}
	return passed == len(ids), strings.Join(status, "; ")
}

// scaleDeployment sets a Deployment's replicas, as kubectl scale does.
func (e *Env) scaleDeployment(ctx context.Context, out io.Writer, ns, name string, replicas int32) error {
	_, err := e.Kube.AppsV1().Deployments(ns).UpdateScale(ctx, name, &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       autoscalingv1.ScaleSpec{Replicas: replicas},
	}, metav1.UpdateOptions{FieldManager: fieldManager})
	if err != nil {
		return fmt.Errorf("scaling deployment %s/%s: %w", ns, name, err)
	}
	fmt.Fprintf(out, " scaled deployment %s/%s to %d replicas\n", ns, name, replicas)
	return nil
}

// rolledOut reports whether a Deployment runs exactly its replicas, all of its latest
// template and available, with no old pod left.
func (e *Env) rolledOut(ctx context.Context, ns, name string) (bool, string, error) {
	d, err := e.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("reading deployment %s/%s: %w", ns, name, err)
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	status := fmt.Sprintf("deployment %s: %d of %d updated, %d available, %d pods", name, st.UpdatedReplicas, want, st.AvailableReplicas, st.Replicas)
	done := st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want
	if done {
		// Pods of an old ReplicaSet may still be terminating.
		pods, err := e.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
		if err != nil {
			return false, "", err
		}
		done = len(pods.Items) == int(want)
	}
	return done, status, nil
}

// waitRolledOut waits until rolledOut holds.
func (e *Env) waitRolledOut(ctx context.Context, out io.Writer, timeout time.Duration, ns, name string) error {
	return waitFor(ctx, out, timeout, "deployment "+name+" rolled out", func(ctx context.Context) (bool, string, error) {
		return e.rolledOut(ctx, ns, name)
	})
}

// withoutSystemTags drops EC2's own tags (aws:ec2:fleet-id, aws:ec2launchtemplate:...):
// copying them into a TagSpecification is refused, as on AWS.
func withoutSystemTags(tags []ec2types.Tag) []ec2types.Tag {
	var out []ec2types.Tag
	for _, t := range tags {
		if !strings.HasPrefix(aws.ToString(t.Key), "aws:") {
			out = append(out, t)
		}
	}
	return out
}

// instanceState is an instance's state name as EC2 describes it ("" if unknown).
func instanceState(ctx context.Context, c *ec2.Client, id string) (string, error) {
	desc, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		return "", err
	}
	for _, r := range desc.Reservations {
		for _, in := range r.Instances {
			if in.State != nil {
				return string(in.State.Name), nil
			}
		}
	}
	return "", nil
}
