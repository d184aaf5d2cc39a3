package events

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Sources and detail types, as EventBridge names them (and Karpenter's parsers key on).
const (
	SourceEC2    = "aws.ec2"
	SourceHealth = "aws.health"

	DetailSpotInterruption        = "EC2 Spot Instance Interruption Warning"
	DetailRebalanceRecommendation = "EC2 Instance Rebalance Recommendation"
	DetailStateChange             = "EC2 Instance State-change Notification"
	DetailCapacityReservation     = "EC2 Capacity Reservation Instance Interruption Warning"
	DetailHealth                  = "AWS Health Event"
)

// EventTypeRetirement is the Health event code of a scheduled instance retirement.
const EventTypeRetirement = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"

// envelope is EventBridge's event, its fields in the order AWS writes them.
type envelope struct {
	Version    string   `json:"version"`
	ID         string   `json:"id"`
	DetailType string   `json:"detail-type"`
	Source     string   `json:"source"`
	Account    string   `json:"account"`
	Time       string   `json:"time"`
	Region     string   `json:"region"`
	Resources  []string `json:"resources"`
	Detail     any      `json:"detail"`
}

type instanceDetail struct {
	InstanceID string `json:"instance-id"`
}

type actionDetail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"`
}

type stateDetail struct {
	InstanceID string `json:"instance-id"`
	State      string `json:"state"`
}

func instanceARN(account, region, instanceID string) string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", region, account, instanceID)
}

// newUUID is a random version-4 UUID, as EventBridge event IDs are.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func encode(source, detailType, account, region string, at time.Time, resources []string, detail any) string {
	if resources == nil {
		resources = []string{}
	}
	b, err := json.Marshal(envelope{Version: "0", ID: newUUID(), DetailType: detailType, Source: source,
		Account: account, Time: at.UTC().Format(time.RFC3339), Region: region, Resources: resources, Detail: detail})
	if err != nil {
		panic(fmt.Sprintf("encoding an event of fixed shape: %v", err)) // strings only: cannot happen
	}
	return string(b)
}

func ec2Event(detailType, account, region, instanceID string, at time.Time, detail any) string {
	return encode(SourceEC2, detailType, account, region, at,
		[]string{instanceARN(account, region, instanceID)}, detail)
}

// SpotInterruptionWarning is the two-minute warning before EC2 reclaims a Spot
// instance; action is "terminate", "stop" or "hibernate".
func SpotInterruptionWarning(account, region, instanceID string, at time.Time, action string) string {
	return ec2Event(DetailSpotInterruption, account, region, instanceID, at,
		actionDetail{InstanceID: instanceID, InstanceAction: action})
}

// RebalanceRecommendation signals a Spot instance at elevated risk of interruption.
func RebalanceRecommendation(account, region, instanceID string, at time.Time) string {
	return ec2Event(DetailRebalanceRecommendation, account, region, instanceID, at,
		instanceDetail{InstanceID: instanceID})
}

// StateChange reports an instance entering state: "pending", "running", "stopping",
// "stopped", "shutting-down" or "terminated".
func StateChange(account, region, instanceID string, at time.Time, state string) string {
	return ec2Event(DetailStateChange, account, region, instanceID, at,
		stateDetail{InstanceID: instanceID, State: state})
}

// CapacityReservationInterruption warns that a capacity reservation (interruptible
// ODCR) is reclaiming an instance; action is "terminate" or "stop".
func CapacityReservationInterruption(account, region, instanceID string, at time.Time, action string) string {
	return ec2Event(DetailCapacityReservation, account, region, instanceID, at,
		actionDetail{InstanceID: instanceID, InstanceAction: action})
}

type healthDescription struct {
	Language          string `json:"language"`
	LatestDescription string `json:"latestDescription"`
}

type healthEntity struct {
	EntityValue string `json:"entityValue"`
}

type healthDetail struct {
	EventARN          string              `json:"eventArn"`
	Service           string              `json:"service"`
	EventScopeCode    string              `json:"eventScopeCode"`
	StatusCode        string              `json:"statusCode"`
	EventRegion       string              `json:"eventRegion"`
	EventTypeCode     string              `json:"eventTypeCode"`
	EventTypeCategory string              `json:"eventTypeCategory"`
	StartTime         string              `json:"startTime"`
	EndTime           string              `json:"endTime,omitempty"`
	EventDescription  []healthDescription `json:"eventDescription"`
	AffectedEntities  []healthEntity      `json:"affectedEntities"`
}

// healthTime is how AWS Health writes startTime/endTime ("Sat, 05 Jun 2021 15:10:09 GMT").
func healthTime(t time.Time) string { return t.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT") }

// ScheduledChange is an AWS Health "scheduledChange" event for EC2 (eventTypeCode such
// as EventTypeRetirement) affecting instanceIDs between start and end (zero: open).
// As Health does, it lists the affected instance IDs, not ARNs, as resources.
func ScheduledChange(account, region string, instanceIDs []string, at, start, end time.Time, eventTypeCode string) string {
	d := healthDetail{
		EventARN:          fmt.Sprintf("arn:aws:health:%s::event/EC2/%s/%s_%s", region, eventTypeCode, eventTypeCode, newUUID()),
		Service:           "EC2",
		EventScopeCode:    "ACCOUNT_SPECIFIC",
		StatusCode:        "upcoming",
		EventRegion:       region,
		EventTypeCode:     eventTypeCode,
		EventTypeCategory: "scheduledChange",
		StartTime:         healthTime(start),
		EventDescription: []healthDescription{{Language: "en_US",
			LatestDescription: fmt.Sprintf("EC2 has scheduled %s for the affected instances.", eventTypeCode)}},
		AffectedEntities: make([]healthEntity, len(instanceIDs)),
	}
	if !end.IsZero() {
		d.EndTime = healthTime(end)
	}
	for i, id := range instanceIDs {
		d.AffectedEntities[i] = healthEntity{EntityValue: id}
	}
	return encode(SourceHealth, DetailHealth, account, region, at, append([]string{}, instanceIDs...), d)
}
