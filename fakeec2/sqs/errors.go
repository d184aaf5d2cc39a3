package sqs

import (
	"net/http"

	"github.com/karplab/karplab/fakeec2/account"
)

// sqsError builds an error whose JSON __type is code and whose awsquery code (also sent
// in x-amzn-query-error, which the SDK maps for query-compatible SQS) is queryCode.
func sqsError(status int, code, queryCode, format string, args ...any) *account.Error {
	e := account.Errorf(status, code, format, args...)
	e.QueryCode = queryCode
	return e
}

func errQueueNotFound() *account.Error {
	return sqsError(http.StatusBadRequest, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue",
		"The specified queue does not exist.")
}

func errQueueExists(attr string) *account.Error {
	return sqsError(http.StatusBadRequest, "QueueNameExists", "QueueAlreadyExists",
		"A queue already exists with the same name and a different value for attribute %s", attr)
}

func errInvalidParameter(format string, args ...any) *account.Error {
	return sqsError(http.StatusBadRequest, "InvalidParameterValue", "InvalidParameterValue", format, args...)
}

func errMissingParameter(name string) *account.Error {
	return sqsError(http.StatusBadRequest, "MissingParameter", "MissingParameter",
		"The request must contain the parameter %s.", name)
}

func errInvalidAttributeName(name string) *account.Error {
	return sqsError(http.StatusBadRequest, "InvalidAttributeName", "InvalidAttributeName",
		"Unknown Attribute %s.", name)
}

func errInvalidAttributeValue(format string, args ...any) *account.Error {
	return sqsError(http.StatusBadRequest, "InvalidAttributeValue", "InvalidAttributeValue", format, args...)
}

func errInvalidReceipt(handle string) *account.Error {
	return sqsError(http.StatusNotFound, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid",
		"The input receipt handle %q is not a valid receipt handle.", handle)
}

func errNotInflight() *account.Error {
	return sqsError(http.StatusBadRequest, "MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight",
		"Message does not exist or is not available for visibility timeout change.")
}

func errInvalidAddress(addr string) *account.Error {
	return sqsError(http.StatusNotFound, "InvalidAddress", "InvalidAddress",
		"The address %s is not valid for this endpoint.", addr)
}

func errPurgeInProgress(name string) *account.Error {
	return sqsError(http.StatusForbidden, "PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress",
		"Only one PurgeQueue operation on %s is allowed every 60 seconds.", name)
}

func errAccessDenied(msg string) *account.Error {
	return sqsError(http.StatusForbidden, "AccessDeniedException", "AccessDenied", "%s", msg)
}

func errInvalidMessageContents(format string, args ...any) *account.Error {
	return sqsError(http.StatusBadRequest, "InvalidMessageContents", "InvalidMessageContents", format, args...)
}

// Batch request errors, whole-request.
func errEmptyBatch(entry string) *account.Error {
	return sqsError(http.StatusBadRequest, "EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest",
		"There should be at least one %s in the request.", entry)
}

func errTooManyEntries(n int) *account.Error {
	return sqsError(http.StatusBadRequest, "TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
		"Maximum number of entries per request are 10. You have sent %d.", n)
}

func errBatchIDsNotDistinct(id string) *account.Error {
	return sqsError(http.StatusBadRequest, "BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
		"Id %s repeated.", id)
}

func errInvalidBatchID(id string) *account.Error {
	return sqsError(http.StatusBadRequest, "InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId",
		"A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long. Invalid id: %q", id)
}
