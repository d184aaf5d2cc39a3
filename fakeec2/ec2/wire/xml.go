package wire

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strconv"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// Namespace is the xmlns of every EC2 response of API version 2016-11-15.
const Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// Header is embedded in every EC2 response body: the requestId child, which
// MarshalResponse fills in. (The root element, <ActionResponse xmlns=...>, is named by
// MarshalResponse: encoding/xml does not resolve an XMLName promoted from an embedded
// struct.)
type Header struct {
	RequestID string `xml:"requestId"`
}

func (h *Header) setHeader(requestID string) { h.RequestID = requestID }

// Response is a response body that can be named for its action: one that embeds Header.
type Response interface{ setHeader(requestID string) }

// PlainResponse is the body of calls that answer only <return>true</return>.
type PlainResponse struct {
	Header
	Return bool `xml:"return"`
}

type errorBody struct {
	XMLName xml.Name `xml:"Response"`
	Errors  struct {
		Error struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
	} `xml:"Errors"`
	RequestID string `xml:"RequestID"`
}

// MarshalResponse encodes body as the answer to action, under <ActionResponse xmlns=...>.
func MarshalResponse(action, requestID string, body Response) ([]byte, error) {
	body.setHeader(requestID)
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	start := xml.StartElement{Name: xml.Name{Local: action + "Response"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: Namespace}}}
	if err := xml.NewEncoder(&buf).EncodeElement(body, start); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// MarshalError encodes e as EC2's error body.
func MarshalError(e *Error, requestID string) []byte {
	var b errorBody
	b.Errors.Error.Code = e.Code
	b.Errors.Error.Message = e.Message
	b.RequestID = requestID
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	_ = xml.NewEncoder(&buf).Encode(b) // plain strings cannot fail to encode
	return buf.Bytes()
}

// WriteBody writes an XML answer with its status.
func WriteBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// FormatTime formats a timestamp as EC2 does.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// FormatBool renders a boolean that must appear even when false.
func FormatBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// Tag is a resource tag in a response's tagSet.
type Tag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

// Tags is the tagSet of a resource with tags, nil (omitted) without.
func Tags(tags []ec2.Tag) []Tag {
	if len(tags) == 0 {
		return nil
	}
	out := make([]Tag, len(tags))
	for i, t := range tags {
		out[i] = Tag{Key: t.Key, Value: t.Value}
	}
	return out
}

// Group is a security group as instances and interfaces list them.
type Group struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName,omitempty"`
}

// State is a resource state with its code, as instances answer it.
type State struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

// Value is an attribute answered as <attr><value>...</value></attr>.
type Value struct {
	Value string `xml:"value"`
}

// Items renders records as a response's <item> list with one conversion: nil (the list
// omitted) when there are none, as appending to a nil list would leave it.
func Items[T, X any](records []T, render func(T) X) []X {
	if len(records) == 0 {
		return nil
	}
	out := make([]X, len(records))
	for i, r := range records {
		out[i] = render(r)
	}
	return out
}

// Env is what a conversion needs besides the record it renders: the account's ID (owners)
// and region (ARNs), the time (what is still pending), the model, in which the records it
// names are looked up (an instance's security groups, interfaces and volumes), and the
// instance-type catalog by name. The conversions that need it are its methods, so a page
// renders with Items(page, env.Instance). Callers hold the model's lock while converting.
type Env struct {
	Account, Region string
	Now             time.Time
	Model           *ec2.State
	Types           map[string]*ec2.InstanceTypeInfo
}

// groups renders security group IDs with their names (nil for none).
func (env Env) groups(ids []string) []Group {
	var out []Group
	for _, id := range ids {
		g := Group{GroupID: id}
		if sg := env.Model.Groups[id]; sg != nil {
			g.GroupName = sg.Name
		}
		out = append(out, g)
	}
	return out
}
