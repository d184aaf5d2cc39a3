package evidence

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/karplab/karplab/fakeec2/billing"
)

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
			rows = append(rows, costRow{Key: key, Value: OrUntagged(g.Value), USD: g.USD, Resources: g.Resources, Untagged: g.Value == ""})
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
			desc = append(desc, fmt.Sprintf("%s %s (%.0f%%)", OrUntagged(g.Value), fmt.Sprintf("$%.6f", g.USD), share*100))
			if i >= maxBars {
				ch.More++
				continue
			}
			y := gap + float64(i)*(barH+gap)
			b := costBar{Y: y, TextY: y + barH/2 + 4, W: math.Max(barMax*share, 1), Label: clip(OrUntagged(g.Value), 16),
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

func viewGroups(gs []billing.CostGroup) []costGroupView {
	out := make([]costGroupView, 0, len(gs))
	for _, g := range gs {
		out = append(out, costGroupView{Value: g.Value, USD: g.USD, Resources: len(g.Resources)})
	}
	return out
}
