package sqs

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/karplab/karplab/fakeec2/account"
)

// Store buckets.
const (
	bucketQueues   = "sqs-queues"
	bucketMessages = "sqs-messages"
)

// Limits from the SQS API reference.
const (
	maxDelay          = 900
	maxVisibility     = 43200
	maxWait           = 20
	maxBatch          = 10
	maxMessageAttrs   = 10
	purgeCooldown     = 60 * time.Second
	defaultMaxMsgSize = 1048576
)

// attrRange is a settable integer queue attribute: its bounds and default.
type attrRange struct{ min, max, def int }

var intAttrs = map[string]attrRange{
	"DelaySeconds":                  {0, maxDelay, 0},
	"MaximumMessageSize":            {1024, defaultMaxMsgSize, defaultMaxMsgSize},
	"MessageRetentionPeriod":        {60, 1209600, 345600},
	"ReceiveMessageWaitTimeSeconds": {0, maxWait, 0},
	"VisibilityTimeout":             {0, maxVisibility, 30},
	"KmsDataKeyReusePeriodSeconds":  {60, 86400, 300},
}

// stringAttrs are settable attributes stored as given (policies are not enforced).
var stringAttrs = map[string]bool{
	"Policy": true, "RedrivePolicy": true, "RedriveAllowPolicy": true, "KmsMasterKeyId": true,
	"SqsManagedSseEnabled": true,
}

// readOnlyAttrs are computed by GetQueueAttributes.
var readOnlyAttrs = []string{
	"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed",
	"ApproximateNumberOfMessagesNotVisible", "CreatedTimestamp", "LastModifiedTimestamp", "QueueArn",
}

var queueNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// queue is one standard queue. Messages are kept in send order.
type queue struct {
	Name       string            `json:"name"`
	Attributes map[string]string `json:"attributes"` // settable attributes, defaults filled in
	Tags       map[string]string `json:"tags,omitempty"`
	Created    time.Time         `json:"created"`
	Modified   time.Time         `json:"modified"`
	LastPurge  time.Time         `json:"lastPurge,omitempty"`
	NextSeq    uint64            `json:"nextSeq"`

	msgs []*message
	wake chan struct{} // closed (and replaced) when a receive may now succeed
}

// message is one message and its receive state.
type message struct {
	Queue          string               `json:"queue"`
	Seq            uint64               `json:"seq"`
	ID             string               `json:"id"`
	Body           string               `json:"body"`
	MD5Body        string               `json:"md5Body"`
	Attrs          map[string]attrValue `json:"attrs,omitempty"`
	MD5Attrs       string               `json:"md5Attrs,omitempty"`
	SenderID       string               `json:"senderId"`
	SentAt         time.Time            `json:"sentAt"`
	VisibleAt      time.Time            `json:"visibleAt"` // delay or visibility timeout end
	ReceiveCount   int                  `json:"receiveCount"`
	FirstReceiveAt time.Time            `json:"firstReceiveAt,omitempty"`
	Receipt        string               `json:"receipt,omitempty"` // the latest receipt handle
}

// attrValue is a message attribute.
type attrValue struct {
	DataType    string `json:"DataType"`
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue []byte `json:"BinaryValue,omitempty"`
}

func (m *message) key() string { return messageKey(m.Queue, m.Seq) }

func messageKey(queue string, seq uint64) string { return fmt.Sprintf("%s/%020d", queue, seq) }

func (m *message) inFlight(now time.Time) bool { return m.ReceiveCount > 0 && now.Before(m.VisibleAt) }
func (m *message) delayed(now time.Time) bool  { return m.ReceiveCount == 0 && now.Before(m.VisibleAt) }

// model is every queue of the account, by name.
type model struct {
	region, account string
	queues          map[string]*queue
}

func newModel(region, acct string) *model {
	return &model{region: region, account: acct, queues: map[string]*queue{}}
}

func (m *model) arn(name string) string {
	return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", m.region, m.account, name)
}

func (m *model) queue(name string) (*queue, *account.Error) {
	q, ok := m.queues[name]
	if !ok {
		return nil, errQueueNotFound()
	}
	return q, nil
}

func queueOp(q *queue) account.Op { return account.Op{Bucket: bucketQueues, Key: q.Name, Value: q} }
func messageOp(m *message) account.Op {
	return account.Op{Bucket: bucketMessages, Key: m.key(), Value: m}
}
func deleteMessageOp(m *message) account.Op { return account.Op{Bucket: bucketMessages, Key: m.key()} }

// validateAttributes checks settable queue attributes and returns them normalised.
func validateAttributes(attrs map[string]string) (map[string]string, *account.Error) {
	out := make(map[string]string, len(attrs))
	for _, k := range account.SortedKeys(attrs) {
		v := attrs[k]
		switch {
		case k == "FifoQueue" || k == "ContentBasedDeduplication" || k == "DeduplicationScope" || k == "FifoThroughputLimit":
			if k == "FifoQueue" && v == "false" {
				continue
			}
			return nil, errInvalidAttributeName(k + " (FIFO queues are not emulated by the lab)")
		case stringAttrs[k]:
			if k == "SqsManagedSseEnabled" && v != "true" && v != "false" {
				return nil, errInvalidAttributeValue("Invalid value for the parameter SqsManagedSseEnabled.")
			}
			out[k] = v
		default:
			r, ok := intAttrs[k]
			if !ok {
				return nil, errInvalidAttributeName(k)
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < r.min || n > r.max {
				return nil, errInvalidAttributeValue("Invalid value for the parameter %s.", k)
			}
			out[k] = strconv.Itoa(n)
		}
	}
	return out, nil
}

func defaultAttributes() map[string]string {
	out := map[string]string{"SqsManagedSseEnabled": "true"}
	for k, r := range intAttrs {
		if k != "KmsDataKeyReusePeriodSeconds" {
			out[k] = strconv.Itoa(r.def)
		}
	}
	return out
}

// createQueue makes name, or returns the existing queue when every given attribute
// matches it (CreateQueue is idempotent only then).
func (m *model) createQueue(name string, attrs, tags map[string]string, now time.Time) (*queue, []account.Op, *account.Error) {
	if !queueNameRE.MatchString(name) {
		return nil, nil, errInvalidParameter("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	}
	norm, e := validateAttributes(attrs)
	if e != nil {
		return nil, nil, e
	}
	if q, ok := m.queues[name]; ok {
		for _, k := range account.SortedKeys(norm) {
			if q.Attributes[k] != norm[k] {
				return nil, nil, errQueueExists(k)
			}
		}
		return q, nil, nil
	}
	q := &queue{Name: name, Attributes: defaultAttributes(), Tags: tags, Created: now, Modified: now,
		NextSeq: 1, wake: make(chan struct{})}
	for k, v := range norm {
		q.Attributes[k] = v
	}
	m.queues[name] = q
	return q, []account.Op{queueOp(q)}, nil
}

func (m *model) deleteQueue(q *queue) []account.Op {
	ops := []account.Op{{Bucket: bucketQueues, Key: q.Name}}
	for _, msg := range q.msgs {
		ops = append(ops, deleteMessageOp(msg))
	}
	delete(m.queues, q.Name)
	q.msgs = nil
	q.notify()
	return ops
}

// notify wakes every long poll waiting on q.
func (q *queue) notify() {
	close(q.wake)
	q.wake = make(chan struct{})
}

func (q *queue) intAttr(name string) int {
	n, err := strconv.Atoi(q.Attributes[name])
	if err != nil {
		return intAttrs[name].def
	}
	return n
}

func (q *queue) setAttributes(attrs map[string]string, now time.Time) ([]account.Op, *account.Error) {
	norm, e := validateAttributes(attrs)
	if e != nil {
		return nil, e
	}
	for k, v := range norm {
		q.Attributes[k] = v
	}
	q.Modified = now
	q.notify() // a shorter DelaySeconds does not change queued messages, but wake anyway
	return []account.Op{queueOp(q)}, nil
}

func (q *queue) purge(now time.Time) ([]account.Op, *account.Error) {
	if !q.LastPurge.IsZero() && now.Sub(q.LastPurge) < purgeCooldown {
		return nil, errPurgeInProgress(q.Name)
	}
	ops := make([]account.Op, 0, len(q.msgs)+1)
	for _, msg := range q.msgs {
		ops = append(ops, deleteMessageOp(msg))
	}
	q.msgs = nil
	q.LastPurge = now
	return append(ops, queueOp(q)), nil
}

// expire drops messages older than the retention period.
func (q *queue) expire(now time.Time) []account.Op {
	keep := time.Duration(q.intAttr("MessageRetentionPeriod")) * time.Second
	var ops []account.Op
	live := q.msgs[:0]
	for _, msg := range q.msgs {
		if now.Sub(msg.SentAt) >= keep {
			ops = append(ops, deleteMessageOp(msg))
			continue
		}
		live = append(live, msg)
	}
	for i := len(live); i < len(q.msgs); i++ {
		q.msgs[i] = nil
	}
	q.msgs = live
	return ops
}

// sendInput is one message to enqueue.
type sendInput struct {
	Body     string
	Delay    *int
	Attrs    map[string]attrValue
	SenderID string
}

func (q *queue) send(in sendInput, id string, now time.Time) (*message, []account.Op, *account.Error) {
	if in.Body == "" {
		return nil, nil, errMissingParameter("MessageBody")
	}
	if n, max := len(in.Body), q.intAttr("MaximumMessageSize"); n > max {
		return nil, nil, errInvalidParameter("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", max)
	}
	if e := checkBody(in.Body); e != nil {
		return nil, nil, e
	}
	delay := q.intAttr("DelaySeconds")
	if in.Delay != nil {
		if *in.Delay < 0 || *in.Delay > maxDelay {
			return nil, nil, errInvalidParameter("Value %d for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.", *in.Delay)
		}
		delay = *in.Delay
	}
	md5Attrs, e := checkMessageAttributes(in.Attrs)
	if e != nil {
		return nil, nil, e
	}
	msg := &message{Queue: q.Name, Seq: q.NextSeq, ID: id, Body: in.Body, MD5Body: md5Hex([]byte(in.Body)),
		Attrs: in.Attrs, MD5Attrs: md5Attrs, SenderID: in.SenderID, SentAt: now,
		VisibleAt: now.Add(time.Duration(delay) * time.Second)}
	q.NextSeq++
	q.msgs = append(q.msgs, msg)
	q.notify()
	return msg, []account.Op{queueOp(q), messageOp(msg)}, nil
}

// checkBody rejects characters outside XML's Char production, as SQS does.
func checkBody(body string) *account.Error {
	if !utf8.ValidString(body) {
		return errInvalidMessageContents("Invalid binary character in message body: not UTF-8")
	}
	for _, r := range body {
		ok := r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) ||
			(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
		if !ok {
			return errInvalidMessageContents("Invalid binary character '#x%X' was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF", r)
		}
	}
	return nil
}

// checkMessageAttributes validates attrs and returns their MD5 digest ("" for none).
func checkMessageAttributes(attrs map[string]attrValue) (string, *account.Error) {
	if len(attrs) == 0 {
		return "", nil
	}
	if len(attrs) > maxMessageAttrs {
		return "", errInvalidParameter("Number of message attributes [%d] exceeds the allowed maximum [%d].", len(attrs), maxMessageAttrs)
	}
	for name, v := range attrs {
		base, _, _ := strings.Cut(v.DataType, ".")
		switch base {
		case "String", "Number":
			if v.StringValue == "" {
				return "", errInvalidParameter("Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, base)
			}
		case "Binary":
			if len(v.BinaryValue) == 0 {
				return "", errInvalidParameter("Message (user) attribute '%s' must contain a non-empty value of type 'Binary'.", name)
			}
		default:
			return "", errInvalidParameter("The type of message (user) attribute '%s' is invalid. You must use only the following supported type prefixes: Binary, Number, String.", name)
		}
	}
	return md5OfAttributes(attrs), nil
}

// md5OfAttributes is SQS's digest of message attributes: for each name in order, the
// length-prefixed name, data type, a transport byte and the length-prefixed value.
func md5OfAttributes(attrs map[string]attrValue) string {
	var buf []byte
	lp := func(b []byte) {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(b)))
		buf = append(buf, b...)
	}
	for _, name := range account.SortedKeys(attrs) {
		v := attrs[name]
		lp([]byte(name))
		lp([]byte(v.DataType))
		if strings.HasPrefix(v.DataType, "Binary") {
			buf = append(buf, 2)
			lp(v.BinaryValue)
		} else {
			buf = append(buf, 1)
			lp([]byte(v.StringValue))
		}
	}
	return md5Hex(buf)
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// receive takes up to max visible messages, hiding each for vt and giving it a new
// receipt handle.
func (q *queue) receive(max int, vt time.Duration, now time.Time, nonce func() string) ([]*message, []account.Op) {
	var got []*message
	var ops []account.Op
	for _, msg := range q.msgs {
		if len(got) == max {
			break
		}
		if now.Before(msg.VisibleAt) {
			continue
		}
		msg.ReceiveCount++
		if msg.FirstReceiveAt.IsZero() {
			msg.FirstReceiveAt = now
		}
		msg.VisibleAt = now.Add(vt)
		msg.Receipt = newReceipt(q.Name, msg.ID, nonce())
		got = append(got, msg)
		ops = append(ops, messageOp(msg))
	}
	return got, ops
}

// nextVisible is when the earliest hidden message becomes visible (zero: none hidden).
func (q *queue) nextVisible(now time.Time) time.Time {
	var next time.Time
	for _, msg := range q.msgs {
		if now.Before(msg.VisibleAt) && (next.IsZero() || msg.VisibleAt.Before(next)) {
			next = msg.VisibleAt
		}
	}
	return next
}

// counts returns the visible, in-flight and delayed message counts.
func (q *queue) counts(now time.Time) (visible, inFlight, delayed int) {
	for _, msg := range q.msgs {
		switch {
		case msg.inFlight(now):
			inFlight++
		case msg.delayed(now):
			delayed++
		default:
			visible++
		}
	}
	return visible, inFlight, delayed
}

// newReceipt encodes the queue and message a handle belongs to, plus a nonce so each
// receive's handle differs.
func newReceipt(queue, id, nonce string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(queue + "\x00" + id + "\x00" + nonce))
}

func parseReceipt(handle string) (queue, id string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(handle)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// find returns the message a handle names, or nil when it is gone or the handle is not
// its latest one. A handle that is not a handle of q is an error.
func (q *queue) find(handle string) (int, *message, *account.Error) {
	qn, id, ok := parseReceipt(handle)
	if !ok || qn != q.Name {
		return -1, nil, errInvalidReceipt(handle)
	}
	for i, msg := range q.msgs {
		if msg.ID == id && msg.Receipt == handle {
			return i, msg, nil
		}
	}
	return -1, nil, nil
}

// deleteMessage deletes the message of handle. As in SQS, a handle of a message already
// deleted, or superseded by a later receive, succeeds and deletes nothing.
func (q *queue) deleteMessage(handle string) ([]account.Op, *account.Error) {
	i, msg, e := q.find(handle)
	if e != nil || msg == nil {
		return nil, e
	}
	q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
	return []account.Op{deleteMessageOp(msg)}, nil
}

func (q *queue) changeVisibility(handle string, vt int, now time.Time) ([]account.Op, *account.Error) {
	if vt < 0 || vt > maxVisibility {
		return nil, errInvalidParameter("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200.", vt)
	}
	_, msg, e := q.find(handle)
	if e != nil {
		return nil, e
	}
	if msg == nil || !msg.inFlight(now) {
		return nil, errNotInflight()
	}
	msg.VisibleAt = now.Add(time.Duration(vt) * time.Second)
	q.notify()
	return []account.Op{messageOp(msg)}, nil
}

// sortMessages puts loaded messages back in send order.
func (q *queue) sortMessages() {
	sort.Slice(q.msgs, func(i, j int) bool { return q.msgs[i].Seq < q.msgs[j].Seq })
}
