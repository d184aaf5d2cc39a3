package wire

import (
	"net/http"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/ec2"
)

// Error codes as EC2 spells them. Only an Error crosses the wire.
const (
	CodeInvalidAction                    = "InvalidAction"
	CodeMissingParameter                 = "MissingParameter"
	CodeInvalidParameterValue            = ec2.CodeInvalidParameterValue
	CodeInvalidParameterCombination      = ec2.CodeInvalidParameterCombination
	CodeInvalidParameter                 = "InvalidParameter"
	CodeUnknownParameter                 = "UnknownParameter"
	CodeInvalidFilter                    = "InvalidFilter"
	CodeInvalidPaginationToken           = "InvalidPaginationToken"
	CodeInvalidInstanceIDNotFound        = "InvalidInstanceID.NotFound"
	CodeInvalidInstanceIDMalformed       = "InvalidInstanceID.Malformed"
	CodeInvalidLaunchTemplateNameNF      = "InvalidLaunchTemplateName.NotFoundException"
	CodeInvalidLaunchTemplateNameExists  = "InvalidLaunchTemplateName.AlreadyExistsException"
	CodeInvalidLaunchTemplateNameBad     = "InvalidLaunchTemplateName.MalformedException"
	CodeInvalidLaunchTemplateIDNotFound  = "InvalidLaunchTemplateId.NotFound"
	CodeInvalidLaunchTemplateIDBad       = "InvalidLaunchTemplateId.Malformed"
	CodeInvalidLaunchTemplateIDVersion   = "InvalidLaunchTemplateId.VersionNotFound"
	CodeInvalidSubnetIDNotFound          = "InvalidSubnetID.NotFound"
	CodeInvalidGroupNotFound             = "InvalidGroup.NotFound"
	CodeInvalidAMIIDNotFound             = "InvalidAMIID.NotFound"
	CodeInvalidAMIIDMalformed            = "InvalidAMIID.Malformed"
	CodeInvalidVolumeNotFound            = "InvalidVolume.NotFound"
	CodeInvalidNetworkInterfaceNotFound  = "InvalidNetworkInterfaceID.NotFound"
	CodeInvalidID                        = "InvalidID"
	CodeInvalidInstanceType              = "InvalidInstanceType"
	CodeInsufficientInstanceCapacity     = "InsufficientInstanceCapacity"
	CodeUnauthorizedOperation            = "UnauthorizedOperation"
	CodeDryRunOperation                  = "DryRunOperation"
	CodeRequestLimitExceeded             = "RequestLimitExceeded"
	CodeInstanceLimitExceeded            = "InstanceLimitExceeded"
	CodeTagLimitExceeded                 = "TagLimitExceeded"
	CodeInvalidFleetConfiguration        = "InvalidFleetConfiguration"
	CodeInternalError                    = "InternalError"
	CodeMissingAction                    = "MissingAction"
	CodeInvalidHTTPRequest               = "InvalidHttpRequest"
	CodeIncorrectState                   = ec2.CodeIncorrectState
	CodeInvalidPlacementGroupUnknown     = "InvalidPlacementGroup.Unknown"
	CodeInvalidPlacementGroupIDNotFound  = "InvalidPlacementGroupId.NotFound"
	CodeInvalidPlacementGroupIDMalformed = "InvalidPlacementGroupId.Malformed"
)

// Error is an EC2 error response: the account's service-neutral error (code, message,
// HTTP status), which xml.go writes in EC2's shape.
type Error = account.Error

// Errorf is the error code answers with status, its message formatted.
func Errorf(status int, code, format string, args ...any) *Error {
	return account.Errorf(status, code, format, args...)
}

// BadRequest is the common 400 client error.
func BadRequest(code, format string, args ...any) *Error {
	return account.BadRequest(code, format, args...)
}

// Missing is the error for a required parameter the request lacks.
func Missing(name string) *Error {
	return BadRequest(CodeMissingParameter, "The request must contain the parameter %s", name)
}

// InvalidValue is the 400 InvalidParameterValue error.
func InvalidValue(format string, args ...any) *Error {
	return BadRequest(CodeInvalidParameterValue, format, args...)
}

// DryRun is the answer to a DryRun call that would have succeeded.
func DryRun() *Error {
	return Errorf(http.StatusPreconditionFailed, CodeDryRunOperation,
		"Request would have succeeded, but DryRun flag is set.")
}

// InstanceNotFound is the error for an instance ID that names no instance.
func InstanceNotFound(id string) *Error {
	return BadRequest(CodeInvalidInstanceIDNotFound, "The instance ID '%s' does not exist", id)
}

// InstanceMalformed is the error for a string that is not an instance ID.
func InstanceMalformed(id string) *Error {
	return BadRequest(CodeInvalidInstanceIDMalformed, "Invalid id: \"%s\"", id)
}

// Throttled is the 503 RequestLimitExceeded error.
func Throttled() *Error {
	return Errorf(http.StatusServiceUnavailable, CodeRequestLimitExceeded, "Request limit exceeded.")
}

// InsufficientCapacity is the error of a pool with no capacity left in zone.
func InsufficientCapacity(instanceType, zone string) *Error {
	return Errorf(http.StatusInternalServerError, CodeInsufficientInstanceCapacity,
		"We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). "+
			"Our system will be working on provisioning additional capacity. You can currently get %s "+
			"capacity by not specifying an Availability Zone in your request or choosing a different one.",
		instanceType, zone, instanceType)
}

// Unauthorized is the 403 the policy answers, with its encoded failure message.
func Unauthorized(encoded string) *Error {
	return Errorf(http.StatusForbidden, CodeUnauthorizedOperation,
		"You are not authorized to perform this operation. Encoded authorization failure message: %s", encoded)
}

// Internal is the 500 InternalError.
func Internal(format string, args ...any) *Error {
	return Errorf(http.StatusInternalServerError, CodeInternalError, format, args...)
}

// Refuse answers the model's refusal of action on r, if any, as EC2's error: every state
// rule reaches the wire here.
func Refuse[T any](rules map[string][]ec2.Rule[T], action string, r T) *Error {
	if rf := ec2.Refuse(rules, action, r); rf != nil {
		return BadRequest(rf.Code, "%s", rf.Message)
	}
	return nil
}
