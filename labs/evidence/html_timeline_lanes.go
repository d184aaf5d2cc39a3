package evidence

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/accesskeys"
)

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
		title += " by " + accesskeys.Who(in.LaunchedBy)
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
