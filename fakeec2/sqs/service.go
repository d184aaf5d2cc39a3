package sqs

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

// Options configures New.
type Options struct {
	// Endpoint is the base of the queue URLs the Go API returns ("http://127.0.0.1:4566");
	// API calls build theirs from the request's Host. Default: SQS's regional endpoint.
	Endpoint string
}

// Service is the account's SQS. It implements account.Service.
type Service struct {
	host     account.Host
	endpoint string

	table protocols

	mu sync.Mutex
	m  *model
}

var _ account.Service = (*Service)(nil)

// New opens SQS over host's store: queues, their messages and receive state.
func New(host account.Host, opts Options) (*Service, error) {
	ep := strings.TrimRight(opts.Endpoint, "/")
	if ep == "" {
		ep = fmt.Sprintf("https://sqs.%s.amazonaws.com", host.Region())
	}
	s := &Service{host: host, endpoint: ep, m: newModel(host.Region(), host.AccountID())}
	s.table = s.tables()
	st := host.Store()
	err := account.LoadJSON(st, bucketQueues, func(_ string, q *queue) {
		q.wake = make(chan struct{})
		s.m.queues[q.Name] = q
	})
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", bucketQueues, err)
	}
	var orphans []account.Op
	err = account.LoadJSON(st, bucketMessages, func(k string, msg *message) {
		q, ok := s.m.queues[msg.Queue]
		if !ok {
			orphans = append(orphans, account.Op{Bucket: bucketMessages, Key: k})
			return
		}
		q.msgs = append(q.msgs, msg)
	})
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", bucketMessages, err)
	}
	for _, q := range s.m.queues {
		q.sortMessages()
	}
	if len(orphans) > 0 {
		if err := <-st.Enqueue(orphans...); err != nil {
			return nil, fmt.Errorf("dropping messages of deleted queues: %w", err)
		}
	}
	return s, nil
}

// Name is SQS's SigV4 signing name.
func (s *Service) Name() string { return "sqs" }

// Serve answers awsJson1_0 calls (X-Amz-Target: AmazonSQS.*) and awsquery form posts.
func (s *Service) Serve(c *account.Call) *account.Response {
	if c.HTTP != nil && c.HTTP.Header.Get("X-Amz-Target") != "" {
		return s.serveJSON(c)
	}
	if c.HTTP != nil && strings.Contains(c.HTTP.Header.Get("Content-Type"), "json") {
		return s.serveJSON(c) // JSON without a target: ServeJSON words the error
	}
	return s.serveQuery(c)
}

// commit waits for ops to reach the store; called after the lock is released.
func commit(wait <-chan error, what string) *account.Error {
	if err := <-wait; err != nil {
		return account.Internal("saving %s: %v", what, err)
	}
	return nil
}

// authorize asks the account's policy; a denial answers AccessDenied and is recorded.
func (s *Service) authorize(c *account.Call, action, resource string) *account.Error {
	reason := s.host.Authorize(c.Caller, action, resource)
	if reason == "" {
		return nil
	}
	c.DenialReason = reason
	return errAccessDenied(account.NotAuthorizedMessage(s.host, c.Caller, action, resource))
}

// baseURL is where this request reached SQS: queue URLs point back at it, so the
// query protocol's posts to a queue URL come here too.
func (s *Service) baseURL(c *account.Call) string {
	if c == nil || c.HTTP == nil || c.HTTP.Host == "" {
		return s.endpoint
	}
	scheme := "http"
	if c.HTTP.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.HTTP.Host
}

func (s *Service) queueURL(base, name string) string {
	return base + "/" + s.host.AccountID() + "/" + name
}

// queueName resolves a QueueUrl of any host whose path is /ACCOUNT/NAME; an empty one
// falls back to the request's own path (awsquery posts to the queue URL).
func (s *Service) queueName(c *account.Call, raw string) (string, *account.Error) {
	path := ""
	if raw == "" {
		if c.HTTP != nil {
			path = c.HTTP.URL.Path
		}
		if strings.Trim(path, "/") == "" {
			return "", errMissingParameter("QueueUrl")
		}
		raw = path
	} else {
		u, err := url.Parse(raw)
		if err != nil {
			return "", errInvalidAddress(raw)
		}
		path = u.Path
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != 2 || parts[1] == "" {
		return "", errInvalidAddress(raw)
	}
	if parts[0] != s.host.AccountID() {
		return "", errQueueNotFound()
	}
	return parts[1], nil
}

// EnsureQueue creates name with default attributes unless it exists, and returns its
// URL under Options.Endpoint.
func (s *Service) EnsureQueue(name string) (string, error) {
	s.mu.Lock()
	q, ops, e := s.m.createQueue(name, nil, nil, s.host.Now())
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return "", fmt.Errorf("ensuring sqs queue %q: %w", name, e)
	}
	if e := commit(wait, "queue "+name); e != nil {
		return "", fmt.Errorf("ensuring sqs queue %q: %w", name, e)
	}
	return s.queueURL(s.endpoint, q.Name), nil
}

// Send enqueues body on queueName as EventBridge delivers an event: no attributes, the
// queue's own delay.
func (s *Service) Send(queueName, body string) error {
	s.mu.Lock()
	q, e := s.m.queue(queueName)
	var ops []account.Op
	if e == nil {
		_, ops, e = q.send(sendInput{Body: body, SenderID: "AIDAEVENTBRIDGE"}, s.newMessageID(), s.host.Now())
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return fmt.Errorf("sending to sqs queue %q: %w", queueName, e)
	}
	if e := commit(wait, "message"); e != nil {
		return fmt.Errorf("sending to sqs queue %q: %w", queueName, e)
	}
	return nil
}

// MessageView is one queued message as the lab's evidence shows it.
type MessageView struct {
	ID              string
	Body            string
	SentAt          time.Time
	ReceiveCount    int
	FirstReceivedAt time.Time // zero until first received
	InFlight        bool      // received and still hidden by its visibility timeout
	Delayed         bool      // not yet visible because of DelaySeconds
	VisibleAt       time.Time
	Attributes      map[string]string // message attributes' string values
}

// Messages lists queueName's messages in send order.
func (s *Service) Messages(queueName string) ([]MessageView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.m.queue(queueName)
	if e != nil {
		return nil, fmt.Errorf("listing sqs queue %q: %w", queueName, e)
	}
	now := s.host.Now()
	out := make([]MessageView, 0, len(q.msgs))
	for _, msg := range q.msgs {
		v := MessageView{ID: msg.ID, Body: msg.Body, SentAt: msg.SentAt, ReceiveCount: msg.ReceiveCount,
			FirstReceivedAt: msg.FirstReceiveAt, InFlight: msg.inFlight(now), Delayed: msg.delayed(now),
			VisibleAt: msg.VisibleAt}
		for k, a := range msg.Attrs {
			if v.Attributes == nil {
				v.Attributes = map[string]string{}
			}
			v.Attributes[k] = a.StringValue
		}
		out = append(out, v)
	}
	return out, nil
}

// Reset deletes every queue and message.
func (s *Service) Reset() error {
	s.mu.Lock()
	var ops []account.Op
	for _, name := range account.SortedKeys(s.m.queues) {
		ops = append(ops, s.m.deleteQueue(s.m.queues[name])...)
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e := commit(wait, "sqs reset"); e != nil {
		return fmt.Errorf("resetting sqs: %w", e)
	}
	return nil
}

// newMessageID is a UUID, as SQS message IDs are.
func (s *Service) newMessageID() string { return s.host.NewID("") }
