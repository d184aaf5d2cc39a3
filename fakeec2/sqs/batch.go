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

func (s *Service) sendMessageBatch(c *account.Call, in *sendBatchIn) (*sendBatchOut, *account.Error) {
	name, e := s.resolve(c, "SendMessage", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	ids := make([]string, len(in.Entries))
	for i, en := range in.Entries {
		ids[i] = en.Id
	}
	if e := checkBatch("SendMessageBatchRequestEntry", ids); e != nil {
		return nil, e
	}
	out := &sendBatchOut{Successful: []sendBatchResult{}, Failed: []batchError{}}
	s.mu.Lock()
	q, e := s.m.queue(name)
	var ops []account.Op
	for _, en := range in.Entries {
		if e != nil {
			break
		}
		msg, mops, me := q.send(sendInput{Body: en.MessageBody, Delay: en.DelaySeconds, Attrs: en.MessageAttributes,
			SenderID: c.Caller}, s.newMessageID(), s.host.Now())
		if me != nil {
			out.Failed = append(out.Failed, entryError(en.Id, me))
			continue
		}
		ops = append(ops, mops...)
		out.Successful = append(out.Successful, sendBatchResult{Id: en.Id, MessageId: msg.ID,
			MD5OfMessageBody: msg.MD5Body, MD5OfMessageAttributes: msg.MD5Attrs})
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	if e := commit(wait, "messages"); e != nil {
		return nil, e
	}
	return out, nil
}

func (s *Service) deleteMessageBatch(c *account.Call, in *deleteBatchIn) (*deleteBatchOut, *account.Error) {
	name, e := s.resolve(c, "DeleteMessage", in.QueueUrl)
	if e != nil {
		return nil, e
	}
	ids := make([]string, len(in.Entries))
	for i, en := range in.Entries {
		ids[i] = en.Id
	}
	if e := checkBatch("DeleteMessageBatchRequestEntry", ids); e != nil {
		return nil, e
	}
	out := &deleteBatchOut{Successful: []batchID{}, Failed: []batchError{}}
	s.mu.Lock()
	q, e := s.m.queue(name)
	var ops []account.Op
	for _, en := range in.Entries {
		if e != nil {
			break
		}
		dops, de := q.deleteMessage(en.ReceiptHandle)
		if de != nil {
			out.Failed = append(out.Failed, entryError(en.Id, de))
			continue
		}
		ops = append(ops, dops...)
		out.Successful = append(out.Successful, batchID{Id: en.Id})
	}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	if e := commit(wait, "deletes"); e != nil {
		return nil, e
	}
	return out, nil
}
