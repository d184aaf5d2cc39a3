package evidence

import (
	"fmt"
	"math"
	"strings"
	"time"
)

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
	labelBreaks(tl.Breaks)

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
		tl.Note = hiddenNote(sources, shown)
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
			add(b.waitingGroup(waiting, y))
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
	tl.Title = timelineTitle(ev, ax, tl.Breaks)
	tl.Desc = strings.Join(desc, " ")
	if tl.Note != "" {
		tl.Desc += " " + tl.Note
	}
	return tl
}

// labelBreaks shows a break's label only where it clears the label of the break before.
func labelBreaks(breaks []tlBreak) {
	lastEnd := math.Inf(-1)
	for i := range breaks {
		br := &breaks[i]
		w := 6.5 * float64(len(br.Label)+4)
		if c := br.X + br.W/2; c-w/2 > lastEnd+4 {
			br.ShowLabel, lastEnd = true, c+w/2
		}
	}
}

// hiddenNote says how many machines (and their pods) a compact timeline leaves out, if any.
func hiddenNote(sources, shown []*tlSource) string {
	hidden := len(sources) - len(shown)
	if hidden <= 0 {
		return ""
	}
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
	return fmt.Sprintf("And %s with %s are not drawn (failed, disrupted and leaked machines are drawn first); the tables below list every one.",
		plural(hidden, "more machine"), plural(hiddenPods, "pod"))
}

// timelineTitle is the SVG's title: what it draws, over which span, and which stretches are compressed.
func timelineTitle(ev *Evidence, ax *tlAxis, breaks []tlBreak) string {
	origin := ax.origin
	title := fmt.Sprintf("Timeline of %d pods, %d NodeClaims and %d instances, from %s to %s (evidence taken).",
		len(ev.Pods), len(ev.NodeClaims), len(ev.Instances), relative(ax.start.Sub(origin)), relative(ev.TakenAt.Sub(origin)))
	if len(breaks) > 0 {
		var gaps []string
		for _, br := range breaks {
			gaps = append(gaps, br.Label)
		}
		title += " Quiet stretches (" + strings.Join(gaps, ", ") + ") are drawn compressed."
	}
	return title
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
