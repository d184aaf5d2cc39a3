package authz

// KarpenterControllerPolicy is the least-privilege policy Karpenter's getting-started
// CloudFormation stack gives the controller's role (KarpenterControllerPolicy), as the
// lab's policy can say it: the actions, not the tag conditions that scope them on AWS.
// caller is the access key the controller signs with; everything else it calls is
// denied, as IAM's implicit deny does.
func KarpenterControllerPolicy(caller string) PolicyStatement {
	return PolicyStatement{
		Sid:     "KarpenterControllerPolicy",
		Callers: []string{caller},
		AllowActions: []string{
			// AllowScopedEC2InstanceAccessActions, ...WithTags, AllowScopedResourceCreationTagging
			"ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate", "ec2:CreateTags",
			// AllowScopedDeletion
			"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate",
			// AllowRegionalReadActions (DescribeInstanceStatus and DescribePlacementGroups
			// for the instance-status and placement-group providers of v1.15)
			"ec2:DescribeAvailabilityZones", "ec2:DescribeCapacityReservations", "ec2:DescribeImages",
			"ec2:DescribeInstances", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes",
			"ec2:DescribeLaunchTemplates", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory",
			"ec2:DescribeSubnets", "ec2:DescribeInstanceStatus", "ec2:DescribePlacementGroups",
			// node repair reboots before it replaces
			"ec2:RebootInstances",
			// AllowSSMReadActions, AllowPricingReadActions
			"ssm:GetParameter", "pricing:GetProducts",
			// AllowInterruptionQueueActions
			"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage",
			// AllowPassingInstanceRole
			"iam:PassRole",
			// AllowScopedInstanceProfile{Creation,Tag,}Actions, AllowInstanceProfileReadActions
			"iam:CreateInstanceProfile", "iam:TagInstanceProfile", "iam:AddRoleToInstanceProfile",
			"iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile", "iam:GetInstanceProfile",
			"iam:ListInstanceProfiles", "iam:GetRole",
			// AllowAPIServerEndpointDiscovery
			"eks:DescribeCluster",
			// who am I: never denied on AWS
			"sts:GetCallerIdentity",
		},
	}
}
