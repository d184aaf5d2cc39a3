package evidence

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The page is one html/template file: inline CSS and SVG, no script, nothing fetched, so it
// opens offline and html/template escapes every value the two control planes recorded.
//
//go:embed html/evidence.html.tmpl
var evidencePageText string

var evidencePage = template.Must(template.New("evidence.html.tmpl").Funcs(template.FuncMap{
	"px":     px,
	"usd":    func(f float64) string { return fmt.Sprintf("$%.6f", f) },
	"usd4":   func(f float64) string { return fmt.Sprintf("$%.4f", f) },
	"sub":    func(a, b float64) float64 { return a - b },
	"mid":    func(x, w float64) float64 { return x + w/2 },
	"deref":  func(b *bool) bool { return b != nil && *b },
	"plural": plural,
}).Parse(evidencePageText))

// WriteHTML writes a self-contained evidence page: totals, a timeline per NodeClaim with its
// pods, the correlation table, pending pods with their quoted reasons, leaks, launch calls,
// instances with their disks and interfaces, and cost by tag. Everything it shows comes from
// the evidence (no clock is read), so the same evidence gives the same bytes.
func (ev *Evidence) WriteHTML(w io.Writer) error {
	var buf bytes.Buffer
	if err := evidencePage.Execute(&buf, newPage(ev)); err != nil {
		return fmt.Errorf("rendering the evidence page: %w", err)
	}
	_, err := buf.WriteTo(w)
	return err
}

// page is what the template reads: the evidence, with times made relative and the SVG laid out.
type page struct {
	Ev     *Evidence
	Taken  stamp
	Origin stamp
	// Captured is when production was captured, in a replayed lab.
	Captured stamp
	Stats    []stat
	Timeline timeline
	Pods     []podView
	Waiting  []podView
	Claims   []claimView
	Insts    []instView
	Leaks    []leakView
	// Unattached are the cluster's volumes, snapshots and interfaces nothing uses.
	Unattached []unattachedView
	Launches   []launchView
	Failed     int
	Cost       []costChart
	CostRows   []costRow
}

// stamp is one moment, ready to print: relative to the origin, as a clock time, and as the
// machine-readable datetime of a <time> element. Set is false for a moment that never came.
type stamp struct {
	Set   bool
	Rel   string
	Clock string // 13:48:30
	Full  string // 2026-12-02 13:48:30 UTC
	ISO   string
}

type stat struct {
	Label, Value, Note, Class string
}

func newPage(ev *Evidence) *page {
	origin := ev.origin()
	st := func(t *time.Time) stamp { return stampOf(origin, t) }
	taken := ev.TakenAt
	p := &page{Ev: ev, Taken: st(&taken), Origin: st(&origin)}
	if ev.Replay != nil {
		p.Captured = st(&ev.Replay.CapturedAt)
	}
	p.addPods(ev, st)
	p.addClaims(ev, st)
	p.addInstances(ev, st)
	p.addLeftovers(ev, st)
	p.addLaunches(ev, st)
	p.Stats = pageStats(ev, p)
	p.Timeline = buildTimeline(ev, origin)
	p.Cost, p.CostRows = costCharts(ev.Cost)
	return p
}

// pageStats are the totals at the top of the page; the warning ones show only when nonzero.
func pageStats(ev *Evidence, p *page) []stat {
	running, liveClaims, liveInstances := 0, 0, 0
	for i := range ev.Pods {
		if ev.Pods[i].Phase == "Running" {
			running++
		}
	}
	for i := range ev.NodeClaims {
		if ev.NodeClaims[i].Deleted == nil {
			liveClaims++
		}
	}
	for i := range ev.Instances {
		if s := ev.Instances[i].State; s == "running" || s == "pending" {
			liveInstances++
		}
	}
	stats := []stat{
		{Label: "Pods", Value: strconv.Itoa(len(ev.Pods)), Note: "workload pods recorded"},
		{Label: "Running", Value: strconv.Itoa(running), Note: fmt.Sprintf("of %d", len(ev.Pods)), Class: okIf(running == len(ev.Pods) && running > 0)},
		{Label: "NodeClaims", Value: strconv.Itoa(len(ev.NodeClaims)), Note: fmt.Sprintf("%d live", liveClaims)},
		{Label: "Instances", Value: strconv.Itoa(len(ev.Instances)), Note: fmt.Sprintf("%d running", liveInstances)},
		{Label: "Cost so far", Value: fmt.Sprintf("$%.4f", ev.Cost.TotalUSD), Note: "accrued, all resources"},
		{Label: "Cost per hour now", Value: fmt.Sprintf("$%.4f", ev.Cost.HourlyNowUSD), Note: "what is still billed"},
	}
	if waiting := len(p.Waiting); waiting > 0 {
		stats = append(stats, stat{Label: "Not scheduled", Value: strconv.Itoa(waiting), Note: "pods with no node", Class: "warn"})
	}
	if len(ev.Leaks) > 0 {
		stats = append(stats, stat{Label: "Leaked instances", Value: strconv.Itoa(len(ev.Leaks)), Note: "running, no NodeClaim", Class: "bad"})
	}
	if p.Failed > 0 {
		stats = append(stats, stat{Label: "Failed launches", Value: strconv.Itoa(p.Failed), Note: "denied or refused calls", Class: "bad"})
	}
	return stats
}

func okIf(ok bool) string {
	if ok {
		return "ok"
	}
	return "warn"
}

func stampOf(origin time.Time, t *time.Time) stamp {
	if t == nil || t.IsZero() {
		return stamp{}
	}
	u := t.UTC()
	return stamp{Set: true, Rel: relative(t.Sub(origin)), Clock: u.Format("15:04:05"),
		Full: u.Format("2006-01-02 15:04:05") + " UTC", ISO: u.Format(time.RFC3339)}
}

// relative prints an offset from the origin the way the text report does: +5s, +4m29s.
func relative(d time.Duration) string {
	if d < 0 {
		return "-" + duration(-d)
	}
	return "+" + duration(d)
}

// duration prints whole seconds, without zero parts: 5s, 4m29s, 2m, 1h5m.
func duration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, sec := d/time.Hour, d%time.Hour/time.Minute, d%time.Minute/time.Second
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if sec > 0 || b.Len() == 0 {
		fmt.Fprintf(&b, "%ds", sec)
	}
	return b.String()
}

// px prints an SVG coordinate with one decimal, so the page is stable and small.
func px(f float64) string {
	s := strconv.FormatFloat(math.Round(f*10)/10, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// clip shortens s to n runes, keeping the end (where generated names differ) after an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

func firstSet(ts ...*time.Time) *time.Time {
	for _, t := range ts {
		if t != nil {
			return t
		}
	}
	return nil
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
