package events_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	// The provider's own parsers: these subpackages are light (the interruption
	// package itself pulls in ~1000 packages), and are what its parser.go dispatches to
	// by (version, source, detail-type).
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption/messages"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption/messages/capacityreservationinterruption"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption/messages/rebalancerecommendation"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption/messages/scheduledchange"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption/messages/spotinterruption"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption/messages/statechange"

	"github.com/karplab/karplab/fakeec2/events"
)

// parsers mirrors interruption.DefaultParsers.
var parsers = []messages.Parser{
	statechange.Parser{}, spotinterruption.Parser{}, scheduledchange.Parser{},
	rebalancerecommendation.Parser{}, capacityreservationinterruption.Parser{},
}

// parse does what interruption.EventParser.Parse does: pick the parser by the
// metadata's version, source and detail-type; nil means Karpenter ignores the event.
func parse(t *testing.T, doc string) (messages.Metadata, messages.Message) {
	t.Helper()
	var md messages.Metadata
	if err := json.Unmarshal([]byte(doc), &md); err != nil {
		t.Fatalf("unmarshalling metadata of %s: %v", doc, err)
	}
	for _, p := range parsers {
		if p.Version() == md.Version && p.Source() == md.Source && p.DetailType() == md.DetailType {
			msg, err := p.Parse(doc)
			if err != nil {
				t.Fatalf("parsing %s: %v", doc, err)
			}
			return md, msg
		}
	}
	t.Fatalf("no Karpenter parser for version %q source %q detail-type %q", md.Version, md.Source, md.DetailType)
	return md, nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestKarpenterParsesEvents(t *testing.T) {
	const acct, region, id = "123456789012", "eu-west-2", "i-0123456789abcdef0"
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	start, end := at.Add(14*24*time.Hour), at.Add(15*24*time.Hour)
	arn := "arn:aws:ec2:eu-west-2:123456789012:instance/" + id
	tests := []struct {
		name          string
		doc           string
		wantKind      messages.Kind // "" : Karpenter ignores it
		wantIDs       []string
		wantResources []string
	}{
		{"spot interruption", events.SpotInterruptionWarning(acct, region, id, at, "terminate"), messages.SpotInterruptionKind, []string{id}, []string{arn}},
		{"rebalance", events.RebalanceRecommendation(acct, region, id, at), messages.RebalanceRecommendationKind, []string{id}, []string{arn}},
		{"stopping", events.StateChange(acct, region, id, at, "stopping"), messages.InstanceStoppedKind, []string{id}, []string{arn}},
		{"stopped", events.StateChange(acct, region, id, at, "stopped"), messages.InstanceStoppedKind, []string{id}, []string{arn}},
		{"shutting-down", events.StateChange(acct, region, id, at, "shutting-down"), messages.InstanceTerminatedKind, []string{id}, []string{arn}},
		{"terminated", events.StateChange(acct, region, id, at, "terminated"), messages.InstanceTerminatedKind, []string{id}, []string{arn}},
		{"running is ignored", events.StateChange(acct, region, id, at, "running"), "", nil, []string{arn}},
		{"scheduled retirement", events.ScheduledChange(acct, region, []string{id, "i-0fedcba9876543210"}, at, start, end, events.EventTypeRetirement),
			messages.ScheduledChangeKind, []string{id, "i-0fedcba9876543210"}, []string{id, "i-0fedcba9876543210"}},
		{"capacity reservation", events.CapacityReservationInterruption(acct, region, id, at, "terminate"), messages.CapacityReservationInterruptionKind, []string{id}, []string{arn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md, msg := parse(t, tt.doc)
			if !uuidRE.MatchString(md.ID) {
				t.Errorf("id %q is not a UUID", md.ID)
			}
			if md.Account != acct || md.Region != region || !md.Time.Equal(at) || md.Time.Location() != time.UTC {
				t.Errorf("metadata = %+v", md)
			}
			if d := cmp.Diff(tt.wantResources, md.Resources); d != "" {
				t.Errorf("resources (-want +got):\n%s", d)
			}
			if tt.wantKind == "" {
				if msg != nil {
					t.Errorf("Karpenter would act on %s as %s", tt.doc, msg.Kind())
				}
				return
			}
			if msg == nil {
				t.Fatalf("Karpenter's parser ignored %s", tt.doc)
			}
			if msg.Kind() != tt.wantKind {
				t.Errorf("kind = %s, want %s", msg.Kind(), tt.wantKind)
			}
			if d := cmp.Diff(tt.wantIDs, msg.EC2InstanceIDs()); d != "" {
				t.Errorf("instance IDs (-want +got):\n%s", d)
			}
		})
	}
}

// The exact detail fields, against the provider's struct tags and AWS's examples.
func TestDetails(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		doc  string
		want map[string]any
	}{
		{"spot", events.SpotInterruptionWarning("1", "r", "i-1", at, "hibernate"),
			map[string]any{"instance-id": "i-1", "instance-action": "hibernate"}},
		{"rebalance", events.RebalanceRecommendation("1", "r", "i-1", at), map[string]any{"instance-id": "i-1"}},
		{"state", events.StateChange("1", "r", "i-1", at, "pending"), map[string]any{"instance-id": "i-1", "state": "pending"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				Time   string         `json:"time"`
				Detail map[string]any `json:"detail"`
			}
			if err := json.Unmarshal([]byte(tt.doc), &got); err != nil {
				t.Fatal(err)
			}
			if got.Time != "2026-03-01T12:00:00Z" {
				t.Errorf("time = %q", got.Time)
			}
			if d := cmp.Diff(tt.want, got.Detail); d != "" {
				t.Errorf("detail (-want +got):\n%s", d)
			}
		})
	}

	var health struct {
		Detail scheduledchange.Detail `json:"detail"`
	}
	doc := events.ScheduledChange("1", "eu-west-2", []string{"i-1"}, at, at, time.Time{}, events.EventTypeRetirement)
	if err := json.Unmarshal([]byte(doc), &health); err != nil {
		t.Fatal(err)
	}
	d := health.Detail
	if d.Service != "EC2" || d.EventTypeCategory != "scheduledChange" || d.EventTypeCode != events.EventTypeRetirement ||
		d.StartTime != "Sun, 01 Mar 2026 12:00:00 GMT" || d.EndTime != "" || len(d.EventDescription) != 1 ||
		!regexp.MustCompile(`^arn:aws:health:eu-west-2::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_`).MatchString(d.EventARN) {
		t.Errorf("health detail = %+v", d)
	}
}
