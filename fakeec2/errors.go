package fakeec2

import (
	"fmt"
	"net/http"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// Error codes as EC2 spells them. Only an APIError crosses the wire.
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

// APIError is an EC2 error response: the code and message the client sees, and the HTTP
// status it arrives with.
type APIError struct {
	Code       string
	Message    string
	HTTPStatus int
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

func apiErr(status int, code, format string, args ...any) *APIError {
	return &APIError{Code: code, Message: fmt.Sprintf(format, args...), HTTPStatus: status}
}

// badRequest is the common 400 client error.
func badRequest(code, format string, args ...any) *APIError {
	return apiErr(http.StatusBadRequest, code, format, args...)
}

func errMissing(name string) *APIError {
	return badRequest(CodeMissingParameter, "The request must contain the parameter %s", name)
}

func errInvalidValue(format string, args ...any) *APIError {
	return badRequest(CodeInvalidParameterValue, format, args...)
}

func errDryRun() *APIError {
	return apiErr(http.StatusPreconditionFailed, CodeDryRunOperation,
		"Request would have succeeded, but DryRun flag is set.")
}

func errInstanceNotFound(id string) *APIError {
	return badRequest(CodeInvalidInstanceIDNotFound, "The instance ID '%s' does not exist", id)
}

func errInstanceMalformed(id string) *APIError {
	return badRequest(CodeInvalidInstanceIDMalformed, "Invalid id: \"%s\"", id)
}

func errThrottled() *APIError {
	return apiErr(http.StatusServiceUnavailable, CodeRequestLimitExceeded, "Request limit exceeded.")
}

func errInsufficientCapacity(instanceType, zone string) *APIError {
	return apiErr(http.StatusInternalServerError, CodeInsufficientInstanceCapacity,
		"We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). "+
			"Our system will be working on provisioning additional capacity. You can currently get %s "+
			"capacity by not specifying an Availability Zone in your request or choosing a different one.",
		instanceType, zone, instanceType)
}

func errUnauthorized(encoded string) *APIError {
	return apiErr(http.StatusForbidden, CodeUnauthorizedOperation,
		"You are not authorized to perform this operation. Encoded authorization failure message: %s", encoded)
}

func errInternal(format string, args ...any) *APIError {
	return apiErr(http.StatusInternalServerError, CodeInternalError, format, args...)
}

// refuse answers the model's refusal of action on r, if any, as EC2's error: every state
// rule reaches the wire here.
func refuse[T any](rules map[string][]ec2.Rule[T], action string, r T) *APIError {
	if rf := ec2.Refuse(rules, action, r); rf != nil {
		return badRequest(rf.Code, "%s", rf.Message)
	}
	return nil
}
