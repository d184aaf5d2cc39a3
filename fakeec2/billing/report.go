package billing

import (
	"sort"
	"time"
)

// Billing is the ledger as read at one time.
type Billing struct {
	Time     time.Time     `json:"time"`
	Entries  []LedgerEntry `json:"entries"`
	TotalUSD float64       `json:"totalUSD"`
}

// Read returns copies of every entry of ledger with its cost accrued until now, oldest
// first.
func Read(ledger map[string]*LedgerEntry, now time.Time) Billing {
	b := Billing{Time: now, Entries: make([]LedgerEntry, 0, len(ledger))}
	for _, e := range ledger {
		c := *e
		c.AccruedUSD = Round6(e.Accrue(now))
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
	b.TotalUSD = Round6(b.TotalUSD)
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

// ByTag groups the billing by the value of tag key.
func (b Billing) ByTag(key string) CostReport {
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
		g.USD = Round6(g.USD)
		r.Groups = append(r.Groups, *g)
	}
	sort.Slice(r.Groups, func(i, j int) bool { return r.Groups[i].Value < r.Groups[j].Value })
	return r
}

// Between is what ledger accrued within [from, to], in total and by the value of tag
// key, each rounded to a millionth.
func Between(ledger map[string]*LedgerEntry, from, to time.Time, key string) (float64, map[string]float64) {
	var total float64
	by := map[string]float64{}
	for _, e := range ledger {
		usd := e.AccrueBetween(from, to)
		if usd == 0 {
			continue
		}
		total += usd
		by[e.Tags[key]] += usd
	}
	for k, v := range by {
		by[k] = Round6(v)
	}
	return Round6(total), by
}
