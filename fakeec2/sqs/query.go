package sqs

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/karplab/karplab/fakeec2/account"
)

// Namespace and Version of SQS's older awsquery protocol.
const (
	Namespace = "http://queue.amazonaws.com/doc/2012-11-05/"
	Version   = "2012-11-05"
)

func noResult(*empty) any { return nil }

// serveQuery answers the awsquery form (body, or the URL's query) with XML.
func (s *Service) serveQuery(c *account.Call) *account.Response {
	return account.ServeQuery(c, s.table.query)
}

// Form decoding: lists are Name.N, maps Name.N.Name/Name.N.Value.

func formInt(f url.Values, key string) (*int, *account.Error) {
	v, ok := f[key]
	if !ok || len(v) == 0 {
		return nil, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil {
		return nil, errInvalidParameter("Value %s for parameter %s is invalid. Reason: must be an integer.", v[0], key)
	}
	return &n, nil
}

// indices returns the N of every key prefix.N[.rest], in order.
func indices(f url.Values, prefix string) []int {
	seen := map[int]bool{}
	for k := range f {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if n, err := strconv.Atoi(num); err == nil && n > 0 {
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

func formList(f url.Values, prefix string) []string {
	var out []string
	for _, n := range indices(f, prefix) {
		out = append(out, f.Get(prefix+"."+strconv.Itoa(n)))
	}
	return out
}

func formMap(f url.Values, prefix, keyField, valueField string) map[string]string {
	var out map[string]string
	for _, n := range indices(f, prefix) {
		p := prefix + "." + strconv.Itoa(n) + "."
		if out == nil {
			out = map[string]string{}
		}
		out[f.Get(p+keyField)] = f.Get(p + valueField)
	}
	return out
}

func formMessageAttrs(f url.Values, prefix string) (map[string]attrValue, *account.Error) {
	var out map[string]attrValue
	for _, n := range indices(f, prefix) {
		p := prefix + "." + strconv.Itoa(n) + "."
		v := attrValue{DataType: f.Get(p + "Value.DataType"), StringValue: f.Get(p + "Value.StringValue")}
		if b := f.Get(p + "Value.BinaryValue"); b != "" {
			raw, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return nil, errInvalidParameter("Message (user) attribute '%s' has an invalid binary value.", f.Get(p+"Name"))
			}
			v.BinaryValue = raw
		}
		if out == nil {
			out = map[string]attrValue{}
		}
		out[f.Get(p+"Name")] = v
	}
	return out, nil
}

func decCreateQueue(f url.Values) (*createQueueIn, *account.Error) {
	return &createQueueIn{QueueName: f.Get("QueueName"), Attributes: formMap(f, "Attribute", "Name", "Value"),
		Tags: formMap(f, "Tag", "Key", "Value")}, nil
}

func decGetQueueURL(f url.Values) (*getQueueURLIn, *account.Error) {
	return &getQueueURLIn{QueueName: f.Get("QueueName"), QueueOwnerAWSAccountId: f.Get("QueueOwnerAWSAccountId")}, nil
}

func decQueue(f url.Values) (*queueIn, *account.Error) {
	return &queueIn{QueueUrl: f.Get("QueueUrl")}, nil
}

func decListQueues(f url.Values) (*listQueuesIn, *account.Error) {
	limit, e := formInt(f, "MaxResults")
	return &listQueuesIn{QueueNamePrefix: f.Get("QueueNamePrefix"), MaxResults: limit, NextToken: f.Get("NextToken")}, e
}

func decGetAttributes(f url.Values) (*getAttributesIn, *account.Error) {
	return &getAttributesIn{QueueUrl: f.Get("QueueUrl"), AttributeNames: formList(f, "AttributeName")}, nil
}

func decSetAttributes(f url.Values) (*setAttributesIn, *account.Error) {
	return &setAttributesIn{QueueUrl: f.Get("QueueUrl"), Attributes: formMap(f, "Attribute", "Name", "Value")}, nil
}

func decSend(f url.Values) (*sendIn, *account.Error) {
	delay, e := formInt(f, "DelaySeconds")
	if e != nil {
		return nil, e
	}
	attrs, e := formMessageAttrs(f, "MessageAttribute")
	return &sendIn{QueueUrl: f.Get("QueueUrl"), MessageBody: f.Get("MessageBody"), DelaySeconds: delay,
		MessageAttributes: attrs}, e
}

func decSendBatch(f url.Values) (*sendBatchIn, *account.Error) {
	in := &sendBatchIn{QueueUrl: f.Get("QueueUrl")}
	for _, n := range indices(f, "SendMessageBatchRequestEntry") {
		p := "SendMessageBatchRequestEntry." + strconv.Itoa(n) + "."
		delay, e := formInt(f, p+"DelaySeconds")
		if e != nil {
			return nil, e
		}
		attrs, e := formMessageAttrs(f, p+"MessageAttribute")
		if e != nil {
			return nil, e
		}
		in.Entries = append(in.Entries, sendBatchEntry{Id: f.Get(p + "Id"), MessageBody: f.Get(p + "MessageBody"),
			DelaySeconds: delay, MessageAttributes: attrs})
	}
	return in, nil
}

func decReceive(f url.Values) (*receiveIn, *account.Error) {
	in := &receiveIn{QueueUrl: f.Get("QueueUrl"), AttributeNames: formList(f, "AttributeName"),
		MessageAttributeNames: formList(f, "MessageAttributeName")}
	var e *account.Error
	for key, dst := range map[string]**int{"MaxNumberOfMessages": &in.MaxNumberOfMessages,
		"VisibilityTimeout": &in.VisibilityTimeout, "WaitTimeSeconds": &in.WaitTimeSeconds} {
		if *dst, e = formInt(f, key); e != nil {
			return nil, e
		}
	}
	return in, nil
}

func decDeleteMessage(f url.Values) (*deleteMessageIn, *account.Error) {
	return &deleteMessageIn{QueueUrl: f.Get("QueueUrl"), ReceiptHandle: f.Get("ReceiptHandle")}, nil
}

func decDeleteBatch(f url.Values) (*deleteBatchIn, *account.Error) {
	in := &deleteBatchIn{QueueUrl: f.Get("QueueUrl")}
	for _, n := range indices(f, "DeleteMessageBatchRequestEntry") {
		p := "DeleteMessageBatchRequestEntry." + strconv.Itoa(n) + "."
		in.Entries = append(in.Entries, deleteBatchEntry{Id: f.Get(p + "Id"), ReceiptHandle: f.Get(p + "ReceiptHandle")})
	}
	return in, nil
}

func decChangeVisibility(f url.Values) (*changeVisibilityIn, *account.Error) {
	vt, e := formInt(f, "VisibilityTimeout")
	return &changeVisibilityIn{QueueUrl: f.Get("QueueUrl"), ReceiptHandle: f.Get("ReceiptHandle"), VisibilityTimeout: vt}, e
}

// XML results: flattened lists and maps, as SQS writes them.

type xmlNameValue struct {
	Name  string `xml:"Name"`
	Value string `xml:"Value"`
}

type xmlAttrValue struct {
	StringValue string `xml:"StringValue,omitempty"`
	BinaryValue string `xml:"BinaryValue,omitempty"`
	DataType    string `xml:"DataType"`
}

type xmlMessageAttr struct {
	Name  string       `xml:"Name"`
	Value xmlAttrValue `xml:"Value"`
}

type xmlMessage struct {
	MessageID              string           `xml:"MessageId"`
	ReceiptHandle          string           `xml:"ReceiptHandle"`
	MD5OfBody              string           `xml:"MD5OfBody"`
	Body                   string           `xml:"Body"`
	Attributes             []xmlNameValue   `xml:"Attribute"`
	MD5OfMessageAttributes string           `xml:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      []xmlMessageAttr `xml:"MessageAttribute"`
}

type xmlBatchError struct {
	ID          string `xml:"Id"`
	SenderFault bool   `xml:"SenderFault"`
	Code        string `xml:"Code"`
	Message     string `xml:"Message"`
}

func nameValues(m map[string]string) []xmlNameValue {
	out := make([]xmlNameValue, 0, len(m))
	for _, k := range account.SortedKeys(m) {
		out = append(out, xmlNameValue{Name: k, Value: m[k]})
	}
	return out
}

func xmlErrors(in []batchError) []xmlBatchError {
	out := make([]xmlBatchError, len(in))
	for i, e := range in {
		out[i] = xmlBatchError{ID: e.Id, SenderFault: e.SenderFault, Code: e.Code, Message: e.Message}
	}
	return out
}

func encQueueURL(o *queueURLOut) any {
	return struct {
		QueueURL string `xml:"QueueUrl"`
	}{o.QueueUrl}
}

func encListQueues(o *listQueuesOut) any {
	return struct {
		QueueURLs []string `xml:"QueueUrl"`
		NextToken string   `xml:"NextToken,omitempty"`
	}{o.QueueUrls, o.NextToken}
}

func encAttributes(o *attributesOut) any {
	return struct {
		Attributes []xmlNameValue `xml:"Attribute"`
	}{nameValues(o.Attributes)}
}

func encSend(o *sendOut) any {
	return struct {
		MD5OfMessageBody       string `xml:"MD5OfMessageBody"`
		MD5OfMessageAttributes string `xml:"MD5OfMessageAttributes,omitempty"`
		MessageID              string `xml:"MessageId"`
	}{o.MD5OfMessageBody, o.MD5OfMessageAttributes, o.MessageId}
}

func encReceive(o *receiveOut) any {
	msgs := make([]xmlMessage, 0, len(o.Messages))
	for _, m := range o.Messages {
		x := xmlMessage{MessageID: m.MessageId, ReceiptHandle: m.ReceiptHandle, MD5OfBody: m.MD5OfBody, Body: m.Body,
			Attributes: nameValues(m.Attributes), MD5OfMessageAttributes: m.MD5OfMessageAttributes}
		for _, k := range account.SortedKeys(m.MessageAttributes) {
			v := m.MessageAttributes[k]
			xv := xmlAttrValue{StringValue: v.StringValue, DataType: v.DataType}
			if len(v.BinaryValue) > 0 {
				xv.BinaryValue = base64.StdEncoding.EncodeToString(v.BinaryValue)
			}
			x.MessageAttributes = append(x.MessageAttributes, xmlMessageAttr{Name: k, Value: xv})
		}
		msgs = append(msgs, x)
	}
	return struct {
		Messages []xmlMessage `xml:"Message"`
	}{msgs}
}

func encSendBatch(o *sendBatchOut) any {
	type entry struct {
		ID                     string `xml:"Id"`
		MessageID              string `xml:"MessageId"`
		MD5OfMessageBody       string `xml:"MD5OfMessageBody"`
		MD5OfMessageAttributes string `xml:"MD5OfMessageAttributes,omitempty"`
	}
	ok := make([]entry, len(o.Successful))
	for i, r := range o.Successful {
		ok[i] = entry{r.Id, r.MessageId, r.MD5OfMessageBody, r.MD5OfMessageAttributes}
	}
	return struct {
		Successful []entry         `xml:"SendMessageBatchResultEntry"`
		Failed     []xmlBatchError `xml:"BatchResultErrorEntry"`
	}{ok, xmlErrors(o.Failed)}
}

func encDeleteBatch(o *deleteBatchOut) any {
	type entry struct {
		ID string `xml:"Id"`
	}
	ok := make([]entry, len(o.Successful))
	for i, r := range o.Successful {
		ok[i] = entry{r.Id}
	}
	return struct {
		Successful []entry         `xml:"DeleteMessageBatchResultEntry"`
		Failed     []xmlBatchError `xml:"BatchResultErrorEntry"`
	}{ok, xmlErrors(o.Failed)}
}
