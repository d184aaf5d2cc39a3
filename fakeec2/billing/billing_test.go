package billing

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

func at(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }

func ptr(t time.Time) *time.Time { return &t }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// An instance billed 2 h, stopped 1 h, then billed again from a resume at a new price.
func TestLedgerEntryAccrue(t *testing.T) {
	e := &LedgerEntry{PricePerHour: 0.2, Started: t0, Stopped: ptr(at(2))}
	tests := []struct {
		name string
		now  time.Time
		want float64
	}{
		{name: "before it starts", now: at(-1), want: 0},
		{name: "while billing", now: at(1.5), want: 0.3},
		{name: "after it stopped", now: at(5), want: 0.4},
	}
	for _, tt := range tests {
		if got := e.Accrue(tt.now); !near(got, tt.want) {
			t.Errorf("%s: Accrue = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Resuming at 3 h at 0.5/h keeps the first period's 0.4 as PriorUSD.
	e.PriorUSD, e.Resumed, e.Stopped, e.PricePerHour = e.Accrue(at(3)), ptr(at(3)), nil, 0.5
	if got := e.Accrue(at(5)); !near(got, 0.4+1.0) {
		t.Errorf("after the resume: Accrue = %v, want 1.4", got)
	}
	// Within [1 h, 4 h]: the prior 0.4 spread over 3 h (2 of its 3 h fall in the span: 0.2667),
	// plus 1 h of the current period at 0.5.
	if got, want := e.AccrueBetween(at(1), at(4)), 0.4*2/3+0.5; !near(got, want) {
		t.Errorf("AccrueBetween(1 h, 4 h) = %v, want %v", got, want)
	}
	perHour, forecast := e.Outlook(at(4), at(6))
	if !near(perHour, 0.5) || !near(forecast, 1.0) {
		t.Errorf("Outlook(4 h, 6 h) = %v/h, %v, want 0.5/h, 1.0", perHour, forecast)
	}
}

func TestReadAndByTag(t *testing.T) {
	ledger := map[string]*LedgerEntry{
		"vol-2": {ResourceID: "vol-2", PricePerHour: VolumeHourly("gp3", 20), Started: t0, Tags: map[string]string{"team": "a"}},
		"i-1":   {ResourceID: "i-1", PricePerHour: 0.1, Started: t0, Tags: map[string]string{"team": "a"}},
		"i-0":   {ResourceID: "i-0", PricePerHour: 0.3, Started: at(-1), Tags: map[string]string{}},
	}
	b := Read(ledger, at(2))
	var ids []string
	for _, e := range b.Entries {
		ids = append(ids, e.ResourceID)
	}
	if len(ids) != 3 || ids[0] != "i-0" || ids[1] != "i-1" || ids[2] != "vol-2" {
		t.Errorf("Read's order %v, want oldest first, then by ID", ids)
	}
	vol := 0.005084 // gp3 at 20 GiB: 0.0928 * 20 / 730 = 0.002542 a hour (rounded), for 2 h
	if want := Round6(0.9 + 0.2 + vol); !near(b.TotalUSD, want) {
		t.Errorf("Read's total %v, want %v", b.TotalUSD, want)
	}
	b.Entries[1].Tags["team"] = "changed"
	if ledger["i-1"].Tags["team"] != "a" {
		t.Error("Read's entries share their tags with the ledger")
	}
	r := Read(ledger, at(2)).ByTag("team")
	if len(r.Groups) != 2 || r.Groups[0].Value != "" || r.Groups[1].Value != "a" || len(r.Groups[1].Resources) != 2 ||
		!near(r.Groups[1].USD, Round6(0.2+vol)) {
		t.Errorf("ByTag(team) = %+v, want the untagged group, then team a with i-1 and vol-2", r.Groups)
	}
}
