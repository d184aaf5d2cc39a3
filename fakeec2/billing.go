package fakeec2

import (
	"math"
	"sort"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// ebsPricePerGBMonth is eu-west-2's EBS storage price in USD per GB-month (AWS's public
// price list; IOPS and throughput above the gp3 baseline are not billed here).
var ebsPricePerGBMonth = map[string]float64{
	"gp3": 0.0928, "gp2": 0.116, "io1": 0.138, "io2": 0.138, "st1": 0.053, "sc1": 0.0174, "standard": 0.058,
}

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

func (e *LedgerEntry) accrue(now time.Time) float64 {
	end := now
	if e.Stopped != nil && e.Stopped.Before(end) {
		end = *e.Stopped
	}
	start := e.Started
	if e.Resumed != nil {
		start = *e.Resumed
	}
	if !end.After(start) {
		return e.PriorUSD
	}
	return e.PriorUSD + e.PricePerHour*end.Sub(start).Hours()
}

// snapshotPricePerGBMonth is eu-west-2's EBS snapshot (standard tier) price.
const snapshotPricePerGBMonth = 0.053

// resumeLedger starts a new billed period at at, priced pricePerHour: a started instance
// (after a stop) or a volume whose size or type changed. Callers hold s.mu.
func (s *Server) resumeLedger(id string, at time.Time, pricePerHour float64) {
	e := s.ledger[id]
	if e == nil {
		return
	}
	e.PriorUSD = e.accrue(at)
	t := at
	e.Resumed, e.Stopped, e.PricePerHour = &t, nil, pricePerHour
	s.save(bucketLedger, id, e)
	s.noteLedgerChange()
}

func volumeHourly(volumeType string, sizeGiB int32) float64 {
	p, ok := ebsPricePerGBMonth[volumeType]
	if !ok {
		p = ebsPricePerGBMonth["gp3"]
	}
	return round6(p * float64(sizeGiB) / hoursPerMonth)
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// Callers of the ledger helpers hold s.mu. Each change asks AWS Budgets to evaluate.

func (s *Server) startLedger(e *LedgerEntry) {
	s.ledger[e.ResourceID] = e
	s.save(bucketLedger, e.ResourceID, e)
	s.noteLedgerChange()
}

func (s *Server) stopLedger(id string, at time.Time) {
	e := s.ledger[id]
	if e == nil || e.Stopped != nil {
		return
	}
	t := at
	e.Stopped = &t
	s.save(bucketLedger, id, e)
	s.noteLedgerChange()
}

func (s *Server) syncLedgerTags(id string, tags []ec2.Tag) {
	if e := s.ledger[id]; e != nil {
		e.Tags = ec2.TagsMap(tags)
		s.save(bucketLedger, id, e)
		s.noteLedgerChange()
	}
}

// Billing is the ledger as read at one time.
type Billing struct {
	Time     time.Time     `json:"time"`
	Entries  []LedgerEntry `json:"entries"`
	TotalUSD float64       `json:"totalUSD"`
}

// Billing returns every ledger entry with its cost accrued until now, oldest first.
func (s *Server) Billing() Billing {
	now := s.clock.Now()
	s.advanceIfDue(now)
	s.mu.RLock()
	defer s.mu.RUnlock()
	b := Billing{Time: now, Entries: make([]LedgerEntry, 0, len(s.ledger))}
	for _, e := range s.ledger {
		c := *e
		c.AccruedUSD = round6(e.accrue(now))
		c.Tags = make(map[string]string, len(e.Tags))
		for k, v := range e.Tags {
			c.Tags[k] = v
		}
		b.TotalUSD += c.AccruedUSD
		b.Entries = append(b.Entries, c)
	}
	sort.Slice(b.Entries, func(i, j int) bool {
		x, y := b.Entries[i], b.Entries[j]
		if !x.Started.Equal(y.Started) {
			return x.Started.Before(y.Started)
		}
		return x.ResourceID < y.ResourceID
	})
	b.TotalUSD = round6(b.TotalUSD)
	return b
}

// CostGroup is the accrued cost of the resources sharing one value of a tag.
type CostGroup struct {
	Value     string   `json:"value"` // "" for resources without the tag
	USD       float64  `json:"usd"`
	Resources []string `json:"resources"`
}

// CostReport is cost grouped by one tag key.
type CostReport struct {
	Time     time.Time   `json:"time"`
	TagKey   string      `json:"tagKey"`
	Groups   []CostGroup `json:"groups"`
	TotalUSD float64     `json:"totalUSD"`
}

// CostByTag groups the ledger by the value of tag key.
func (s *Server) CostByTag(key string) CostReport {
	b := s.Billing()
	groups := map[string]*CostGroup{}
	for _, e := range b.Entries {
		v := e.Tags[key]
		g := groups[v]
		if g == nil {
			g = &CostGroup{Value: v}
			groups[v] = g
		}
		g.USD += e.AccruedUSD
		g.Resources = append(g.Resources, e.ResourceID)
	}
	r := CostReport{Time: b.Time, TagKey: key, TotalUSD: b.TotalUSD, Groups: []CostGroup{}}
	for _, g := range groups {
		g.USD = round6(g.USD)
		r.Groups = append(r.Groups, *g)
	}
	sort.Slice(r.Groups, func(i, j int) bool { return r.Groups[i].Value < r.Groups[j].Value })
	return r
}
