package cloudprovider

import (
	"errors"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Error classification as karpenter-provider-aws's pkg/errors does it: by the EC2 error code
// the SDK surfaces through smithy.APIError, never by the HTTP status.
const (
	codeDryRunOperation       = "DryRunOperation"
	codeUnauthorizedOperation = "UnauthorizedOperation"
	codeLaunchTemplateNameNF  = "InvalidLaunchTemplateName.NotFoundException"
	codeLaunchTemplateExists  = "InvalidLaunchTemplateName.AlreadyExistsException"
)

var (
	notFoundCodes = sets.New(
		"InvalidInstanceID.NotFound",
		codeLaunchTemplateNameNF,
		"InvalidLaunchTemplateId.NotFound",
	)
	// unfulfillableCapacityCodes mean this offering cannot be launched right now: mark it
	// unavailable and let Karpenter pick another one.
	unfulfillableCapacityCodes = sets.New(
		"InsufficientInstanceCapacity",
		"MaxSpotInstanceCountExceeded",
		"VcpuLimitExceeded",
		"UnfulfillableCapacity",
		"Unsupported",
		"InsufficientFreeAddressesInSubnet",
	)
)

func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// IsNotFound reports an EC2 "does not exist" error (instance, launch template).
func IsNotFound(err error) bool { return err != nil && notFoundCodes.Has(errorCode(err)) }

// IsDryRun reports the DryRunOperation answer: the request would have succeeded.
func IsDryRun(err error) bool { return err != nil && errorCode(err) == codeDryRunOperation }

// IsUnauthorized reports an UnauthorizedOperation (the IAM-like policy denied the call).
func IsUnauthorized(err error) bool {
	return err != nil && errorCode(err) == codeUnauthorizedOperation
}

// IsUnfulfillableCapacity reports whether a CreateFleet error means no capacity for that offering.
func IsUnfulfillableCapacity(code string) bool { return unfulfillableCapacityCodes.Has(code) }

func isFleetCapacityError(e ec2types.CreateFleetError) bool {
	return e.ErrorCode != nil && IsUnfulfillableCapacity(*e.ErrorCode)
}

// reasonMessage turns a launch error into the condition reason and message Karpenter puts on the
// NodeClaim's Launched condition (the real provider's ToReasonMessage, trimmed to what the
// emulator can answer).
func reasonMessage(err error) (string, string) {
	s := err.Error()
	switch {
	case strings.Contains(s, codeUnauthorizedOperation) || strings.Contains(s, "AccessDenied") || strings.Contains(s, "AuthFailure"):
		return "Unauthorized", "User is not authorized to perform this operation because no identity-based policy allows it"
	case strings.Contains(s, "InvalidLaunchTemplateId.NotFound") || strings.Contains(s, codeLaunchTemplateNameNF):
		return "LaunchTemplateNotFound", "Launch template used for instance launch wasn't found"
	case strings.Contains(s, "InvalidAMIID"):
		return "InvalidAMIID", "AMI used for instance launch is invalid"
	case strings.Contains(s, "RequestLimitExceeded"):
		return "RequestLimitExceeded", "Request limit exceeded"
	case strings.Contains(s, "InternalError"):
		return "InternalError", "An internal error has occurred"
	case strings.Contains(s, "InstanceLimitExceeded") || strings.Contains(s, "VcpuLimitExceeded"):
		return "VCPULimitExceeded", "An instance was requested that would exceed your VCPU quota"
	case strings.Contains(s, "MaxSpotInstanceCountExceeded"):
		return "SpotQuotaExceeded", "A spot instance launch was requested but this would exceed your spot instance quota"
	case strings.Contains(s, "InsufficientFreeAddressesInSubnet"):
		return "InsufficientFreeAddressesInSubnet", "There are not enough free IP addresses to launch an instance in this subnet"
	}
	return "LaunchFailed", "Instance launch failed"
}
