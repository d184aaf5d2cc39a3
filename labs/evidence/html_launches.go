package evidence

import (
	"time"

	"github.com/karplab/karplab/fakeec2/accesskeys"
)

type launchView struct {
	Row    *AuditCall
	At     stamp
	Caller string
	Class  string
}

// addLaunches fills the launch calls table and counts the failed calls.
func (p *page) addLaunches(ev *Evidence, st func(*time.Time) stamp) {
	for i := range ev.Launches {
		c := &ev.Launches[i]
		at := c.Time
		v := launchView{Row: c, At: st(&at), Caller: accesskeys.Who(c.Caller), Class: "ok"}
		if c.ErrorCode != "" {
			v.Class = "bad"
			p.Failed++
		} else if len(c.Errors) > 0 {
			v.Class = "warn"
		}
		p.Launches = append(p.Launches, v)
	}
}
