package evidence

import "time"

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
