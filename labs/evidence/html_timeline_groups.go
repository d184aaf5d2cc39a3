package evidence

import (
	"fmt"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/accesskeys"
)

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
		who := accesskeys.Who(c.Caller)
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

// waitingGroup draws the pods that never reached a node in one aggregate lane.
func (b *tlBuilder) waitingGroup(waiting *tlSource, y float64) (tlGroup, string) {
	g := tlGroup{Y: y, TextY: y + 17}
	g.Title, g.Sub, g.Class = waiting.heading()
	l := b.aggregateLane(waiting.pods, plural(len(waiting.pods), "pod"), y+tlHeadH, tlAggH)
	g.Lanes, g.H = []tlLane{l}, tlHeadH+l.H
	return g, g.Title + " (" + g.Sub + "): " + l.Title + "."
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

func (b *tlBuilder) atp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return b.at(*t)
}
