package evidence

import (
	"fmt"
	"io"
	"time"

	"github.com/karplab/karplab/cluster/metrics"
)

// UsageRow is what the lab's metrics-server observed of a pod: its peaks against what it
// requested, and whether the kubelet killed or evicted it for memory.
type UsageRow struct {
	MemoryRequest string     `json:"memoryRequest"`
	MemoryLimit   string     `json:"memoryLimit,omitempty"`
	PeakMemory    string     `json:"peakMemory"`
	PeakMemoryAt  *time.Time `json:"peakMemoryAt,omitempty"`
	// PeakBytes and RequestBytes are the same, for graders' arithmetic.
	PeakBytes    int64  `json:"peakBytes"`
	RequestBytes int64  `json:"requestBytes"`
	CPURequest   string `json:"cpuRequest"`
	PeakCPU      string `json:"peakCPU"`
	OOMKills     int    `json:"oomKills,omitempty"`
	Evicted      string `json:"evicted,omitempty"`
}

// MemoryString prints bytes as kubectl top does (Mi), or in Gi when they are whole.
func MemoryString(bytes int64) string {
	if bytes != 0 && bytes%(1<<30) == 0 {
		return fmt.Sprintf("%dGi", bytes>>30)
	}
	return fmt.Sprintf("%dMi", bytes>>20)
}

// addUsage joins the metrics-server's records to the pod rows, by pod UID.
func addUsage(ev *Evidence, rep *metrics.Report) {
	if rep == nil {
		return
	}
	byUID := map[string]metrics.PodUsage{}
	for _, u := range rep.Pods {
		byUID[string(u.UID)] = u
	}
	for i := range ev.Pods {
		u, ok := byUID[ev.Pods[i].UID]
		if !ok {
			continue
		}
		row := &UsageRow{
			MemoryRequest: MemoryString(u.Request.Memory.Value()), PeakMemory: MemoryString(u.Peak.Memory.Value()),
			PeakBytes: u.Peak.Memory.Value(), RequestBytes: u.Request.Memory.Value(),
			CPURequest: u.Request.CPU.String(), PeakCPU: u.Peak.CPU.String(), Evicted: u.Evicted,
		}
		if !u.Limit.Memory.IsZero() {
			row.MemoryLimit = MemoryString(u.Limit.Memory.Value())
		}
		if !u.PeakMemoryAt.IsZero() {
			at := u.PeakMemoryAt
			row.PeakMemoryAt = &at
		}
		for _, c := range u.Containers {
			row.OOMKills += c.OOMKills
		}
		ev.Pods[i].Usage = row
	}
}

// writeUsage prints the USAGE table when the metrics-server observed any workload pod.
func (ev *Evidence) writeUsage(w io.Writer, rel func(*time.Time) string) {
	header := false
	for _, r := range ev.Pods {
		u := r.Usage
		if u == nil {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nUSAGE (observed by the lab's metrics-server)\tMEM REQUEST\tMEM LIMIT\tMEM PEAK\tAT\tCPU REQUEST\tCPU PEAK\tKILLED\n")
			header = true
		}
		killed := "-"
		switch {
		case u.Evicted != "":
			killed = "Evicted"
		case u.OOMKills > 0:
			killed = fmt.Sprintf("OOMKilled x%d", u.OOMKills)
		}
		fmt.Fprintf(w, "%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, u.MemoryRequest, Dash(u.MemoryLimit), u.PeakMemory,
			rel(u.PeakMemoryAt), u.CPURequest, u.PeakCPU, killed)
	}
}
