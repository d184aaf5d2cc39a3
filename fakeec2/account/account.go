package account

import (
	"log/slog"
	"net/http"
	"time"
)

// LevelBodies is the slog level at which the services log request and response bodies
// (-v 2), below slog.LevelDebug's one line per request.
const LevelBodies = slog.LevelDebug - 4

// Host is what the lab's account gives a service: one clock, ID generator, durable
// store and policy shared by EC2, IAM, SSM, SQS, EKS, Pricing and STS.
type Host interface {
	Region() string
	AccountID() string
	Now() time.Time
	// NewID mints an ID shaped like AWS's for prefix ("AIPA", "" for a request ID).
	NewID(prefix string) string
	// Authorize returns why the policy forbids caller to call action ("iam:PassRole",
	// "ssm:GetParameter") on resource (an ARN, or "*"), or "" when it is allowed.
	Authorize(caller, action, resource string) string
	Store() Store
}

// Store is the account's durable state (bbolt under fakeec2's state dir, or memory).
type Store interface {
	// Enqueue queues record writes in order; the returned channel yields once they are on
	// disk. Callers enqueue under their own lock (so writes keep their order) and wait
	// after releasing it.
	Enqueue(ops ...Op) <-chan error
	// Load calls fn for every record of bucket, in key order.
	Load(bucket string, fn func(key string, val []byte) error) error
}

// Op writes one record: Value is JSON-encoded; a nil Value deletes Key.
type Op struct {
	Bucket, Key string
	Value       any
}

// Call is one request on its way through a service. The router fills the identity
// fields; the service's wire layer sets Action, Params and ReadOnly once it has decoded
// the request, and may add to the audit fields.
type Call struct {
	Service   string // SigV4 signing name: "iam", "ssm", "sqs", "eks", "pricing", "sts"
	RequestID string
	Caller    string // the SigV4 access key ID, or "anonymous"
	Now       time.Time
	HTTP      *http.Request
	Body      []byte // the request body, already read (at most 8 MiB)

	Action   string            // "GetParameter", "ReceiveMessage", ...
	Params   map[string]string // the decoded parameters, flattened, for the audit trail
	ReadOnly bool              // a Get/List/Describe/Receive that changes nothing durable

	// Audit extras: the resources the call created or deleted, the denial reason.
	Created, Deleted []string
	DenialReason     string
}

// Response is a service's answer: a status, headers and body already in the service's
// wire encoding. Err, when set, is the error the body encodes (for the audit trail).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Err    *Error
}

// Service answers one AWS service's protocol.
type Service interface {
	// Name is the SigV4 signing name the router matches ("ssm").
	Name() string
	// Serve answers the call. It never panics on bad input: malformed requests get the
	// service's own error shape.
	Serve(c *Call) *Response
}
