package evidence

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/fakeec2"
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
	Ev       *Evidence
	Taken    stamp
	Origin   stamp
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

type podView struct {
	Row                                  *PodRow
	Pending, Scheduled, Started, Deleted stamp
	Waited                               string // pending to started
	PhaseClass                           string
}

type claimView struct {
	Row                                                                    *NodeClaimRow
	Created, Launched, Registered, Initialized, DeletionRequested, Deleted stamp
	Pods                                                                   int
}

type instView struct {
	Row                  *InstanceRow
	Launched, Terminated stamp
	LaunchedBy           string
	TerminatedBy         string
	Leaked               bool
	CostTags             []string // key=value of the seed's cost tags the instance carries
	Volumes              []volView
	ENIs                 []eniView
}

type volView struct {
	Row            VolumeRow
	Encryption     string
	EncryptedClass string
	Tagged         bool // carries every cost tag
}

type eniView struct {
	Row    ENIRow
	Tagged bool
}

type leakView struct {
	Row   Leak
	Since stamp
	For   string
}

type unattachedView struct {
	Row   UnattachedRow
	Since stamp
	For   string
}

type launchView struct {
	Row    *AuditCall
	At     stamp
	Caller string
	Class  string
}

type costChart struct {
	Key    string
	Width  float64
	Height float64
	Bars   []costBar
	More   int
	Desc   string
}

type costBar struct {
	Y, W, TextY float64
	Label       string
	Amount      string
	Share       string
	Class       string
}

type costRow struct {
	Key, Value string
	USD        float64
	Resources  int
	Untagged   bool
}

func newPage(ev *Evidence) *page {
	origin := ev.origin()
	st := func(t *time.Time) stamp { return stampOf(origin, t) }
	taken := ev.TakenAt
	p := &page{Ev: ev, Taken: st(&taken), Origin: st(&origin)}
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

// addPods fills the correlation table, and the table of pods that never reached a node.
func (p *page) addPods(ev *Evidence, st func(*time.Time) stamp) {
	for i := range ev.Pods {
		r := &ev.Pods[i]
		v := podView{Row: r, Pending: st(r.PendingSince), Scheduled: st(r.ScheduledAt), Started: st(r.StartedAt),
			Deleted: st(r.DeletedAt), PhaseClass: phaseClass(r)}
		if r.StartedAt != nil {
			from := r.Created
			if r.PendingSince != nil {
				from = *r.PendingSince
			}
			v.Waited = duration(r.StartedAt.Sub(from))
		}
		p.Pods = append(p.Pods, v)
		if isWaiting(r) {
			p.Waiting = append(p.Waiting, v)
		}
	}
}

// addClaims fills the NodeClaims table, each with how many pods ran on it.
func (p *page) addClaims(ev *Evidence, st func(*time.Time) stamp) {
	claimPods := map[string]int{}
	for i := range ev.Pods {
		if c := ev.Pods[i].NodeClaim; c != "" {
			claimPods[c]++
		}
	}
	for i := range ev.NodeClaims {
		r := &ev.NodeClaims[i]
		created := r.Created
		p.Claims = append(p.Claims, claimView{Row: r, Created: st(&created), Launched: st(r.Launched),
			Registered: st(r.Registered), Initialized: st(r.Initialized),
			DeletionRequested: st(r.DeletionRequested), Deleted: st(r.Deleted), Pods: claimPods[r.Name]})
	}
}

// addInstances fills the instances table, each with its disks and interfaces.
func (p *page) addInstances(ev *Evidence, st func(*time.Time) stamp) {
	leaked := map[string]bool{}
	for _, l := range ev.Leaks {
		leaked[l.InstanceID] = true
	}
	for i := range ev.Instances {
		r := &ev.Instances[i]
		launched := r.LaunchTime
		v := instView{Row: r, Launched: st(&launched), Terminated: st(r.TerminatedAt),
			LaunchedBy: identity(r.LaunchedBy), TerminatedBy: identity(r.TerminatedBy), Leaked: leaked[r.ID]}
		for _, k := range CostTagKeys {
			if val, ok := r.Tags[k]; ok {
				v.CostTags = append(v.CostTags, k+"="+val)
			}
		}
		for _, n := range r.ENIs {
			v.ENIs = append(v.ENIs, eniView{Row: n, Tagged: costTagged(n.Tags)})
		}
		for _, vol := range r.Volumes {
			v.Volumes = append(v.Volumes, newVolView(vol))
		}
		p.Insts = append(p.Insts, v)
	}
}

func newVolView(vol VolumeRow) volView {
	// A deleted volume is no longer described, so whether it was encrypted is not known.
	vv := volView{Row: vol, Encryption: "encryption unknown", EncryptedClass: "muted", Tagged: costTagged(vol.Tags)}
	if vol.Encrypted != nil && *vol.Encrypted {
		vv.Encryption, vv.EncryptedClass = "encrypted", "ok"
	} else if vol.Encrypted != nil {
		vv.Encryption, vv.EncryptedClass = "unencrypted", "bad"
	}
	return vv
}

// addLeftovers fills the tables of leaked instances and unattached resources, each with how
// long it has been left.
func (p *page) addLeftovers(ev *Evidence, st func(*time.Time) stamp) {
	for _, l := range ev.Leaks {
		since := l.Since
		p.Leaks = append(p.Leaks, leakView{Row: l, Since: st(&since), For: duration(ev.TakenAt.Sub(l.Since))})
	}
	for _, u := range ev.Unattached {
		since := u.Since
		p.Unattached = append(p.Unattached, unattachedView{Row: u, Since: st(&since), For: duration(ev.TakenAt.Sub(u.Since))})
	}
}

// addLaunches fills the launch calls table and counts the failed calls.
func (p *page) addLaunches(ev *Evidence, st func(*time.Time) stamp) {
	for i := range ev.Launches {
		c := &ev.Launches[i]
		at := c.Time
		v := launchView{Row: c, At: st(&at), Caller: identity(c.Caller), Class: "ok"}
		if c.ErrorCode != "" {
			v.Class = "bad"
			p.Failed++
		} else if len(c.Errors) > 0 {
			v.Class = "warn"
		}
		p.Launches = append(p.Launches, v)
	}
}

func costTagged(tags map[string]string) bool {
	for _, k := range CostTagKeys {
		if tags[k] == "" {
			return false
		}
	}
	return true
}

// isWaiting says a pod never reached a node: still pending, or deleted before it did.
func isWaiting(r *PodRow) bool { return r.Node == "" && r.ScheduledAt == nil }

func phaseClass(r *PodRow) string {
	switch {
	case r.Phase == "Running":
		return "ok"
	case r.Phase == "Deleted" && r.StartedAt != nil, r.Phase == "Succeeded":
		return "muted"
	}
	return "warn"
}

func okIf(ok bool) string {
	if ok {
		return "ok"
	}
	return "warn"
}

// identity names the lab's access keys (LABS.md) so a reader sees who called, not a key id.
func identity(key string) string {
	switch key {
	case "":
		return ""
	case cluster.KarpenterAccessKeyID:
		return "Karpenter"
	case cluster.LearnerAccessKeyID:
		return "learner"
	case cluster.KubeletAccessKeyID:
		return "node role"
	case GraderAccessKeyID:
		return "grader"
	}
	return key
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

// costCharts lays out one small horizontal bar chart per cost-allocation tag: each value's
// share of the total bill. Untagged spend is its own bar, marked, since it is what cost
// allocation cannot attribute.
func costCharts(c Cost) ([]costChart, []costRow) {
	const (
		width, barMax, barH, gap, maxBars = 360.0, 150.0, 18.0, 8.0, 8
	)
	var charts []costChart
	var rows []costRow
	for _, key := range CostTagKeys {
		groups := viewGroups(c.ByTag[key])
		for _, g := range groups {
			rows = append(rows, costRow{Key: key, Value: orNone(g.Value), USD: g.USD, Resources: g.Resources, Untagged: g.Value == ""})
		}
		sort.SliceStable(groups, func(i, j int) bool { return groups[i].USD > groups[j].USD })
		ch := costChart{Key: key, Width: width}
		total := c.TotalUSD
		for _, g := range groups {
			total = math.Max(total, g.USD)
		}
		var desc []string
		for i, g := range groups {
			share := 0.0
			if total > 0 {
				share = g.USD / total
			}
			desc = append(desc, fmt.Sprintf("%s %s (%.0f%%)", orNone(g.Value), fmt.Sprintf("$%.6f", g.USD), share*100))
			if i >= maxBars {
				ch.More++
				continue
			}
			y := gap + float64(i)*(barH+gap)
			b := costBar{Y: y, TextY: y + barH/2 + 4, W: math.Max(barMax*share, 1), Label: clip(orNone(g.Value), 16),
				Amount: fmt.Sprintf("$%.4f", g.USD), Share: fmt.Sprintf("%.0f%%", share*100), Class: "tagged"}
			if g.Value == "" {
				b.Class = "untagged"
			}
			ch.Bars = append(ch.Bars, b)
		}
		ch.Height = gap + float64(len(ch.Bars))*(barH+gap)
		if len(ch.Bars) == 0 {
			ch.Height = 0
		}
		ch.Desc = fmt.Sprintf("Cost by %s: %s.", key, strings.Join(desc, "; "))
		if len(desc) == 0 {
			ch.Desc = fmt.Sprintf("Nothing was billed yet, so there is no cost by %s.", key)
		}
		charts = append(charts, ch)
	}
	return charts, rows
}

type costGroupView struct {
	Value     string
	USD       float64
	Resources int
}

func viewGroups(gs []fakeec2.CostGroup) []costGroupView {
	out := make([]costGroupView, 0, len(gs))
	for _, g := range gs {
		out = append(out, costGroupView{Value: g.Value, USD: g.USD, Resources: len(g.Resources)})
	}
	return out
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

// Timeline layout, in SVG user units. The SVG keeps its size in a scrolling box on narrow
// screens and shrinks to the page width when printed.
const (
	tlWidth    = 1120.0
	tlLabelW   = 300.0
	tlRight    = 28.0
	tlAxisH    = 48.0
	tlLaneH    = 20.0
	tlHeadH    = 26.0
	tlGroupGap = 8.0
	tlAggH     = 34.0
	tlBreakW   = 34.0
	tlMinSegW  = 28.0

	tlRowH = 40.0

	// Up to tlDetailedPods pods on up to tlDetailedGroups machines, each machine gets a lane
	// for its NodeClaim, instance, node and each pod (tlGroupPods at most, the rest in one
	// aggregate lane); beyond, each machine is one compact row, tlMaxRows at most.
	tlDetailedPods   = 40
	tlDetailedGroups = 8
	tlGroupPods      = 12
	tlMaxRows        = 40
	tlAggRows        = 60 // pods sampled into an aggregate lane's strips
)

type timeline struct {
	Empty            bool
	Compact          bool
	FitsPage         bool // short enough to shrink onto one printed page
	Width, Height    float64
	ChartX0, ChartX1 float64
	AxisY, GridY1    float64
	BottomAxisY      float64 // 0: no second axis at the bottom
	Ticks            []tlTick
	Breaks           []tlBreak
	TakenX           float64
	Groups           []tlGroup
	Note             string
	Title, Desc      string
}

type tlTick struct {
	X     float64
	Label string
	major bool
}

// tlBreak is a stretch of the time axis with nothing happening, drawn compressed.
type tlBreak struct {
	X, W      float64
	Label     string
	ShowLabel bool // false where it would overlap the label of the break before
}

type tlGroup struct {
	Y, H, TextY float64
	Title, Sub  string
	Class       string
	Lanes       []tlLane
}

type tlLane struct {
	Y, H, TextY float64
	Label, Sub  string
	// Line2 is a second line of label (compact rows), at Text2Y.
	Line2  string
	Text2Y float64
	// Bg draws a row background from BgY, BgH high (compact rows).
	Bg       bool
	BgY, BgH float64
	Class    string
	Title    string
	Segs     []tlSeg
	Marks    []tlMark
}

type tlSeg struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// tlMark is a milestone drawn as a small SVG path (dot, diamond, cross or tick).
type tlMark struct {
	D, Class, Title string
}

// tlSource is what one group of lanes shows: a NodeClaim with its instance, node and pods, or
// an instance or node with no NodeClaim, or the pods that never got a machine.
type tlSource struct {
	claim  *NodeClaimRow
	inst   *InstanceRow
	node   *NodeRow
	pods   []*PodRow
	leaked bool
}

func buildTimeline(ev *Evidence, origin time.Time) timeline {
	tl := timeline{Width: tlWidth, ChartX0: tlLabelW, ChartX1: tlWidth - tlRight, AxisY: 30}
	times := evidenceTimes(ev)
	if len(ev.Pods)+len(ev.NodeClaims)+len(ev.Instances)+len(ev.Launches) == 0 {
		tl.Empty = true
		return tl
	}
	ax := newAxis(origin, times, tl.ChartX0, tl.ChartX1)
	b := &tlBuilder{ax: ax, origin: origin, end: ev.TakenAt}
	tl.Ticks, tl.Breaks, tl.TakenX = ax.ticks(), ax.breaks, ax.x(ev.TakenAt)
	lastEnd := math.Inf(-1)
	for i := range tl.Breaks {
		br := &tl.Breaks[i]
		w := 6.5 * float64(len(br.Label)+4)
		if c := br.X + br.W/2; c-w/2 > lastEnd+4 {
			br.ShowLabel, lastEnd = true, c+w/2
		}
	}

	sources, waiting := timelineSources(ev)
	tl.Compact = len(ev.Pods) > tlDetailedPods || len(sources) > tlDetailedGroups
	y := tlAxisH + 4
	var desc []string
	add := func(g tlGroup, d string) {
		tl.Groups = append(tl.Groups, g)
		if d != "" {
			desc = append(desc, d)
		}
		y += g.H + tlGroupGap
	}
	if len(ev.Launches) > 0 {
		add(b.launchGroup(ev.Launches, y), "")
	}
	if tl.Compact {
		shown := pickRows(sources, tlMaxRows)
		if hidden := len(sources) - len(shown); hidden > 0 {
			drawn := map[*tlSource]bool{}
			for _, s := range shown {
				drawn[s] = true
			}
			hiddenPods := 0
			for _, s := range sources {
				if !drawn[s] {
					hiddenPods += len(s.pods)
				}
			}
			tl.Note = fmt.Sprintf("And %s with %s are not drawn (failed, disrupted and leaked machines are drawn first); the tables below list every one.",
				plural(hidden, "more machine"), plural(hiddenPods, "pod"))
		}
		if len(shown) > 0 {
			add(b.compactGroup(shown, len(sources), y))
		}
	} else {
		for _, s := range sources {
			add(b.group(s, y))
		}
	}
	if waiting != nil {
		if tl.Compact && len(waiting.pods) > 2 {
			g := tlGroup{Y: y, TextY: y + 17}
			g.Title, g.Sub, g.Class = waiting.heading()
			l := b.aggregateLane(waiting.pods, plural(len(waiting.pods), "pod"), y+tlHeadH, tlAggH)
			g.Lanes, g.H = []tlLane{l}, tlHeadH+l.H
			add(g, g.Title+" ("+g.Sub+"): "+l.Title+".")
		} else {
			add(b.group(waiting, y))
		}
	}
	tl.GridY1 = y - tlGroupGap
	tl.Height = y + 4
	if tl.Height > 900 {
		tl.BottomAxisY = tl.Height + 14
		tl.Height += 24
	}
	tl.FitsPage = tl.Height <= 1000
	tl.Title = fmt.Sprintf("Timeline of %d pods, %d NodeClaims and %d instances, from %s to %s (evidence taken).",
		len(ev.Pods), len(ev.NodeClaims), len(ev.Instances), relative(ax.start.Sub(origin)), relative(ev.TakenAt.Sub(origin)))
	if len(tl.Breaks) > 0 {
		var gaps []string
		for _, br := range tl.Breaks {
			gaps = append(gaps, br.Label)
		}
		tl.Title += " Quiet stretches (" + strings.Join(gaps, ", ") + ") are drawn compressed."
	}
	tl.Desc = strings.Join(desc, " ")
	if tl.Note != "" {
		tl.Desc += " " + tl.Note
	}
	return tl
}

// evidenceTimes is every moment the evidence records, so the axis covers all of them.
func evidenceTimes(ev *Evidence) []time.Time {
	var ts []time.Time
	add := func(t ...*time.Time) {
		for _, p := range t {
			if p != nil && !p.IsZero() {
				ts = append(ts, *p)
			}
		}
	}
	for i := range ev.Pods {
		r := &ev.Pods[i]
		add(&r.Created, r.PendingSince, r.NominatedAt, r.ScheduledAt, r.StartedAt, r.DeletedAt)
	}
	for i := range ev.NodeClaims {
		r := &ev.NodeClaims[i]
		add(&r.Created, r.Launched, r.Registered, r.Initialized, r.DeletionRequested, r.Deleted)
	}
	for i := range ev.Nodes {
		r := &ev.Nodes[i]
		add(&r.Registered, r.Ready, r.Deleted)
	}
	for i := range ev.Instances {
		r := &ev.Instances[i]
		add(&r.LaunchTime, r.TerminatedAt)
	}
	for i := range ev.Launches {
		add(&ev.Launches[i].Time)
	}
	add(&ev.TakenAt)
	return ts
}

// timelineSources groups the evidence by machine: each NodeClaim (creation order) with its
// instance, node and the pods that ran on it or were nominated for it; then nodes and
// instances no NodeClaim explains; and last the pods that never reached a node.
func timelineSources(ev *Evidence) (sources []*tlSource, waiting *tlSource) {
	byClaim := map[string]*tlSource{}
	instByID := map[string]*InstanceRow{}
	instByClaim := map[string]*InstanceRow{}
	for i := range ev.Instances {
		in := &ev.Instances[i]
		instByID[in.ID] = in
		if in.NodeClaim != "" && instByClaim[in.NodeClaim] == nil {
			instByClaim[in.NodeClaim] = in
		}
	}
	nodeByName := map[string]*NodeRow{}
	nodeByInst := map[string]*NodeRow{}
	for i := range ev.Nodes {
		n := &ev.Nodes[i]
		nodeByName[n.Name] = n
		if n.InstanceID != "" {
			nodeByInst[n.InstanceID] = n
		}
	}
	leaked := map[string]bool{}
	for _, l := range ev.Leaks {
		leaked[l.InstanceID] = true
	}
	usedInst, usedNode := map[string]bool{}, map[string]bool{}
	for i := range ev.NodeClaims {
		c := &ev.NodeClaims[i]
		s := &tlSource{claim: c, inst: instByID[c.InstanceID]}
		if s.inst == nil {
			s.inst = instByClaim[c.Name]
		}
		s.node = nodeByName[c.NodeName]
		if s.node == nil && s.inst != nil {
			s.node = nodeByInst[s.inst.ID]
		}
		if s.inst != nil {
			usedInst[s.inst.ID] = true
			s.leaked = leaked[s.inst.ID]
		}
		if s.node != nil {
			usedNode[s.node.Name] = true
		}
		byClaim[c.Name] = s
		sources = append(sources, s)
	}
	byNode := map[string]*tlSource{}
	for i := range ev.Pods {
		p := &ev.Pods[i]
		claim := p.NodeClaim
		if claim == "" && p.Node == "" {
			claim = p.NominatedNodeClaim
		}
		switch {
		case byClaim[claim] != nil:
			byClaim[claim].pods = append(byClaim[claim].pods, p)
		case p.Node != "":
			s := byNode[p.Node]
			if s == nil {
				s = &tlSource{node: nodeByName[p.Node]}
				if s.node == nil {
					s.node = &NodeRow{Name: p.Node, InstanceID: p.InstanceID}
				}
				if in := instByID[s.node.InstanceID]; in != nil && !usedInst[in.ID] {
					s.inst, s.leaked = in, leaked[in.ID]
					usedInst[in.ID] = true
				}
				usedNode[p.Node] = true
				byNode[p.Node] = s
				sources = append(sources, s)
			}
			s.pods = append(s.pods, p)
		default:
			if waiting == nil {
				waiting = &tlSource{}
			}
			waiting.pods = append(waiting.pods, p)
		}
	}
	for i := range ev.Instances {
		in := &ev.Instances[i]
		if usedInst[in.ID] {
			continue
		}
		s := &tlSource{inst: in, leaked: leaked[in.ID], node: nodeByInst[in.ID]}
		if s.node != nil {
			usedNode[s.node.Name] = true
		}
		sources = append(sources, s)
	}
	for i := range ev.Nodes {
		if n := &ev.Nodes[i]; !usedNode[n.Name] {
			sources = append(sources, &tlSource{node: n})
		}
	}
	return sources, waiting
}

type tlBuilder struct {
	ax     *tlAxis
	origin time.Time
	end    time.Time
}

// at prints a moment for a tooltip: relative, and the UTC clock.
func (b *tlBuilder) at(t time.Time) string {
	return relative(t.Sub(b.origin)) + " (" + t.UTC().Format("15:04:05") + " UTC)"
}

func (b *tlBuilder) lane(y, h float64, label, sub, class string) tlLane {
	label = clip(label, 38)
	if room := 46 - len([]rune(label)); room > 6 && sub != "" {
		sub = clip(sub, room)
	} else {
		sub = ""
	}
	return tlLane{Y: y, H: h, TextY: y + h/2 + 4, Label: label, Sub: sub, Class: class}
}

// strip draws from..to (to nil: still going when the evidence was taken) at height h from y.
func (b *tlBuilder) strip(l *tlLane, from time.Time, to *time.Time, y, h float64, class, title string) {
	end := b.end
	if to != nil {
		end = *to
	}
	x0, x1 := b.ax.x(from), b.ax.x(end)
	w := x1 - x0
	if w < 2 {
		w = 2
	}
	l.Segs = append(l.Segs, tlSeg{X: x0, Y: y, W: w, H: h, Class: class, Title: title})
}

func (b *tlBuilder) mark(l *tlLane, t *time.Time, shape, class, title string) {
	if t == nil {
		return
	}
	x, y := b.ax.x(*t), l.Y+l.H/2
	var d string
	switch shape {
	case "dot":
		d = fmt.Sprintf("M%s %sa4 4 0 1 0 8 0a4 4 0 1 0-8 0z", px(x-4), px(y))
	case "diamond":
		d = fmt.Sprintf("M%s %sl5 5-5 5-5-5z", px(x), px(y-5))
	case "cross":
		d = fmt.Sprintf("M%s %sl8 8m0-8l-8 8", px(x-4), px(y-4))
	default: // tick
		d = fmt.Sprintf("M%s %sv14", px(x), px(y-7))
	}
	l.Marks = append(l.Marks, tlMark{D: d, Class: class, Title: title})
}

func (b *tlBuilder) launchGroup(calls []AuditCall, y float64) tlGroup {
	g := tlGroup{Y: y, TextY: y + 17, Title: "EC2 launch calls", Class: "grp-calls"}
	failed := 0
	var callers []string
	byCaller := map[string][]AuditCall{}
	for _, c := range calls {
		who := identity(c.Caller)
		if _, ok := byCaller[who]; !ok {
			callers = append(callers, who)
		}
		byCaller[who] = append(byCaller[who], c)
		if c.ErrorCode != "" {
			failed++
		}
	}
	g.Sub = plural(len(calls), "CreateFleet/RunInstances call")
	if failed > 0 {
		g.Sub += fmt.Sprintf(", %d failed", failed)
	}
	ly := y + tlHeadH
	for _, who := range callers {
		l := b.lane(ly, tlLaneH, who, plural(len(byCaller[who]), "call"), "calls")
		for _, c := range byCaller[who] {
			t := c.Time
			title := fmt.Sprintf("%s by %s at %s", c.Action, who, b.at(t))
			if c.NodeClaim != "" {
				title += " for NodeClaim " + c.NodeClaim
			}
			if c.ErrorCode != "" {
				title += ": " + c.ErrorCode + ": " + c.Reason
				b.mark(&l, &t, "cross", "mk-fail", title)
				continue
			}
			if len(c.Created) > 0 {
				title += ": created " + strings.Join(c.Created, " ")
			}
			b.mark(&l, &t, "dot", "mk-call", title)
		}
		l.Title = plural(len(byCaller[who]), "launch call") + " by " + who
		g.Lanes = append(g.Lanes, l)
		ly += tlLaneH
	}
	g.H = ly - y
	return g
}

// heading names a source and sums it up in a line: type, capacity, zone, disruption, pods.
func (s *tlSource) heading() (title, sub, class string) {
	class = "grp"
	switch {
	case s.claim != nil:
		c := s.claim
		title = "NodeClaim " + c.Name
		sub = joinNonEmpty(" · ", c.NodePool, c.InstanceType, c.CapacityType, c.Zone)
		if c.DisruptionReason != "" {
			sub += " · disrupted: " + c.DisruptionReason
		}
		if c.Launched == nil && len(c.Failures) > 0 {
			class += " grp-bad"
			sub = joinNonEmpty(" · ", sub, "launch failed")
		}
	case s.inst != nil:
		title = "Instance " + s.inst.ID
		sub = joinNonEmpty(" · ", s.inst.Type, "no NodeClaim")
	case s.node != nil:
		title = "Node " + s.node.Name
		sub = "no NodeClaim"
	default:
		title = "No node"
		sub = plural(len(s.pods), "pod") + " never scheduled"
		class += " grp-waiting"
	}
	if s.leaked {
		class += " grp-bad"
		sub = joinNonEmpty(" · ", sub, "LEAKED: running with no NodeClaim")
	}
	if n := len(s.pods); n > 0 && (s.claim != nil || s.inst != nil || s.node != nil) {
		sub = joinNonEmpty(" · ", sub, plural(n, "pod"))
	}
	return title, sub, class
}

// rowLine is a compact row's second line: machine, pods, and what went wrong.
func (s *tlSource) rowLine() string {
	var parts []string
	switch {
	case s.claim != nil:
		parts = append(parts, s.claim.InstanceType, s.claim.CapacityType)
	case s.inst != nil:
		parts = append(parts, s.inst.Type, "no NodeClaim")
	default:
		parts = append(parts, "no NodeClaim")
	}
	if len(s.pods) > 0 {
		parts = append(parts, plural(len(s.pods), "pod"))
	}
	if s.claim != nil && s.claim.DisruptionReason != "" {
		parts = append(parts, s.claim.DisruptionReason)
	}
	if s.claim != nil && s.claim.Launched == nil && len(s.claim.Failures) > 0 {
		parts = append(parts, "launch failed")
	}
	if s.leaked {
		parts = append(parts, "LEAKED")
	}
	return joinNonEmpty(" · ", parts...)
}

// group draws one machine in detail, a lane each for its NodeClaim, instance, node and pods,
// and returns sentences describing it for the SVG's text alternative.
func (b *tlBuilder) group(s *tlSource, y float64) (tlGroup, string) {
	g := tlGroup{Y: y, TextY: y + 17}
	g.Title, g.Sub, g.Class = s.heading()
	desc := []string{g.Title + " (" + g.Sub + ")."}
	ly := y + tlHeadH
	add := func(l tlLane) {
		desc = append(desc, l.Title+".")
		g.Lanes = append(g.Lanes, l)
		ly += l.H
	}
	if c := s.claim; c != nil {
		l := b.lane(ly, tlLaneH, "NodeClaim", c.NodePool, "claim")
		b.claimStrips(&l, c, l.Y+5, l.H-10, true)
		add(l)
	}
	if in := s.inst; in != nil {
		l := b.lane(ly, tlLaneH, "Instance", in.ID, "inst")
		b.instStrips(&l, in, s.leaked, l.Y+5, l.H-10, true)
		add(l)
	}
	if n := s.node; n != nil && !n.Registered.IsZero() {
		l := b.lane(ly, tlLaneH, "Node", n.Name, "node")
		b.nodeStrips(&l, n, l.Y+5, l.H-10, true)
		add(l)
	}
	pods := s.pods
	shown := len(pods)
	if len(pods) > tlGroupPods {
		shown = tlGroupPods - 1
	}
	for _, p := range pods[:shown] {
		l := b.podLane(p, ly)
		g.Lanes = append(g.Lanes, l)
		ly += l.H
	}
	if rest := pods[shown:]; len(rest) > 0 {
		label := plural(len(rest), "pod")
		if shown > 0 {
			label = fmt.Sprintf("+ %d more pods", len(rest))
		}
		l := b.aggregateLane(rest, label, ly, tlAggH)
		g.Lanes = append(g.Lanes, l)
		ly += l.H
	}
	if len(pods) > 0 {
		desc = append(desc, podSummary(b, pods)+".")
	}
	g.H = ly - y
	return g, strings.Join(desc, " ")
}

// pickRows chooses at most n sources to draw, keeping their order: first every one with
// something wrong or changing (failed launch, disruption, deletion, leak), then the earliest.
func pickRows(sources []*tlSource, n int) []*tlSource {
	if len(sources) <= n {
		return sources
	}
	keep := map[*tlSource]bool{}
	for _, s := range sources {
		notable := s.leaked || s.claim == nil ||
			s.claim.DisruptionReason != "" || s.claim.DeletionRequested != nil || len(s.claim.Failures) > 0
		if notable && len(keep) < n {
			keep[s] = true
		}
	}
	for _, s := range sources {
		if len(keep) >= n {
			break
		}
		keep[s] = true
	}
	var out []*tlSource
	for _, s := range sources {
		if keep[s] {
			out = append(out, s)
		}
	}
	return out
}

// compactGroup draws many machines one row each: NodeClaim, instance and node as thin strips
// over the strips of the machine's pods. total counts the machines, drawn or not.
func (b *tlBuilder) compactGroup(sources []*tlSource, total int, y float64) (tlGroup, string) {
	pods := 0
	for _, s := range sources {
		pods += len(s.pods)
	}
	g := tlGroup{Y: y, TextY: y + 17, Class: "grp", Title: "Machines",
		Sub: fmt.Sprintf("%s carrying %s · each row: NodeClaim, instance and node strips over the pods' strips", plural(total, "machine"), plural(pods, "pod"))}
	if len(sources) < total {
		g.Sub = fmt.Sprintf("%d of %d machines, carrying %s · each row: NodeClaim, instance and node strips over the pods' strips", len(sources), total, plural(pods, "pod"))
	}
	var desc []string
	ly := y + tlHeadH
	for i, s := range sources {
		title, sub, class := s.heading()
		name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(title, "NodeClaim "), "Instance "), "Node ")
		l := b.lane(ly, tlRowH, name, "", "row")
		l.Line2, l.Text2Y = clip(s.rowLine(), 50), ly+29
		l.TextY = ly + 15
		if strings.Contains(class, "grp-bad") {
			l.Class += " row-bad"
		}
		if i%2 == 1 {
			l.Class += " row-alt"
		}
		l.BgY, l.BgH, l.Bg = ly, tlRowH, true
		var parts []string
		if c := s.claim; c != nil {
			b.claimStrips(&l, c, ly+4, 6, false)
			parts = append(parts, l.Title)
		}
		if in := s.inst; in != nil {
			b.instStrips(&l, in, s.leaked, ly+11, 4, false)
			parts = append(parts, l.Title)
		}
		if n := s.node; n != nil && !n.Registered.IsZero() {
			b.nodeStrips(&l, n, ly+16, 4, false)
			parts = append(parts, l.Title)
		}
		if len(s.pods) > 0 {
			b.podRows(&l, s.pods, ly+22, tlRowH-25)
			parts = append(parts, podSummary(b, s.pods))
		}
		l.Title = title + " (" + sub + "): " + strings.Join(parts, "; ")
		desc = append(desc, l.Title+".")
		g.Lanes = append(g.Lanes, l)
		ly += tlRowH
	}
	g.H = ly - y + 4
	return g, strings.Join(desc, " ")
}

// claimStrips draws a NodeClaim's provisioning, initialized and disruption stretches, and
// sets l.Title to its milestones.
func (b *tlBuilder) claimStrips(l *tlLane, c *NodeClaimRow, y, h float64, marks bool) {
	created := c.Created
	prov := "nc-prov"
	title := fmt.Sprintf("NodeClaim %s provisioning: created %s", c.Name, b.at(created))
	if c.Initialized != nil {
		title += ", initialized " + b.at(*c.Initialized)
	}
	if len(c.Failures) > 0 {
		prov = "nc-failed"
		title += "; " + strings.Join(c.Failures, "; ")
	}
	b.strip(l, created, firstSet(c.Initialized, c.DeletionRequested, c.Deleted), y, h, prov, title)
	if c.Initialized != nil {
		b.strip(l, *c.Initialized, firstSet(c.DeletionRequested, c.Deleted), y, h, "nc-ready",
			fmt.Sprintf("NodeClaim %s initialized %s", c.Name, b.at(*c.Initialized)))
	}
	if c.DeletionRequested != nil {
		t := fmt.Sprintf("NodeClaim %s deletion requested %s", c.Name, b.at(*c.DeletionRequested))
		if c.DisruptionReason != "" {
			t += " (disruption: " + c.DisruptionReason + ")"
		}
		if c.Deleted != nil {
			t += ", deleted " + b.at(*c.Deleted)
		}
		b.strip(l, *c.DeletionRequested, c.Deleted, y, h, "nc-drain", t)
	}
	if marks {
		b.mark(l, c.Launched, "diamond", "mk-launched", "launched "+b.atp(c.Launched))
		b.mark(l, c.Registered, "diamond", "mk-registered", "registered "+b.atp(c.Registered))
		b.mark(l, c.Initialized, "diamond", "mk-initialized", "initialized "+b.atp(c.Initialized))
		b.mark(l, c.Deleted, "cross", "mk-end", "NodeClaim deleted "+b.atp(c.Deleted))
	}
	l.Title = "NodeClaim " + c.Name + ": " + milestones(b, "created", &created, "launched", c.Launched,
		"registered", c.Registered, "initialized", c.Initialized, "deletion requested", c.DeletionRequested, "deleted", c.Deleted)
	if c.DisruptionReason != "" {
		l.Title += " (disruption: " + c.DisruptionReason + ")"
	}
}

func (b *tlBuilder) instStrips(l *tlLane, in *InstanceRow, leaked bool, y, h float64, marks bool) {
	class := "inst"
	if leaked {
		class = "inst-leak"
	}
	launched := in.LaunchTime
	title := fmt.Sprintf("instance %s (%s %s, %s) launched %s", in.ID, in.Type, in.CapacityType, in.Zone, b.at(launched))
	if in.LaunchedBy != "" {
		title += " by " + identity(in.LaunchedBy)
	}
	if in.TerminatedAt != nil {
		title += ", terminated " + b.at(*in.TerminatedAt)
	} else {
		title += ", " + in.State + " when the evidence was taken"
	}
	if leaked {
		title += ", LEAKED (no NodeClaim)"
	}
	title += fmt.Sprintf("; $%.4f/h, $%.6f so far", in.PricePerHour, in.CostUSD)
	b.strip(l, launched, in.TerminatedAt, y, h, class, title)
	if marks {
		b.mark(l, in.TerminatedAt, "cross", "mk-end", "instance terminated "+b.atp(in.TerminatedAt))
	}
	l.Title = "Instance " + in.ID + ": " + milestones(b, "launched", &launched, "terminated", in.TerminatedAt)
	if leaked {
		l.Title += ", leaked"
	}
}

func (b *tlBuilder) nodeStrips(l *tlLane, n *NodeRow, y, h float64, marks bool) {
	reg := n.Registered
	b.strip(l, reg, n.Deleted, y, h, "node", fmt.Sprintf("node %s registered %s", n.Name, b.at(reg)))
	if marks {
		b.mark(l, n.Ready, "dot", "mk-ready", "node Ready "+b.atp(n.Ready))
		b.mark(l, n.Deleted, "cross", "mk-end", "node deleted "+b.atp(n.Deleted))
	}
	l.Title = "Node " + n.Name + ": " + milestones(b, "registered", &reg, "ready", n.Ready, "deleted", n.Deleted)
}

func (b *tlBuilder) atp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return b.at(*t)
}

func (b *tlBuilder) podLane(p *PodRow, y float64) tlLane {
	l := b.lane(y, tlLaneH, p.Name, "", "pod")
	name := p.Namespace + "/" + p.Name
	b.podStrips(&l, p, l.Y+5, l.H-10, name)
	b.mark(&l, p.NominatedAt, "tick", "mk-nominated", "Karpenter nominated NodeClaim "+p.NominatedNodeClaim+" "+b.atp(p.NominatedAt))
	b.mark(&l, p.DeletedAt, "cross", "mk-end", "pod deleted "+b.atp(p.DeletedAt))
	created := p.Created
	l.Title = fmt.Sprintf("Pod %s (UID %s): %s", name, p.UID, milestones(b, "created", &created, "pending", p.PendingSince,
		"scheduled", p.ScheduledAt, "started", p.StartedAt, "deleted", p.DeletedAt))
	return l
}

// podStrips draws a pod's waiting, starting and running stretches at height h from y; name set
// gives each stretch a tooltip.
func (b *tlBuilder) podStrips(l *tlLane, p *PodRow, y, h float64, name string) {
	wait := p.Created
	waitClass := "waiting"
	if p.PendingSince != nil {
		wait, waitClass = *p.PendingSince, "pending"
	}
	tip := func(s string) string {
		if name == "" {
			return ""
		}
		return name + " " + s
	}
	waitEnd := firstSet(p.ScheduledAt, p.StartedAt, p.DeletedAt)
	reason := p.PendingReason
	if p.KarpenterMessage != "" {
		reason = joinNonEmpty("; Karpenter: ", reason, p.KarpenterMessage)
	}
	waitTitle := "pending from " + b.at(wait)
	if waitEnd != nil {
		waitTitle += " to " + b.at(*waitEnd)
	}
	if reason != "" {
		waitTitle += ": " + reason
	}
	b.strip(l, wait, waitEnd, y, h, waitClass, tip(waitTitle))
	if p.ScheduledAt != nil {
		if p.StartedAt == nil || p.StartedAt.After(*p.ScheduledAt) {
			b.strip(l, *p.ScheduledAt, firstSet(p.StartedAt, p.DeletedAt), y, h, "starting",
				tip("scheduled to "+p.Node+" "+b.at(*p.ScheduledAt)))
		}
	}
	if p.StartedAt != nil {
		t := "running from " + b.at(*p.StartedAt)
		if p.Node != "" {
			t += " on " + p.Node
		}
		if p.DeletedAt != nil {
			t += " until " + b.at(*p.DeletedAt)
		}
		b.strip(l, *p.StartedAt, p.DeletedAt, y, h, "running", tip(t))
	}
}

// aggregateLane draws many pods in one lane, as thin stacked strips.
func (b *tlBuilder) aggregateLane(pods []*PodRow, label string, y, h float64) tlLane {
	l := b.lane(y, h, label, startedRange(b, pods), "pods")
	n := b.podRows(&l, pods, y+4, h-8)
	l.Title = podSummary(b, pods)
	if n < len(pods) {
		l.Title += fmt.Sprintf(" (%d of them drawn as strips)", n)
	}
	return l
}

// podRows stacks pods' strips in h units from y, in order of pending (sampled when there
// are more than tlAggRows), so their spread in time shows without a lane each. It returns
// how many it drew.
func (b *tlBuilder) podRows(l *tlLane, pods []*PodRow, y, h float64) int {
	sorted := append([]*PodRow(nil), pods...)
	sort.SliceStable(sorted, func(i, j int) bool { return waitStart(sorted[i]).Before(waitStart(sorted[j])) })
	rows := sorted
	if len(rows) > tlAggRows {
		rows = make([]*PodRow, tlAggRows)
		for i := range rows {
			rows[i] = sorted[i*len(sorted)/tlAggRows]
		}
	}
	rh := h / float64(len(rows))
	for i, p := range rows {
		b.podStrips(l, p, y+float64(i)*rh, rh, "")
	}
	return len(rows)
}

func waitStart(p *PodRow) time.Time {
	if p.PendingSince != nil {
		return *p.PendingSince
	}
	return p.Created
}

func startedRange(b *tlBuilder, pods []*PodRow) string {
	var first, last *time.Time
	for _, p := range pods {
		if t := p.StartedAt; t != nil {
			if first == nil || t.Before(*first) {
				first = t
			}
			if last == nil || t.After(*last) {
				last = t
			}
		}
	}
	if first == nil {
		return "none started"
	}
	if first.Equal(*last) {
		return "started " + relative(first.Sub(b.origin))
	}
	return "started " + relative(first.Sub(b.origin)) + "…" + relative(last.Sub(b.origin))
}

func podSummary(b *tlBuilder, pods []*PodRow) string {
	running, deleted, waiting := 0, 0, 0
	var pendingFrom *time.Time
	for _, p := range pods {
		switch {
		case p.DeletedAt != nil:
			deleted++
		case p.StartedAt != nil:
			running++
		case isWaiting(p):
			waiting++
		}
		if t := p.PendingSince; t != nil && (pendingFrom == nil || t.Before(*pendingFrom)) {
			pendingFrom = t
		}
	}
	s := plural(len(pods), "pod")
	if pendingFrom != nil {
		s += ", pending from " + relative(pendingFrom.Sub(b.origin))
	}
	s += ", " + startedRange(b, pods)
	var states []string
	if running > 0 {
		states = append(states, fmt.Sprintf("%d running", running))
	}
	if waiting > 0 {
		states = append(states, fmt.Sprintf("%d never scheduled", waiting))
	}
	if deleted > 0 {
		states = append(states, fmt.Sprintf("%d deleted", deleted))
	}
	if len(states) > 0 {
		s += " (" + strings.Join(states, ", ") + ")"
	}
	return s
}

// milestones lists name/time pairs that happened: "created +1s, launched +1s".
func milestones(b *tlBuilder, pairs ...any) string {
	var out []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if t, _ := pairs[i+1].(*time.Time); t != nil {
			out = append(out, pairs[i].(string)+" "+relative(t.Sub(b.origin)))
		}
	}
	return strings.Join(out, ", ")
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

// tlAxis maps time to x. Quiet stretches longer than a twentieth of the span (and 15s) become
// breaks of fixed width, so a 5-second provisioning chain stays readable next to minutes of
// steady running; within the linear parts, time is to scale.
type tlAxis struct {
	origin, start time.Time
	knots         []tlKnot
	segs          []tlAxisSeg
	breaks        []tlBreak
}

type tlKnot struct{ t, x float64 }

type tlAxisSeg struct{ a, b, x0, x1 float64 }

func newAxis(origin time.Time, times []time.Time, x0, x1 float64) *tlAxis {
	ax := &tlAxis{origin: origin}
	var secs []float64
	for _, t := range times {
		secs = append(secs, math.Round(t.Sub(origin).Seconds()*1000)/1000)
	}
	sort.Float64s(secs)
	uniq := secs[:0]
	for _, s := range secs {
		if len(uniq) == 0 || s != uniq[len(uniq)-1] {
			uniq = append(uniq, s)
		}
	}
	secs = uniq
	if len(secs) == 0 {
		secs = []float64{0}
	}
	ax.start = origin.Add(time.Duration(secs[0] * float64(time.Second)))
	span := secs[len(secs)-1] - secs[0]
	threshold := math.Max(15, span/20)
	type gap struct {
		i int
		d float64
	}
	var gaps []gap
	for i := 0; i+1 < len(secs); i++ {
		if d := secs[i+1] - secs[i]; d > threshold {
			gaps = append(gaps, gap{i, d})
		}
	}
	sort.SliceStable(gaps, func(i, j int) bool { return gaps[i].d > gaps[j].d })
	if len(gaps) > 6 {
		gaps = gaps[:6]
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].i < gaps[j].i })
	from := secs[0]
	for _, g := range gaps {
		ax.segs = append(ax.segs, tlAxisSeg{a: from, b: secs[g.i]})
		from = secs[g.i+1]
	}
	ax.segs = append(ax.segs, tlAxisSeg{a: from, b: secs[len(secs)-1]})

	// A stretch with one instant in it gets a narrow fixed width; the others share the rest
	// in proportion to their durations, each at least tlMinSegW wide.
	const pointW = 12.0
	n := len(ax.segs)
	avail := (x1 - x0) - float64(n-1)*tlBreakW
	sum, points := 0.0, 0
	for _, s := range ax.segs {
		sum += s.b - s.a
		if s.b == s.a {
			points++
		}
	}
	linear := avail - float64(points)*pointW
	minW := 0.0
	if n > points {
		minW = math.Min(tlMinSegW, linear/float64(n-points))
	}
	x := x0
	for i := range ax.segs {
		s := &ax.segs[i]
		var w float64
		switch {
		case n == 1:
			w = avail
		case s.b == s.a:
			w = pointW
		default:
			w = minW + (linear-float64(n-points)*minW)*(s.b-s.a)/sum
		}
		s.x0, s.x1 = x, x+w
		switch {
		case s.b > s.a:
			ax.knots = append(ax.knots, tlKnot{s.a, x}, tlKnot{s.b, x + w})
		case n == 1:
			ax.knots = append(ax.knots, tlKnot{s.a, x + w/2})
		case i == 0:
			ax.knots = append(ax.knots, tlKnot{s.a, x})
		case i == n-1:
			ax.knots = append(ax.knots, tlKnot{s.a, x + w})
		default:
			ax.knots = append(ax.knots, tlKnot{s.a, x + w/2})
		}
		if i+1 < n {
			ax.breaks = append(ax.breaks, tlBreak{X: x + w, W: tlBreakW,
				Label: duration(time.Duration((ax.segs[i+1].a - s.b) * float64(time.Second)))})
		}
		x += w + tlBreakW
	}
	return ax
}

func (ax *tlAxis) x(t time.Time) float64 {
	return ax.xs(t.Sub(ax.origin).Seconds())
}

func (ax *tlAxis) xs(s float64) float64 {
	k := ax.knots
	if s <= k[0].t {
		return k[0].x
	}
	if s >= k[len(k)-1].t {
		return k[len(k)-1].x
	}
	i := sort.Search(len(k), func(i int) bool { return k[i].t > s }) - 1
	return k[i].x + (k[i+1].x-k[i].x)*(s-k[i].t)/(k[i+1].t-k[i].t)
}

// ticks puts labelled gridlines at round offsets within each linear stretch (about one per
// 70 units), plus the start of every stretch that follows a break.
func (ax *tlAxis) ticks() []tlTick {
	steps := []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400}
	label := func(s float64) string { return relative(time.Duration(s * float64(time.Second))) }
	var ts []tlTick
	for i, s := range ax.segs {
		if i > 0 || s.b == s.a {
			// Where time resumes after a break, say when: this label wins over round ones.
			ts = append(ts, tlTick{X: ax.xs(s.a), Label: label(s.a), major: true})
		}
		if s.b == s.a {
			continue
		}
		step := steps[len(steps)-1]
		for _, st := range steps {
			if st*(s.x1-s.x0)/(s.b-s.a) >= 70 {
				step = st
				break
			}
		}
		for k := math.Ceil(s.a/step) * step; k <= s.b+1e-9; k += step {
			if i > 0 && k == s.a {
				continue
			}
			ts = append(ts, tlTick{X: ax.xs(k), Label: label(k)})
		}
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].X < ts[j].X })
	const room = 56
	var out []tlTick
	for _, t := range ts {
		if n := len(out); n > 0 && t.X-out[n-1].X < room {
			if !t.major || out[n-1].major {
				continue
			}
			out = out[:n-1] // a round tick gives way to a break's end
			if n := len(out); n > 0 && t.X-out[n-1].X < room {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}
