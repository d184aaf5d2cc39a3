package sqs_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The awsquery form older CLIs send, posted to the queue URL, answered in XML.
func TestQueryProtocol(t *testing.T) {
	e := newEnv(t)
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		form.Set("Version", "2012-11-05")
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDLAB/20260301/eu-west-2/sqs/aws4_request, SignedHeaders=host, Signature=x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post("/", url.Values{"Action": {"CreateQueue"}, "QueueName": {"q"},
		"Attribute.1.Name": {"VisibilityTimeout"}, "Attribute.1.Value": {"40"}})
	var created struct {
		URL string `xml:"CreateQueueResult>QueueUrl"`
	}
	if err := xml.Unmarshal([]byte(body), &created); err != nil || status != 200 {
		t.Fatalf("CreateQueue: %d %s", status, body)
	}
	if want := e.srv.URL + "/123456789012/q"; created.URL != want {
		t.Errorf("QueueUrl = %q, want %q", created.URL, want)
	}
	if !strings.Contains(body, `xmlns="http://queue.amazonaws.com/doc/2012-11-05/"`) {
		t.Errorf("no SQS namespace in %s", body)
	}

	tests := []struct {
		name       string
		path       string
		form       url.Values
		wantStatus int
		want       []string // substrings of the answer
	}{
		{"send to the queue path", "/123456789012/q", url.Values{"Action": {"SendMessage"}, "MessageBody": {"hello"},
			"MessageAttribute.1.Name": {"kind"}, "MessageAttribute.1.Value.DataType": {"String"}, "MessageAttribute.1.Value.StringValue": {"spot"}},
			200, []string{"<MD5OfMessageBody>5d41402abc4b2a76b9719d911017c592</MD5OfMessageBody>", "<MessageId>"}},
		{"attributes", "/123456789012/q", url.Values{"Action": {"GetQueueAttributes"}, "AttributeName.1": {"VisibilityTimeout"},
			"AttributeName.2": {"ApproximateNumberOfMessages"}},
			200, []string{"<Attribute><Name>ApproximateNumberOfMessages</Name><Value>1</Value></Attribute><Attribute><Name>VisibilityTimeout</Name><Value>40</Value></Attribute>"}},
		{"receive", "/", url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {e.srv.URL + "/123456789012/q"},
			"AttributeName.1": {"All"}, "MessageAttributeName.1": {"All"}, "MaxNumberOfMessages": {"10"}},
			200, []string{"<Body>hello</Body>", "<Attribute><Name>ApproximateReceiveCount</Name><Value>1</Value></Attribute>",
				"<MessageAttribute><Name>kind</Name><Value><StringValue>spot</StringValue><DataType>String</DataType></Value></MessageAttribute>"}},
		{"missing queue", "/123456789012/nope", url.Values{"Action": {"SendMessage"}, "MessageBody": {"x"}},
			400, []string{"<Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>"}},
		{"unknown action", "/", url.Values{"Action": {"Frobnicate"}}, 400, []string{"<Code>InvalidAction</Code>"}},
		{"list", "/", url.Values{"Action": {"ListQueues"}}, 200, []string{"<ListQueuesResult><QueueUrl>" + e.srv.URL + "/123456789012/q</QueueUrl></ListQueuesResult>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(tt.path, tt.form)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d: %s", status, tt.wantStatus, body)
			}
			var missing []string
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					missing = append(missing, w)
				}
			}
			if d := cmp.Diff([]string(nil), missing); d != "" {
				t.Errorf("answer %s lacks (-want +got):\n%s", body, d)
			}
		})
	}
}
