package evidence

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/karplab/karplab/fakeec2"
)

// WriteText prints the evidence as tables: the per-pod chain, then NodeClaims, instances with
// their disks and interfaces, launch calls, leaks and cost.
func (ev *Evidence) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	base := ev.origin()
	rel := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		d := t.Sub(base).Round(time.Second)
		if d < 0 {
			return "-" + (-d).String()
		}
		return "+" + d.String()
	}
	if ev.Replay != nil {
		fmt.Fprintf(w, "Evidence taken %s; times are relative to %s, when karplab replay loaded a capture of %s:\n"+
			"earlier times (-) are production's, from the bundle; later ones are the lab's\n\n",
			ev.TakenAt.Local().Format(time.DateTime), base.Local().Format(time.DateTime), ev.Replay.CapturedAt.Local().Format(time.DateTime))
	} else {
		fmt.Fprintf(w, "Evidence taken %s; times are relative to %s (first pod created)\n\n", ev.TakenAt.Local().Format(time.DateTime), base.Local().Format(time.DateTime))
	}
	ev.writeLabClock(w)

	p("POD\tUID\tPENDING\tNODECLAIM\tINSTANCE\tNODE\tSCHEDULED\tSTARTED\tPHASE\n")
	for _, r := range ev.Pods {
		pending := rel(r.PendingSince)
		if r.PendingSince == nil && r.ScheduledAt != nil {
			pending = "never" // bound as it was made: a replacement's pods find its node ready
		}
		p("%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, short(r.UID), pending,
			Dash(r.NodeClaim), Dash(r.InstanceID), Dash(r.Node), rel(r.ScheduledAt), rel(r.StartedAt), r.Phase)
	}
	ev.writeUsage(tw, rel)
	p("\nNODECLAIM\tNODEPOOL\tTYPE\tZONE\tCAPACITY\tCREATED\tLAUNCHED\tREGISTERED\tINITIALIZED\tDELETED\tDISRUPTION\n")
	for _, r := range ev.NodeClaims {
		created := r.Created
		p("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.NodePool, Dash(r.InstanceType), Dash(r.Zone), Dash(r.CapacityType),
			rel(&created), rel(r.Launched), rel(r.Registered), rel(r.Initialized), rel(r.Deleted), Dash(r.DisruptionReason))
	}
	p("\nINSTANCE\tTYPE\tZONE\tCAPACITY\tSTATE\tLAUNCHED\tTERMINATED\tVOLUMES\tENIS\tUSD/H\tCOST\n")
	for _, r := range ev.Instances {
		launched := r.LaunchTime
		var vols, enis []string
		for _, v := range r.Volumes {
			vols = append(vols, fmt.Sprintf("%s %dGiB %s %s%s", v.ID, v.SizeGiB, v.Type, encryption(v.Encrypted), fate(v.Deleted, v.Outlived)))
		}
		for _, n := range r.ENIs {
			enis = append(enis, n.ID+fate(n.Deleted, n.Outlived))
		}
		p("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t$%.6f\n", r.ID, r.Type, r.Zone, r.CapacityType, r.State, rel(&launched), rel(r.TerminatedAt),
			strings.Join(vols, "; "), strings.Join(enis, "; "), r.PricePerHour, r.CostUSD)
	}
	if len(ev.Launches) > 0 {
		p("\nLAUNCH CALL\tTIME\tCALLER\tNODECLAIM\tRESULT\n")
		for _, c := range ev.Launches {
			t := c.Time
			result := strings.Join(c.Created, " ")
			if c.ErrorCode != "" {
				result = c.ErrorCode + ": " + c.Reason
			}
			p("%s %s\t%s\t%s\t%s\t%s\n", c.Action, c.RequestID, rel(&t), c.Caller, Dash(c.NodeClaim), result)
		}
	}
	if len(ev.Denied) > 0 {
		p("\nPENDING POD (NO NODE)\tREQUESTS\tNOMINATED\tLAUNCH CALLS\tINSTANCES\tWHY (karpenter, else scheduler)\n")
		for _, d := range ev.Denied {
			p("%s/%s\t%s\t%s\t%d\t%s\t%s\n", d.Namespace, d.Name, Dash(d.Requests), Dash(d.NominatedNodeClaim), len(d.LaunchCalls),
				Dash(strings.Join(d.Instances, " ")), Dash(d.Mismatch))
		}
	}
	if len(ev.Leaks) > 0 {
		p("\nLEAKED INSTANCE\tNODECLAIM TAG\tLEAKED SINCE\tCOST\n")
		for _, l := range ev.Leaks {
			since := l.Since
			p("%s\t%s\t%s\t$%.6f\n", l.InstanceID, Dash(l.NodeClaim)+launchedBy(l.FleetID), rel(&since), l.CostUSD)
		}
	}
	if len(ev.Unattached) > 0 {
		p("\nUNATTACHED (%s)\tDETAIL\tLAST INSTANCE\tUNUSED SINCE\tUSD/H\tCOST\n", UnattachedSummary(ev.Unattached))
		for _, u := range ev.Unattached {
			since := u.Since
			p("%s %s\t%s\t%s\t%s\t%.6f\t$%.6f\n", u.Kind, u.ID, u.Detail, Dash(u.LastInstance), rel(&since), u.PricePerHour, u.CostUSD)
		}
	}
	p("\nCOST BY TAG\tVALUE\tUSD\tRESOURCES\n")
	for _, key := range CostTagKeys {
		for _, g := range ev.Cost.ByTag[key] {
			p("%s\t%s\t$%.6f\t%d\n", key, OrUntagged(g.Value), g.USD, len(g.Resources))
		}
	}
	p("total\t\t$%.6f\t(now $%.4f/h)\n", ev.Cost.TotalUSD, ev.Cost.HourlyNowUSD)
	ev.writeBudgets(p)
	return tw.Flush()
}

// origin is the time relative times count from: the first workload pod, else the first instance.
func (ev *Evidence) origin() time.Time {
	if ev.Replay != nil {
		return ev.Replay.LoadedAt
	}
	var t time.Time
	for _, r := range ev.Pods {
		if t.IsZero() || r.Created.Before(t) {
			t = r.Created
		}
	}
	for _, r := range ev.Instances {
		if t.IsZero() || r.LaunchTime.Before(t) {
			t = r.LaunchTime
		}
	}
	if t.IsZero() {
		t = ev.TakenAt
	}
	return t
}

func short(uid string) string {
	if len(uid) > 8 {
		return uid[:8]
	}
	return uid
}

// Dash prints an absent value as the tables do; the graders' text does the same.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OrUntagged prints an absent tag value as the tables do.
func OrUntagged(s string) string {
	if s == "" {
		return "(untagged)"
	}
	return s
}

// fate is what became of an instance's volume or interface.
func fate(deleted, outlived bool) string {
	switch {
	case deleted:
		return " (deleted)"
	case outlived:
		return " (OUTLIVED the instance)"
	}
	return ""
}

func encryption(e *bool) string {
	switch {
	case e == nil:
		return "encryption?"
	case *e:
		return "encrypted"
	}
	return "UNENCRYPTED"
}

// writeBudgets prints each budget's spend and the alerts it fired, in lab time (the account's
// clock, which karplab time skip moves).
func (ev *Evidence) writeBudgets(p func(format string, args ...any)) {
	if len(ev.Budgets) == 0 {
		return
	}
	p("\nBUDGET\tPERIOD\tLIMIT\tACTUAL\tFORECAST\tUSD/H\tALERTS (lab time)\n")
	for _, b := range ev.Budgets {
		var alerts []string
		for _, a := range b.Alerts {
			alerts = append(alerts, fmt.Sprintf("%s %s $%.2f at %s with $%.4f spent", a.NotificationType, a.ComparisonOperator,
				a.ThresholdUSD, a.Time.UTC().Format(time.RFC3339), a.ActualUSD))
		}
		p("%s\t%s\t$%.2f\t$%.4f\t$%.2f\t%.4f\t%s\n", b.Name, b.TimeUnit, b.LimitUSD, b.ActualUSD, b.ForecastUSD, b.USDPerHour,
			Dash(strings.Join(alerts, "; ")))
	}
}

// writeLabClock says, when karplab time skip moved lab time ahead, that every time of the
// report is lab time, and when each skip happened on both clocks.
func (ev *Evidence) writeLabClock(w io.Writer) {
	if len(ev.LabSkips) == 0 {
		return
	}
	fmt.Fprintf(w, "Times are lab time, %s ahead of the wall clock (karplab time skip); Kubernetes' own timestamps (kubectl) are wall time:\n", fakeec2.Lead(ev.LabSkips))
	for _, s := range ev.LabSkips {
		fmt.Fprintf(w, "  skipped %s at %s wall: lab time %s -> %s\n", s.To.Sub(s.From), s.Wall.Local().Format(time.DateTime),
			s.From.Local().Format(time.DateTime), s.To.Local().Format(time.DateTime))
	}
	fmt.Fprintln(w)
}

// launchedBy names the fleet that launched an instance, when its system tag says.
func launchedBy(fleetID string) string {
	if fleetID == "" {
		return ""
	}
	return " (fleet " + fleetID + ")"
}
