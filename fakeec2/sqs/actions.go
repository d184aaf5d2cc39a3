package sqs

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

// Action inputs and outputs, named as SQS's JSON protocol names them; query.go maps
// the form and XML onto the same types.

type createQueueIn struct {
	QueueName  string
	Attributes map[string]string
	Tags       map[string]string `json:"tags"`
}

type queueURLOut struct {
	QueueUrl string //nolint:revive // SQS's spelling
}

type getQueueURLIn struct {
	QueueName              string
	QueueOwnerAWSAccountId string //nolint:revive // SQS's spelling
}

type queueIn struct {
	QueueUrl string //nolint:revive // SQS's spelling
}

type listQueuesIn struct {
	QueueNamePrefix string
	MaxResults      *int
	NextToken       string
}

type listQueuesOut struct {
	QueueUrls []string `json:",omitempty"` //nolint:revive // SQS's spelling
	NextToken string   `json:",omitempty"`
}

type getAttributesIn struct {
	QueueUrl       string //nolint:revive // SQS's spelling
	AttributeNames []string
}

type attributesOut struct {
	Attributes map[string]string `json:",omitempty"`
}

type setAttributesIn struct {
	QueueUrl   string //nolint:revive // SQS's spelling
	Attributes map[string]string
}

type sendIn struct {
	QueueUrl          string //nolint:revive // SQS's spelling
	MessageBody       string
	DelaySeconds      *int
	MessageAttributes map[string]attrValue
}

type sendOut struct {
	MD5OfMessageBody       string
	MD5OfMessageAttributes string `json:",omitempty"`
	MessageId              string //nolint:revive // SQS's spelling
}

type receiveIn struct {
	QueueUrl                    string //nolint:revive // SQS's spelling
	AttributeNames              []string
	MessageSystemAttributeNames []string
	MessageAttributeNames       []string
	MaxNumberOfMessages         *int
	VisibilityTimeout           *int
	WaitTimeSeconds             *int
}

type messageOut struct {
	MessageId              string //nolint:revive // SQS's spelling
	ReceiptHandle          string
	MD5OfBody              string
	Body                   string
	Attributes             map[string]string    `json:",omitempty"`
	MD5OfMessageAttributes string               `json:",omitempty"`
	MessageAttributes      map[string]attrValue `json:",omitempty"`
}

type receiveOut struct {
	Messages []messageOut `json:",omitempty"`
}

type deleteMessageIn struct {
	QueueUrl      string //nolint:revive // SQS's spelling
	ReceiptHandle string
}

type changeVisibilityIn struct {
	QueueUrl          string //nolint:revive // SQS's spelling
	ReceiptHandle     string
	VisibilityTimeout *int
}

type empty struct{}

// resolve authorizes action on the queue a QueueUrl names and returns the queue's name.
func (s *Service) resolve(c *account.Call, action, rawURL string) (string, *account.Error) {
	name, e := s.queueName(c, rawURL)
	if e != nil {
		return "", e
	}
	if e := s.authorize(c, "sqs:"+action, s.m.arn(name)); e != nil {
		return "", e
	}
	return name, nil
}

func (s *Service) createQueue(c *account.Call, in *createQueueIn) (*queueURLOut, *account.Error) {
	if in.QueueName == "" {
		return nil, errMissingParameter("QueueName")
	}
	if e := s.authorize(c, "sqs:CreateQueue", s.m.arn(in.QueueName)); e != nil {
		return nil, e
	}
	s.mu.Lock()
	q, ops, e := s.m.createQueue(in.QueueName, in.Attributes, in.Tags, c.Now)
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	if e := commit(wait, "queue"); e != nil {
		return nil, e
	}
	if len(ops) > 0 {
		c.Created = append(c.Created, s.m.arn(q.Name))
	}
	return &queueURLOut{QueueUrl: s.queueURL(s.baseURL(c), q.Name)}, nil
}

func (s *Service) getQueueURL(c *account.Call, in *getQueueURLIn) (*queueURLOut, *account.Error) {
	if in.QueueName == "" {
		return nil, errMissingParameter("QueueName")
	}
	if e := s.authorize(c, "sqs:GetQueueUrl", s.m.arn(in.QueueName)); e != nil {
		return nil, e
	}
	if in.QueueOwnerAWSAccountId != "" && in.QueueOwnerAWSAccountId != s.host.AccountID() {
		return nil, errQueueNotFound()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, e := s.m.queue(in.QueueName); e != nil {
		return nil, e
	}
	return &queueURLOut{QueueUrl: s.queueURL(s.baseURL(c), in.QueueName)}, nil
}

func (s *Service) listQueues(c *account.Call, in *listQueuesIn) (*listQueuesOut, *account.Error) {
	if e := s.authorize(c, "sqs:ListQueues", "*"); e != nil {
		return nil, e
	}
	limit := 0
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 1000 {
			return nil, errInvalidParameter("Value %d for parameter MaxResults is invalid. Reason: MaxResults must be an integer between 1 and 1000.", *in.MaxResults)
		}
		limit = *in.MaxResults
	} else if in.NextToken != "" {
		return nil, errInvalidParameter("MaxResults is a mandatory parameter when you provide a value for NextToken.")
	}
	s.mu.Lock()
	var names []string
	for _, n := range account.SortedKeys(s.m.queues) {
		if strings.HasPrefix(n, in.QueueNamePrefix) {
			names = append(names, n)
		}
	}
	s.mu.Unlock()
	if limit == 0 && len(names) > 1000 {
		names = names[:1000] // without MaxResults SQS answers at most 1000, no token
	}
	page, next, err := account.Page(names, func(n string) string { return n }, in.NextToken, limit)
	if err != nil {
		return nil, errInvalidParameter("Invalid NextToken value.")
	}
	out := &listQueuesOut{NextToken: next}
	base := s.baseURL(c)
	for _, n := range page {
		out.QueueUrls = append(out.QueueUrls, s.queueURL(base, n))
	}
	return out, nil
}

func (s *Service) getQueueAttributes(c *account.Call, in *getAttributesIn) (*attributesOut, *account.Error) {
	name, e := s.resolve(c, "GetQueueAttributes", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.m.queue(name)
	if e != nil {
		return nil, e
	}
	all := s.allAttributes(q, c.Now)
	out := &attributesOut{}
	for _, a := range in.AttributeNames {
		if a == "All" {
			out.Attributes = all
			return out, nil
		}
		v, ok := all[a]
		if !ok {
			if _, known := intAttrs[a]; !known && !stringAttrs[a] {
				return nil, errInvalidAttributeName(a)
			}
			continue // settable but never set (Policy, RedrivePolicy, ...)
		}
		if out.Attributes == nil {
			out.Attributes = map[string]string{}
		}
		out.Attributes[a] = v
	}
	return out, nil
}

// allAttributes is every attribute q has, computed ones included.
func (s *Service) allAttributes(q *queue, now time.Time) map[string]string {
	out := make(map[string]string, len(q.Attributes)+len(readOnlyAttrs))
	for k, v := range q.Attributes {
		out[k] = v
	}
	visible, inFlight, delayed := q.counts(now)
	out["ApproximateNumberOfMessages"] = strconv.Itoa(visible)
	out["ApproximateNumberOfMessagesNotVisible"] = strconv.Itoa(inFlight)
	out["ApproximateNumberOfMessagesDelayed"] = strconv.Itoa(delayed)
	out["CreatedTimestamp"] = strconv.FormatInt(q.Created.Unix(), 10)
	out["LastModifiedTimestamp"] = strconv.FormatInt(q.Modified.Unix(), 10)
	out["QueueArn"] = s.m.arn(q.Name)
	return out
}

func (s *Service) setQueueAttributes(c *account.Call, in *setAttributesIn) (*empty, *account.Error) {
	name, e := s.resolve(c, "SetQueueAttributes", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	return s.mutate(name, func(q *queue) ([]account.Op, *account.Error) { return q.setAttributes(in.Attributes, c.Now) })
}

func (s *Service) deleteQueue(c *account.Call, in *queueIn) (*empty, *account.Error) {
	name, e := s.resolve(c, "DeleteQueue", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	out, e := s.mutate(name, func(q *queue) ([]account.Op, *account.Error) { return s.m.deleteQueue(q), nil })
	if e == nil {
		c.Deleted = append(c.Deleted, s.m.arn(name))
	}
	return out, e
}

func (s *Service) purgeQueue(c *account.Call, in *queueIn) (*empty, *account.Error) {
	name, e := s.resolve(c, "PurgeQueue", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	return s.mutate(name, func(q *queue) ([]account.Op, *account.Error) { return q.purge(c.Now) })
}

// mutate runs fn on the named queue under the lock and waits for its writes.
func (s *Service) mutate(name string, fn func(q *queue) ([]account.Op, *account.Error)) (*empty, *account.Error) {
	s.mu.Lock()
	q, e := s.m.queue(name)
	var ops []account.Op
	if e == nil {
		ops, e = fn(q)
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	if e := commit(wait, "queue "+name); e != nil {
		return nil, e
	}
	return &empty{}, nil
}

func (s *Service) sendMessage(c *account.Call, in *sendIn) (*sendOut, *account.Error) {
	name, e := s.resolve(c, "SendMessage", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	q, e := s.m.queue(name)
	var ops []account.Op
	var msg *message
	if e == nil {
		msg, ops, e = q.send(sendInput{Body: in.MessageBody, Delay: in.DelaySeconds, Attrs: in.MessageAttributes,
			SenderID: c.Caller}, s.newMessageID(), s.host.Now())
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	if e := commit(wait, "message"); e != nil {
		return nil, e
	}
	return &sendOut{MD5OfMessageBody: msg.MD5Body, MD5OfMessageAttributes: msg.MD5Attrs, MessageId: msg.ID}, nil
}

func (s *Service) deleteMessage(c *account.Call, in *deleteMessageIn) (*empty, *account.Error) {
	name, e := s.resolve(c, "DeleteMessage", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	if in.ReceiptHandle == "" {
		return nil, errMissingParameter("ReceiptHandle")
	}
	return s.mutate(name, func(q *queue) ([]account.Op, *account.Error) { return q.deleteMessage(in.ReceiptHandle) })
}

func (s *Service) changeMessageVisibility(c *account.Call, in *changeVisibilityIn) (*empty, *account.Error) {
	name, e := s.resolve(c, "ChangeMessageVisibility", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	if in.ReceiptHandle == "" {
		return nil, errMissingParameter("ReceiptHandle")
	}
	if in.VisibilityTimeout == nil {
		return nil, errMissingParameter("VisibilityTimeout")
	}
	return s.mutate(name, func(q *queue) ([]account.Op, *account.Error) {
		return q.changeVisibility(in.ReceiptHandle, *in.VisibilityTimeout, s.host.Now())
	})
}

// receiveLimits validates ReceiveMessage's numbers against q's defaults.
func receiveLimits(in *receiveIn, q *queue) (limit int, vt, wait time.Duration, e *account.Error) {
	limit = 1
	if in.MaxNumberOfMessages != nil {
		if n := *in.MaxNumberOfMessages; n < 1 || n > maxBatch {
			return 0, 0, 0, errInvalidParameter("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", n)
		}
		limit = *in.MaxNumberOfMessages
	}
	vts := q.intAttr("VisibilityTimeout")
	if in.VisibilityTimeout != nil {
		if n := *in.VisibilityTimeout; n < 0 || n > maxVisibility {
			return 0, 0, 0, errInvalidParameter("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided.", n)
		}
		vts = *in.VisibilityTimeout
	}
	ws := q.intAttr("ReceiveMessageWaitTimeSeconds")
	if in.WaitTimeSeconds != nil {
		if n := *in.WaitTimeSeconds; n < 0 || n > maxWait {
			return 0, 0, 0, errInvalidParameter("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", n)
		}
		ws = *in.WaitTimeSeconds
	}
	return limit, time.Duration(vts) * time.Second, time.Duration(ws) * time.Second, nil
}

// receiveMessage takes visible messages, long polling up to the wait time: it returns
// as soon as a send (or a visibility change) wakes the queue, never busy-waiting.
func (s *Service) receiveMessage(c *account.Call, in *receiveIn) (*receiveOut, *account.Error) {
	name, e := s.resolve(c, "ReceiveMessage", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	ctx := context.Background()
	if c.HTTP != nil {
		ctx = c.HTTP.Context()
	}
	var deadline, realDeadline time.Time
	for first := true; ; first = false {
		s.mu.Lock()
		q, e := s.m.queue(name)
		if e != nil {
			s.mu.Unlock()
			return nil, e
		}
		limit, vt, wait, e := receiveLimits(in, q)
		if e != nil {
			s.mu.Unlock()
			return nil, e
		}
		now := s.host.Now()
		if first {
			deadline, realDeadline = now.Add(wait), time.Now().Add(wait)
		}
		ops := q.expire(now)
		got, rops := q.receive(limit, vt, now, func() string { return s.host.NewID("") })
		ops = append(ops, rops...)
		done := len(got) > 0 || !now.Before(deadline) || !time.Now().Before(realDeadline)
		var out *receiveOut
		if done {
			out = receiveOutput(got, in)
		}
		waitCh := s.host.Store().Enqueue(ops...)
		wake, next := q.wake, q.nextVisible(now)
		s.mu.Unlock()
		if e := commit(waitCh, "receive state"); e != nil {
			return nil, e
		}
		if done {
			return out, nil
		}
		// Sleep until woken, a hidden message reappears, or the wait ends; the real
		// deadline bounds the wait when the host clock stands still.
		d := time.Until(realDeadline)
		if !next.IsZero() {
			d = min(d, next.Sub(now))
		}
		t := time.NewTimer(max(d, time.Millisecond))
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return &receiveOut{}, nil
		}
		t.Stop()
	}
}

// receiveOutput renders received messages with the attributes the caller asked for.
func receiveOutput(got []*message, in *receiveIn) *receiveOut {
	out := &receiveOut{}
	sysNames := append(append([]string{}, in.AttributeNames...), in.MessageSystemAttributeNames...)
	for _, msg := range got {
		mo := messageOut{MessageId: msg.ID, ReceiptHandle: msg.Receipt, MD5OfBody: msg.MD5Body, Body: msg.Body}
		mo.Attributes = systemAttributes(msg, sysNames)
		attrs := map[string]attrValue{}
		for k, v := range msg.Attrs {
			if wantAttr(in.MessageAttributeNames, k) {
				attrs[k] = v
			}
		}
		if len(attrs) > 0 {
			mo.MessageAttributes, mo.MD5OfMessageAttributes = attrs, md5OfAttributes(attrs)
		}
		out.Messages = append(out.Messages, mo)
	}
	return out
}

func systemAttributes(msg *message, names []string) map[string]string {
	all := map[string]string{
		"SenderId":                         msg.SenderID,
		"SentTimestamp":                    strconv.FormatInt(msg.SentAt.UnixMilli(), 10),
		"ApproximateReceiveCount":          strconv.Itoa(msg.ReceiveCount),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(msg.FirstReceiveAt.UnixMilli(), 10),
	}
	out := map[string]string{}
	for _, n := range names {
		if n == "All" {
			return all
		}
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// wantAttr matches a message attribute name against "All", ".*", "prefix.*" or a name.
func wantAttr(patterns []string, name string) bool {
	for _, p := range patterns {
		switch {
		case p == "All" || p == ".*" || p == name:
			return true
		case strings.HasSuffix(p, ".*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*")):
			return true
		}
	}
	return false
}
