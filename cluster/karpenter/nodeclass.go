package karpenter

import (
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/awslabs/operatorpkg/controller"
	"sigs.k8s.io/karpenter/pkg/operator"

	"github.com/karplab/karplab/cluster/karpenter/nodeclass"
)

// nodeClassControllers is the EC2NodeClass status controller: it resolves subnets, security
// groups and AMIs through the same EC2 client and keeps the drift hash current.
func nodeClassControllers(op *operator.Operator, api *ec2.Client, o Options) []controller.Controller {
	resolver := nodeclass.NewResolver(api, nodeclass.ResolverOptions{ClusterName: o.ClusterName, Region: o.Region})
	return []controller.Controller{
		nodeclass.NewController(op.GetClient(), resolver, nodeclass.ControllerOptions{Logger: o.Logger}),
	}
}
