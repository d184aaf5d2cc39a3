package account

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// JSON protocol versions (awsJson1_0: SQS; awsJson1_1: SSM, Pricing).
const (
	JSON10 = "1.0"
	JSON11 = "1.1"
)

// JSONHandler answers one action of a JSON-protocol service from its raw body.
type JSONHandler func(c *Call, body []byte) (any, *Error)

// JSONAction adapts a typed handler: the body is decoded into In (unknown fields are
// ignored, as AWS does for newer clients); a body that is not a JSON object answers
// SerializationException.
func JSONAction[In any, Out any](fn func(c *Call, in *In) (*Out, *Error)) JSONHandler {
	return func(c *Call, body []byte) (any, *Error) {
		in := new(In)
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, in); err != nil {
				return nil, BadRequest("SerializationException", "Could not parse the request body: %v", err)
			}
		}
		out, e := fn(c, in)
		if e != nil {
			return nil, e
		}
		return out, nil
	}
}

// JSONActionSpec is one entry of a JSON service's dispatch table.
type JSONActionSpec struct {
	Handler  JSONHandler
	ReadOnly bool
}

// ServeJSON dispatches a JSON-protocol call by its X-Amz-Target ("AmazonSSM.GetParameter")
// and encodes the answer. prefix is the target's service part ("AmazonSSM").
func ServeJSON(c *Call, version, prefix string, table map[string]JSONActionSpec) *Response {
	target := c.HTTP.Header.Get("X-Amz-Target")
	svc, action, ok := strings.Cut(target, ".")
	if target == "" || !ok || svc != prefix {
		return JSONError(version, c.RequestID, BadRequest("UnknownOperationException",
			"The X-Amz-Target header %q names no operation of %s", target, prefix))
	}
	c.Action = action
	c.Params = FlattenJSON(c.Body)
	spec, ok := table[action]
	if !ok {
		return JSONError(version, c.RequestID, BadRequest("UnknownOperationException",
			"Operation %s is not supported by this endpoint's %s", action, prefix))
	}
	c.ReadOnly = spec.ReadOnly
	out, e := spec.Handler(c, c.Body)
	if e != nil {
		return JSONError(version, c.RequestID, e)
	}
	return JSONResponse(version, c.RequestID, out)
}

// JSONResponse encodes a successful JSON-protocol answer.
func JSONResponse(version, requestID string, v any) *Response {
	b, err := json.Marshal(v)
	if err != nil {
		return JSONError(version, requestID, Internal("encoding the response: %v", err))
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-"+version)
	h.Set("X-Amzn-Requestid", requestID)
	return &Response{Status: http.StatusOK, Header: h, Body: b}
}

// JSONError encodes an error as awsJson services do: the code in X-Amzn-Errortype and
// __type, the message in "message" (aws-sdk-go-v2 and botocore read either).
func JSONError(version, requestID string, e *Error) *Response {
	body, _ := json.Marshal(map[string]string{"__type": e.Code, "message": e.Message}) // strings only
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-"+version)
	h.Set("X-Amzn-Requestid", requestID)
	h.Set("X-Amzn-Errortype", e.Code)
	if e.QueryCode != "" {
		h.Set("X-Amzn-Query-Error", e.QueryCode+";"+senderOrReceiver(e))
	}
	return &Response{Status: e.HTTPStatus, Header: h, Body: body, Err: e}
}

func senderOrReceiver(e *Error) string {
	if e.Receiver {
		return "Receiver"
	}
	return "Sender"
}

// RESTJSON encodes a restJson1 answer (EKS).
func RESTJSON(status int, requestID string, v any) *Response {
	b, err := json.Marshal(v)
	if err != nil {
		return RESTError(requestID, Internal("encoding the response: %v", err))
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Requestid", requestID)
	return &Response{Status: status, Header: h, Body: b}
}

// RESTError encodes a restJson1 error: the code in X-Amzn-Errortype, {"message": ...}.
func RESTError(requestID string, e *Error) *Response {
	body, _ := json.Marshal(map[string]string{"message": e.Message})
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Requestid", requestID)
	h.Set("X-Amzn-Errortype", e.Code)
	return &Response{Status: e.HTTPStatus, Header: h, Body: body, Err: e}
}

// QueryResponse encodes an awsquery answer (IAM, STS, SQS's older protocol):
// <ActionResponse xmlns=NS><ActionResult>result</ActionResult><ResponseMetadata>... .
// A nil result writes no Result element (calls that return nothing).
func QueryResponse(namespace, action, requestID string, result any) *Response {
	var buf bytes.Buffer
	enc := xml.NewEncoder(&buf)
	root := xml.StartElement{Name: xml.Name{Local: action + "Response"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: namespace}}}
	err := enc.EncodeToken(root)
	if err == nil && result != nil {
		err = enc.EncodeElement(result, xml.StartElement{Name: xml.Name{Local: action + "Result"}})
	}
	if err == nil {
		err = enc.EncodeElement(struct {
			RequestID string `xml:"RequestId"`
		}{requestID}, xml.StartElement{Name: xml.Name{Local: "ResponseMetadata"}})
	}
	if err == nil {
		err = enc.EncodeToken(root.End())
	}
	if err == nil {
		err = enc.Flush()
	}
	if err != nil {
		return QueryError(namespace, requestID, Internal("encoding the response: %v", err))
	}
	return &Response{Status: http.StatusOK, Header: xmlHeader(requestID), Body: buf.Bytes()}
}

type queryErrorBody struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	NS      string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

// QueryError encodes an awsquery error: <ErrorResponse><Error><Type/><Code/><Message/>.
func QueryError(namespace, requestID string, e *Error) *Response {
	b := queryErrorBody{NS: namespace, RequestID: requestID}
	b.Error.Type, b.Error.Code, b.Error.Message = senderOrReceiver(e), e.Code, e.Message
	if e.QueryCode != "" {
		b.Error.Code = e.QueryCode
	}
	out, _ := xml.Marshal(b) // strings only
	return &Response{Status: e.HTTPStatus, Header: xmlHeader(requestID), Body: out, Err: e}
}

func xmlHeader(requestID string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "text/xml")
	h.Set("X-Amzn-Requestid", requestID)
	return h
}

// FlattenJSON turns a JSON object's top-level fields into audit parameters: strings as
// they are, anything else as its JSON text. A body that is not an object gives nil.
func FlattenJSON(body []byte) map[string]string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, raw := range m {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[k] = s
			continue
		}
		out[k] = string(raw)
	}
	return out
}

// FlattenForm turns form values into audit parameters (the first value of each key).
func FlattenForm(form map[string][]string) map[string]string {
	out := make(map[string]string, len(form))
	for k, v := range form {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// EpochSeconds is how the JSON protocols write a timestamp by default.
func EpochSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}

// ISO8601 is how the query protocols write a timestamp.
func ISO8601(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// SortedKeys returns m's keys in order (deterministic lists and pages).
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Page cuts a sorted list into one page: items after the one named by token (opaque to
// clients: the last key of the previous page, encoded; "" starts at the beginning), at
// most max of them (max <= 0: all). next is the token for the following page, or "" at the
// end. A token that names nothing is an error the caller words in its service's terms.
func Page[T any](items []T, key func(T) string, token string, max int) (page []T, next string, err error) {
	start := 0
	if token != "" {
		raw, derr := base64.RawURLEncoding.DecodeString(token)
		if derr != nil {
			return nil, "", fmt.Errorf("invalid pagination token %q", token)
		}
		last := string(raw)
		start = -1
		for i, it := range items {
			if key(it) == last {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, "", fmt.Errorf("invalid pagination token %q", token)
		}
	}
	end := len(items)
	if max > 0 && start+max < end {
		end = start + max
		next = base64.RawURLEncoding.EncodeToString([]byte(key(items[end-1])))
	}
	return items[start:end], next, nil
}
