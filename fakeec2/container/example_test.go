package container_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/testcontainers/testcontainers-go"

	"github.com/karplab/karplab/fakeec2/container"
)

// A Go test of your own gets an emulated AWS account in a container: launch an instance
// with the real EC2 client, wait for it with the SDK's waiter, end it.
func ExampleRun() {
	ctx := context.Background()
	ctr, err := container.Run(ctx, testcontainers.WithCmdArgs("-boot-delay=1s"))
	defer func() {
		if err := testcontainers.TerminateContainer(ctr); err != nil {
			fmt.Println("terminating:", err)
		}
	}()
	if err != nil {
		fmt.Println(err)
		return
	}
	client := ec2.NewFromConfig(ctr.AWSConfig())

	subnets, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil {
		fmt.Println(err)
		return
	}
	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	if err != nil || len(images.Images) == 0 {
		fmt.Println("no images:", err)
		return
	}
	run, err := client.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: images.Images[0].ImageId, InstanceType: ec2types.InstanceTypeM6iLarge,
		SubnetId: subnets.Subnets[0].SubnetId, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	id := aws.ToString(run.Instances[0].InstanceId)
	fmt.Println("launched:", run.Instances[0].State.Name)
	if err := ec2.NewInstanceRunningWaiter(client).Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}}, time.Minute); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("the waiter saw it running")
	term, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("terminating:", term.TerminatingInstances[0].PreviousState.Name, "->", term.TerminatingInstances[0].CurrentState.Name)
	// Output:
	// launched: pending
	// the waiter saw it running
	// terminating: running -> shutting-down
}
