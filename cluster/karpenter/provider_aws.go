package karpenter

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/controller"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/metrics"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	corecontrollers "sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	coreoperator "sigs.k8s.io/karpenter/pkg/operator"
	karpoptions "sigs.k8s.io/karpenter/pkg/operator/options"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awscloudprovider "github.com/aws/karpenter-provider-aws/pkg/cloudprovider"
	"github.com/aws/karpenter-provider-aws/pkg/cloudprovider/registrationhooks"
	awscontrollers "github.com/aws/karpenter-provider-aws/pkg/controllers"
	awsoperator "github.com/aws/karpenter-provider-aws/pkg/operator"
	awsoptions "github.com/aws/karpenter-provider-aws/pkg/operator/options"
)

// awsControllers wires karpenter-provider-aws v1.15.0 over core's operator exactly as the
// provider's cmd/controller/main.go does: its operator (AWS clients from the default
// config chain, so AWS_ENDPOINT_URL reaches the emulator for every service; the DryRun
// DescribeInstanceTypes check, the cluster endpoint, kube-dns, Kubernetes version, instance
// types and offerings, all at start), its cloud provider decorated by core's metrics and
// overlay, core's controllers with the placement group registration hook, and every
// provider controller. Nothing of the provider is replaced. Its operator exits the process
// (os.Exit) or panics when a start-up call fails, as in a pod; Run turns panics into errors.
func awsControllers(coreCtx context.Context, core *coreoperator.Operator) ([]controller.Controller, *state.Cluster, context.Context, error) {
	ctx, op := awsoperator.NewOperator(coreCtx, core)

	awsCloudProvider := awscloudprovider.New(
		op.InstanceTypesProvider,
		op.InstanceProvider,
		op.EventRecorder,
		op.GetClient(),
		op.AMIProvider,
		op.SecurityGroupProvider,
		op.CapacityReservationProvider,
		op.PlacementGroupProvider,
		op.InstanceTypeStore,
		op.CABundle,
		awscloudprovider.WithLegacyRepairPolicies(karpoptions.FromContext(ctx).LegacyNodeRepair),
		awscloudprovider.WithRebootForRepair(awsoptions.FromContext(ctx).FeatureGates.RebootForRepair),
	)
	overlayUndecorated := metrics.Decorate(awsCloudProvider)
	cloudProvider := overlay.Decorate(overlayUndecorated, op.GetClient(), op.InstanceTypeStore)
	matcher, err := health.NewRepairPolicyMatcher(ctx, cloudProvider)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("building repair policies: %w", err)
	}
	clusterState := state.NewCluster(op.Clock, op.GetClient(), cloudProvider, state.WithRepairPolicyMatcher(matcher))
	if karpoptions.FromContext(ctx).FeatureGates.ReservedCapacity {
		awsv1.CapacityReservationsEnabled = true
	}

	ctrls := corecontrollers.NewControllers(ctx, op.Manager, op.Clock, op.GetClient(), op.EventRecorder,
		cloudProvider, overlayUndecorated, clusterState, op.InstanceTypeStore, op.PredictionStore,
		corecontrollers.WithRegistrationHook(registrationhooks.NewPlacementGroupRegistrationHook(op.InstanceProvider)))
	ctrls = append(ctrls, awscontrollers.NewControllers(
		ctx,
		op.Manager,
		op.Config,
		op.Clock,
		op.EC2API,
		op.GetClient(),
		op.EventRecorder,
		op.UnavailableOfferingsCache,
		op.SSMCache,
		op.ValidationCache,
		op.RecreationCache,
		cloudProvider,
		op.SubnetProvider,
		op.SecurityGroupProvider,
		op.InstanceProfileProvider,
		op.InstanceProvider,
		op.PricingProvider,
		op.AMIProvider,
		op.LaunchTemplateProvider,
		op.VersionProvider,
		op.InstanceTypesProvider,
		op.CapacityReservationProvider,
		op.PlacementGroupProvider,
		op.AMIResolver,
		op.ZonalShiftProvider,
		op.InstanceStatusProvider,
		op.CABundle,
		op.CELEnvironment,
	)...)
	return ctrls, clusterState, ctx, nil
}
