package billing

import (
	"math"
	"time"
)

// ebsPricePerGBMonth is eu-west-2's EBS storage price in USD per GB-month (AWS's public
// price list; IOPS and throughput above the gp3 baseline are not billed here).
var ebsPricePerGBMonth = map[string]float64{
	"gp3": 0.0928, "gp2": 0.116, "io1": 0.138, "io2": 0.138, "st1": 0.053, "sc1": 0.0174, "standard": 0.058,
}

// snapshotPricePerGBMonth is eu-west-2's EBS snapshot (standard tier) price.
const snapshotPricePerGBMonth = 0.053

const hoursPerMonth = 730

// LedgerEntry is one billed resource: an instance (billed from running until it starts
// shutting down) or an EBS volume (billed from creation until deleted).
type LedgerEntry struct {
	ResourceID   string `json:"resourceId"`
	ResourceType string `json:"resourceType"` // "instance" or "volume"
	Type         string `json:"type"`         // instance type or volume type
	CapacityType string `json:"capacityType,omitempty"`
	SizeGiB      int32  `json:"sizeGiB,omitempty"`
	// Encrypted is a volume's encryption at creation, kept after the volume is deleted.
	Encrypted    *bool      `json:"encrypted,omitempty"`
	Zone         string     `json:"zone"`
	InstanceID   string     `json:"instanceId,omitempty"` // a volume's instance at launch
	PricePerHour float64    `json:"pricePerHour"`
	Started      time.Time  `json:"started"`
	Stopped      *time.Time `json:"stopped,omitempty"`
	AccruedUSD   float64    `json:"accruedUSD"` // computed when read
	// PriorUSD is what earlier billed periods cost (a stopped and started instance, a
	// resized volume); the current period runs from Resumed (Started when nil).
	PriorUSD float64           `json:"priorUSD,omitempty"`
	Resumed  *time.Time        `json:"resumed,omitempty"`
	Tags     map[string]string `json:"tags"`
	Caller   string            `json:"caller,omitempty"`
}

// Accrue is what the entry cost from Started until now (or until it stopped).
func (e *LedgerEntry) Accrue(now time.Time) float64 {
	end := now
	if e.Stopped != nil && e.Stopped.Before(end) {
		end = *e.Stopped
	}
	start := e.current()
	if !end.After(start) {
		return e.PriorUSD
	}
	return e.PriorUSD + e.PricePerHour*end.Sub(start).Hours()
}

// current is when the current billed period began.
func (e *LedgerEntry) current() time.Time {
	if e.Resumed != nil {
		return *e.Resumed
	}
	return e.Started
}

// AccrueBetween is what the entry cost within [from, to]: its current billed period
// exactly, its earlier ones (PriorUSD) as if spread evenly from Started to Resumed.
func (e *LedgerEntry) AccrueBetween(from, to time.Time) float64 {
	cur := e.current()
	end := to
	if e.Stopped != nil && e.Stopped.Before(end) {
		end = *e.Stopped
	}
	total := e.PricePerHour * overlap(cur, end, from, to).Hours()
	if e.PriorUSD > 0 {
		if span := cur.Sub(e.Started); span > 0 {
			total += e.PriorUSD * float64(overlap(e.Started, cur, from, to)) / float64(span)
		} else if !e.Started.Before(from) && !e.Started.After(to) {
			total += e.PriorUSD
		}
	}
	return total
}

// Outlook is what a still billing entry costs per hour at now (0 if its current period
// starts later) and what it adds from now until end; a stopped entry, or one that starts
// billing after end, adds nothing.
func (e *LedgerEntry) Outlook(now, end time.Time) (perHour, forecastUSD float64) {
	if e.Stopped != nil {
		return 0, 0
	}
	from := e.current()
	if !from.After(now) {
		perHour = e.PricePerHour
	} else if !from.Before(end) {
		return 0, 0
	}
	return perHour, e.PricePerHour * end.Sub(later(from, now)).Hours()
}

// overlap is how long [a1, a2] and [b1, b2] share.
func overlap(a1, a2, b1, b2 time.Time) time.Duration {
	if d := earlier(a2, b2).Sub(later(a1, b1)); d > 0 {
		return d
	}
	return 0
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// VolumeHourly is an EBS volume's price per hour (gp3's for a type without a price).
func VolumeHourly(volumeType string, sizeGiB int32) float64 {
	p, ok := ebsPricePerGBMonth[volumeType]
	if !ok {
		p = ebsPricePerGBMonth["gp3"]
	}
	return Round6(p * float64(sizeGiB) / hoursPerMonth)
}

// SnapshotHourly is an EBS snapshot's price per hour, on its source volume's size.
func SnapshotHourly(sizeGiB int32) float64 {
	return Round6(snapshotPricePerGBMonth * float64(sizeGiB) / hoursPerMonth)
}

// Round6 rounds to a millionth of a dollar, as the ledger reports USD.
func Round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }
