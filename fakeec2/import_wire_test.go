package fakeec2_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/karplab/karplab/fakeec2"
)

// Nothing an import accepts breaks the account's wire: a captured account with fields left
// out at random (a bundle of pasted manifests carries little) is either refused, or every
// Describe* the provider and the kubelet call then deserialises in aws-sdk-go-v2. A Node
// without creationTimestamp once gave its instance an empty launchTime, and every
// DescribeInstances of the account failed to parse.
func TestImportNeverBreaksTheWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 2227))
	refused, imported := 0, 0
	for i := range 40 {
		imp := capturedAccount(t0.Add(-48 * time.Hour))
		var dropped []string
		for range 1 + rng.IntN(3) {
			dropped = append(dropped, dropField(rng, &imp))
		}
		t.Run(fmt.Sprintf("%d without %v", i, dropped), func(t *testing.T) {
			e := newEnv(t)
			if err := e.admin.Import(e.ctx, imp); err != nil {
				refused++
				return
			}
			imported++
			for _, call := range describeCalls(e.ec2) {
				if err := call.fn(e.ctx); err != nil {
					t.Errorf("imported without %v, %s fails: %v", dropped, call.name, err)
				}
			}
		})
	}
	t.Logf("%d imports refused, %d accepted and described", refused, imported)
	if refused == 0 || imported == 0 {
		t.Errorf("%d refused, %d accepted: the generator should make both", refused, imported)
	}
}

// dropField zeroes one field, chosen at random, of one record of imp, and names it.
func dropField(rng *rand.Rand, imp *fakeec2.Import) string {
	lists := []reflect.Value{reflect.ValueOf(&imp.VPCs).Elem(), reflect.ValueOf(&imp.Subnets).Elem(),
		reflect.ValueOf(&imp.SecurityGroups).Elem(), reflect.ValueOf(&imp.Images).Elem(), reflect.ValueOf(&imp.Instances).Elem()}
	l := lists[rng.IntN(len(lists))]
	rec := l.Index(rng.IntN(l.Len()))
	f := rng.IntN(rec.NumField())
	rec.Field(f).SetZero()
	return rec.Type().Name() + "." + rec.Type().Field(f).Name
}

type describeCall struct {
	name string
	fn   func(context.Context) error
}

// describeCalls are the Describe* calls karpenter-provider-aws and the simulated kubelet make.
func describeCalls(c *ec2.Client) []describeCall {
	return []describeCall{
		{"DescribeInstances", func(ctx context.Context) error {
			_, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
			return err
		}},
		{"DescribeSubnets", func(ctx context.Context) error {
			_, err := c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
			return err
		}},
		{"DescribeSecurityGroups", func(ctx context.Context) error {
			_, err := c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
			return err
		}},
		{"DescribeImages", func(ctx context.Context) error {
			_, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{})
			return err
		}},
		{"DescribeVolumes", func(ctx context.Context) error {
			_, err := c.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{})
			return err
		}},
		{"DescribeNetworkInterfaces", func(ctx context.Context) error {
			_, err := c.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{})
			return err
		}},
		{"DescribeVpcs", func(ctx context.Context) error { _, err := c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{}); return err }},
		{"DescribeInstanceStatus", func(ctx context.Context) error {
			_, err := c.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{IncludeAllInstances: new(true)})
			return err
		}},
	}
}
