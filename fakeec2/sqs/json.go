package sqs

import (
	"github.com/karplab/karplab/fakeec2/account"
)

// jsonPrefix is the service part of SQS's X-Amz-Target.
const jsonPrefix = "AmazonSQS"

// jsonTable is SQS's awsJson1_0 dispatch table, bound to s.
func (s *Service) jsonTable() map[string]account.JSONActionSpec {
	ro := func(h account.JSONHandler) account.JSONActionSpec {
		return account.JSONActionSpec{Handler: h, ReadOnly: true}
	}
	rw := func(h account.JSONHandler) account.JSONActionSpec { return account.JSONActionSpec{Handler: h} }
	return map[string]account.JSONActionSpec{
		"CreateQueue":             rw(account.JSONAction(s.createQueue)),
		"GetQueueUrl":             ro(account.JSONAction(s.getQueueURL)),
		"ListQueues":              ro(account.JSONAction(s.listQueues)),
		"GetQueueAttributes":      ro(account.JSONAction(s.getQueueAttributes)),
		"SetQueueAttributes":      rw(account.JSONAction(s.setQueueAttributes)),
		"DeleteQueue":             rw(account.JSONAction(s.deleteQueue)),
		"PurgeQueue":              rw(account.JSONAction(s.purgeQueue)),
		"SendMessage":             rw(account.JSONAction(s.sendMessage)),
		"SendMessageBatch":        rw(account.JSONAction(s.sendMessageBatch)),
		"ReceiveMessage":          rw(account.JSONAction(s.receiveMessage)),
		"DeleteMessage":           rw(account.JSONAction(s.deleteMessage)),
		"DeleteMessageBatch":      rw(account.JSONAction(s.deleteMessageBatch)),
		"ChangeMessageVisibility": rw(account.JSONAction(s.changeMessageVisibility)),
	}
}

// serveJSON answers awsJson1_0. Every error also carries x-amzn-query-error, as SQS's
// awsQueryCompatible endpoint sends it: the SDK takes its error code from there.
func (s *Service) serveJSON(c *account.Call) *account.Response {
	resp := account.ServeJSON(c, account.JSON10, jsonPrefix, s.table)
	if resp.Err != nil && resp.Err.QueryCode == "" {
		fault := "Sender"
		if resp.Err.Receiver {
			fault = "Receiver"
		}
		resp.Header.Set("X-Amzn-Query-Error", resp.Err.Code+";"+fault)
	}
	return resp
}
