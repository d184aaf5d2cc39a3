package fakeec2

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strconv"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// ec2Namespace is the xmlns of every EC2 response of API version 2016-11-15.
const ec2Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// WireHeader is embedded in every EC2 response body: the requestId child. It is exported
// only because encoding/xml cannot read an unexported embedded struct; callers have no use
// for it. (The root element, <ActionResponse xmlns=...>, is named by marshalResponse:
// encoding/xml does not resolve an XMLName promoted from an embedded struct.)
type WireHeader struct {
	RequestID string `xml:"requestId"`
}

func (h *WireHeader) setHeader(requestID string) { h.RequestID = requestID }

// wireResponse is a response body that can be named for its action.
type wireResponse interface{ setHeader(requestID string) }

// plainResponse is the body of calls that answer only <return>true</return>.
type plainResponse struct {
	WireHeader
	Return bool `xml:"return"`
}

type xmlErrorBody struct {
	XMLName xml.Name `xml:"Response"`
	Errors  struct {
		Error struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
	} `xml:"Errors"`
	RequestID string `xml:"RequestID"`
}

func marshalResponse(action, requestID string, body wireResponse) ([]byte, error) {
	body.setHeader(requestID)
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	start := xml.StartElement{Name: xml.Name{Local: action + "Response"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: ec2Namespace}}}
	if err := xml.NewEncoder(&buf).EncodeElement(body, start); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func marshalError(e *wire.Error, requestID string) []byte {
	var b xmlErrorBody
	b.Errors.Error.Code = e.Code
	b.Errors.Error.Message = e.Message
	b.RequestID = requestID
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	_ = xml.NewEncoder(&buf).Encode(b) // plain strings cannot fail to encode
	return buf.Bytes()
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// xmlTime formats a timestamp as EC2 does.
func xmlTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// xbool renders a boolean that must appear even when false.
func xbool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

type xmlTag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func xmlTags(tags []ec2.Tag) []xmlTag {
	if len(tags) == 0 {
		return nil
	}
	out := make([]xmlTag, len(tags))
	for i, t := range tags {
		out[i] = xmlTag{Key: t.Key, Value: t.Value}
	}
	return out
}

type xmlGroup struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName,omitempty"`
}

type xmlState struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type xmlValue struct {
	Value string `xml:"value"`
}
