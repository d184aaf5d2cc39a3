package sqs

import (
	"net/url"

	"github.com/karplab/karplab/fakeec2/account"
)

// jsonPrefix is the service part of SQS's X-Amz-Target.
const jsonPrefix = "AmazonSQS"

// protocols holds SQS's dispatch tables, one an action for each protocol, bound to s.
type protocols struct {
	json  map[string]account.JSONActionSpec
	query account.QueryService
}

// action is one row of the tables: the same action, decoded from JSON or from the form.
type action struct {
	name     string
	readOnly bool
	json     account.JSONHandler
	query    account.QueryHandler
}

func newAction[In, Out any](name string, readOnly bool, run func(*account.Call, *In) (*Out, *account.Error),
	dec func(url.Values) (*In, *account.Error), enc func(*Out) any) action {
	return action{name: name, readOnly: readOnly, json: account.JSONAction(run), query: account.QueryAction(dec, run, enc)}
}

func (s *Service) tables() protocols {
	const ro, rw = true, false
	actions := []action{
		newAction("CreateQueue", rw, s.createQueue, decCreateQueue, encQueueURL),
		newAction("GetQueueUrl", ro, s.getQueueURL, decGetQueueURL, encQueueURL),
		newAction("ListQueues", ro, s.listQueues, decListQueues, encListQueues),
		newAction("GetQueueAttributes", ro, s.getQueueAttributes, decGetAttributes, encAttributes),
		newAction("SetQueueAttributes", rw, s.setQueueAttributes, decSetAttributes, noResult),
		newAction("DeleteQueue", rw, s.deleteQueue, decQueue, noResult),
		newAction("PurgeQueue", rw, s.purgeQueue, decQueue, noResult),
		newAction("SendMessage", rw, s.sendMessage, decSend, encSend),
		newAction("SendMessageBatch", rw, s.sendMessageBatch, decSendBatch, encSendBatch),
		newAction("ReceiveMessage", rw, s.receiveMessage, decReceive, encReceive),
		newAction("DeleteMessage", rw, s.deleteMessage, decDeleteMessage, noResult),
		newAction("DeleteMessageBatch", rw, s.deleteMessageBatch, decDeleteBatch, encDeleteBatch),
		newAction("ChangeMessageVisibility", rw, s.changeMessageVisibility, decChangeVisibility, noResult),
	}
	p := protocols{json: map[string]account.JSONActionSpec{}, query: account.QueryService{
		Namespace: Namespace, Version: Version, Actions: map[string]account.QueryActionSpec{},
		VersionOptional: true, InvalidAction: func(action, _ string) *account.Error {
			return account.BadRequest("InvalidAction", "The action %s is not valid for this endpoint.", action)
		}}}
	for _, a := range actions {
		p.json[a.name] = account.JSONActionSpec{Handler: a.json, ReadOnly: a.readOnly}
		p.query.Actions[a.name] = account.QueryActionSpec{Handler: a.query, ReadOnly: a.readOnly}
	}
	return p
}

// serveJSON answers awsJson1_0. Every error also carries x-amzn-query-error, as SQS's
// awsQueryCompatible endpoint sends it: the SDK takes its error code from there.
func (s *Service) serveJSON(c *account.Call) *account.Response {
	resp := account.ServeJSON(c, account.JSON10, jsonPrefix, s.table.json)
	if resp.Err != nil && resp.Err.QueryCode == "" {
		fault := "Sender"
		if resp.Err.Receiver {
			fault = "Receiver"
		}
		resp.Header.Set("X-Amzn-Query-Error", resp.Err.Code+";"+fault)
	}
	return resp
}
