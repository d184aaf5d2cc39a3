package evidence

import "time"

type podView struct {
	Row                                  *PodRow
	Pending, Scheduled, Started, Deleted stamp
	Waited                               string // pending to started
	PhaseClass                           string
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
