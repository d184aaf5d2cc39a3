package sqs_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
)

// BenchmarkReceiveLongPoll measures how soon a waiting long poll returns after a
// SendMessage: the latency Karpenter sees between an interruption and its reaction.
func BenchmarkReceiveLongPoll(b *testing.B) {
	e := newEnv(b)
	url := e.createQueue(b, "q", nil)
	ctx := context.Background()
	var total, worst time.Duration
	n := max(b.N, 20) // make bench runs -benchtime 1x: one sample says little
	for range n {
		got := make(chan time.Time, 1)
		go func() {
			out, err := e.client.ReceiveMessage(ctx, karpenterReceive(url))
			if err != nil || len(out.Messages) != 1 {
				b.Errorf("ReceiveMessage: %v, %v", out, err)
			}
			got <- time.Now()
			if err == nil && len(out.Messages) == 1 {
				_, _ = e.client.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: out.Messages[0].ReceiptHandle})
			}
		}()
		time.Sleep(5 * time.Millisecond) // let the poll start waiting
		sent := time.Now()
		if _, err := e.client.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("evt")}); err != nil {
			b.Fatal(err)
		}
		d := (<-got).Sub(sent)
		total, worst = total+d, max(worst, d)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "ms/send-to-receive")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms/worst")
}
