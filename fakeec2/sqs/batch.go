package sqs

import (
	"regexp"

	"github.com/karplab/karplab/fakeec2/account"
)

var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

type sendBatchEntry struct {
	Id                string //nolint:revive // SQS's spelling
	MessageBody       string
	DelaySeconds      *int
	MessageAttributes map[string]attrValue
}

type sendBatchIn struct {
	QueueUrl string //nolint:revive // SQS's spelling
	Entries  []sendBatchEntry
}

type sendBatchResult struct {
	Id                     string //nolint:revive // SQS's spelling
	MessageId              string //nolint:revive // SQS's spelling
	MD5OfMessageBody       string
	MD5OfMessageAttributes string `json:",omitempty"`
}

type batchError struct {
	Id          string //nolint:revive // SQS's spelling
	SenderFault bool
	Code        string
	Message     string
}

type sendBatchOut struct {
	Successful []sendBatchResult
	Failed     []batchError
}

type deleteBatchEntry struct {
	Id            string //nolint:revive // SQS's spelling
	ReceiptHandle string
}

type deleteBatchIn struct {
	QueueUrl string //nolint:revive // SQS's spelling
	Entries  []deleteBatchEntry
}

type batchID struct {
	Id string //nolint:revive // SQS's spelling
}

type deleteBatchOut struct {
	Successful []batchID
	Failed     []batchError
}

// checkBatch applies the whole-request rules every batch action shares.
func checkBatch(entry string, ids []string) *account.Error {
	if len(ids) == 0 {
		return errEmptyBatch(entry)
	}
	if len(ids) > maxBatch {
		return errTooManyEntries(len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !batchIDRE.MatchString(id) {
			return errInvalidBatchID(id)
		}
		if seen[id] {
			return errBatchIDsNotDistinct(id)
		}
		seen[id] = true
	}
	return nil
}

func entryError(id string, e *account.Error) batchError {
	return batchError{Id: id, SenderFault: !e.Receiver, Code: e.Code, Message: e.Message}
}

// runBatch is what the batch actions share: the policy (as the single action) and the
// whole-request checks first, then each entry under the lock, its failure reported in the
// answer, and the writes of the successes committed together.
func runBatch[E any](s *Service, c *account.Call, action, queueURL, entry, what string, entries []E,
	id func(E) string, run func(q *queue, en E) ([]account.Op, *account.Error)) ([]batchError, *account.Error) {
	name, e := s.resolve(c, action, queueURL)
	if e != nil {
		return nil, e
	}
	ids := make([]string, len(entries))
	for i, en := range entries {
		ids[i] = id(en)
	}
	if e := checkBatch(entry, ids); e != nil {
		return nil, e
	}
	failed := []batchError{}
	s.mu.Lock()
	q, e := s.m.queue(name)
	var ops []account.Op
	for i := 0; e == nil && i < len(entries); i++ {
		eops, ee := run(q, entries[i])
		if ee != nil {
			failed = append(failed, entryError(ids[i], ee))
			continue
		}
		ops = append(ops, eops...)
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	if e := commit(wait, what); e != nil {
		return nil, e
	}
	return failed, nil
}

func (s *Service) sendMessageBatch(c *account.Call, in *sendBatchIn) (*sendBatchOut, *account.Error) {
	out := &sendBatchOut{Successful: []sendBatchResult{}}
	failed, e := runBatch(s, c, "SendMessage", in.QueueUrl, "SendMessageBatchRequestEntry", "messages", in.Entries,
		func(en sendBatchEntry) string { return en.Id },
		func(q *queue, en sendBatchEntry) ([]account.Op, *account.Error) {
			msg, ops, e := q.send(sendInput{Body: en.MessageBody, Delay: en.DelaySeconds, Attrs: en.MessageAttributes,
				SenderID: c.Caller}, s.newMessageID(), s.host.Now())
			if e != nil {
				return nil, e
			}
			out.Successful = append(out.Successful, sendBatchResult{Id: en.Id, MessageId: msg.ID,
				MD5OfMessageBody: msg.MD5Body, MD5OfMessageAttributes: msg.MD5Attrs})
			return ops, nil
		})
	if e != nil {
		return nil, e
	}
	out.Failed = failed
	return out, nil
}

func (s *Service) deleteMessageBatch(c *account.Call, in *deleteBatchIn) (*deleteBatchOut, *account.Error) {
	out := &deleteBatchOut{Successful: []batchID{}}
	failed, e := runBatch(s, c, "DeleteMessage", in.QueueUrl, "DeleteMessageBatchRequestEntry", "deletes", in.Entries,
		func(en deleteBatchEntry) string { return en.Id },
		func(q *queue, en deleteBatchEntry) ([]account.Op, *account.Error) {
			ops, e := q.deleteMessage(en.ReceiptHandle)
			if e != nil {
				return nil, e
			}
			out.Successful = append(out.Successful, batchID{Id: en.Id})
			return ops, nil
		})
	if e != nil {
		return nil, e
	}
	out.Failed = failed
	return out, nil
}
