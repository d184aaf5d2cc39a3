package account

import (
	"fmt"
	"net/http"
)

// Error is an AWS API error in service-neutral form; each protocol encoder writes it in
// its service's shape.
type Error struct {
	Code       string // as the service spells it: "NoSuchEntity", "ParameterNotFound"
	Message    string
	HTTPStatus int
	// QueryCode is the legacy awsquery code a JSON service also sends in
	// x-amzn-query-error, for SDKs that still map it (SQS:
	// "AWS.SimpleQueueService.NonExistentQueue"). Empty: none.
	QueryCode string
	// Receiver marks a server-side fault (<Type>Receiver</Type>); otherwise Sender.
	Receiver bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds an Error.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), HTTPStatus: status}
}

// BadRequest is the common 400 client error.
func BadRequest(code, format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, code, format, args...)
}

// Internal is a 500 server fault.
func Internal(format string, args ...any) *Error {
	e := Errorf(http.StatusInternalServerError, "InternalFailure", format, args...)
	e.Receiver = true
	return e
}

// NotAuthorizedMessage words a policy denial as IAM does for every service.
func NotAuthorizedMessage(h Host, caller, action, resource string) string {
	return fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s because no identity-based policy allows the %s action",
		CallerARN(h, caller), action, resource, action)
}

// CallerARN is the IAM identity the lab gives an access key: a user named for it.
func CallerARN(h Host, caller string) string {
	return fmt.Sprintf("arn:aws:iam::%s:user/%s", h.AccountID(), caller)
}
