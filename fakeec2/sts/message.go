package sts

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/karplab/karplab/fakeec2/account"
)

// Denial is what a decoded authorization message tells: who was denied which action on
// which resource, and why.
type Denial struct {
	Caller       string // the denied caller's access key ID; "" if unknown
	Action       string // "ec2:RunInstances"
	Resource     string // an ARN, or "*"
	Reason       string // the lab policy's explanation
	ExplicitDeny bool   // a statement denied it (false: nothing allowed it)
}

// UserID is the unique ID (AIDA...) the lab gives the IAM user behind an access key:
// stable, so GetCallerIdentity and decoded messages agree across calls and restarts.
func UserID(h account.Host, caller string) string {
	sum := sha256.Sum256([]byte(h.AccountID() + "/" + caller))
	return "AIDA" + strings.ToUpper(fmt.Sprintf("%x", sum[:9]))[:17]
}

// The JSON shape of AWS's DecodedMessage.
type (
	decodedMessage struct {
		Allowed           bool        `json:"allowed"`
		ExplicitDeny      bool        `json:"explicitDeny"`
		MatchedStatements items[any]  `json:"matchedStatements"`
		Failures          items[any]  `json:"failures"`
		Context           denyContext `json:"context"`
		// Reason is the lab's addition: AWS leaves the reader to infer it from the
		// statements; the lab's policy states it.
		Reason string `json:"reason,omitempty"`
	}
	items[T any] struct {
		Items []T `json:"items"`
	}
	denyContext struct {
		Principal  principal  `json:"principal"`
		Action     string     `json:"action"`
		Resource   string     `json:"resource"`
		Conditions items[any] `json:"conditions"`
	}
	principal struct {
		ID  string `json:"id"`
		Arn string `json:"arn"`
	}
)

// DecodedMessage renders d as AWS's DecodedMessage JSON document.
func DecodedMessage(h account.Host, d Denial) string {
	m := decodedMessage{ExplicitDeny: d.ExplicitDeny, MatchedStatements: items[any]{Items: []any{}},
		Failures: items[any]{Items: []any{}}, Reason: d.Reason,
		Context: denyContext{Action: d.Action, Resource: d.Resource, Conditions: items[any]{Items: []any{}}}}
	if d.Caller != "" {
		m.Context.Principal = principal{ID: UserID(h, d.Caller), Arn: account.CallerARN(h, d.Caller)}
	}
	b, _ := json.Marshal(m) // strings and bools only
	return string(b)
}

// denialFromReason recovers what it can from a bare reason: IAM-worded denials
// ("User: ARN is not authorized to perform: ACTION on resource: RES ...") name the
// action and resource; any other text is kept as the reason alone.
func denialFromReason(reason string) Denial {
	d := Denial{Reason: reason}
	_, rest, ok := strings.Cut(reason, "is not authorized to perform: ")
	if !ok {
		return d
	}
	action, rest, ok := strings.Cut(rest, " on resource: ")
	if !ok {
		return d
	}
	d.Action = action
	d.Resource, _, _ = strings.Cut(rest, " ")
	return d
}
