package evidence

import (
	"math"
	"sort"
	"time"
)

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
	secs := uniqueSeconds(origin, times)
	ax.start = origin.Add(time.Duration(secs[0] * float64(time.Second)))
	ax.segs = linearStretches(secs)
	ax.layout(x0, x1)
	return ax
}

// uniqueSeconds are the times as sorted, distinct offsets from origin (to the millisecond);
// no times give a single offset of zero.
func uniqueSeconds(origin time.Time, times []time.Time) []float64 {
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
	return secs
}

// linearStretches cuts sorted offsets at their six longest quiet gaps (those over the threshold).
func linearStretches(secs []float64) []tlAxisSeg {
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
	var segs []tlAxisSeg
	from := secs[0]
	for _, g := range gaps {
		segs = append(segs, tlAxisSeg{a: from, b: secs[g.i]})
		from = secs[g.i+1]
	}
	return append(segs, tlAxisSeg{a: from, b: secs[len(secs)-1]})
}

// layout places the stretches between x0 and x1 with a break between each two, and sets the
// knots that map time to x.
func (ax *tlAxis) layout(x0, x1 float64) {
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
