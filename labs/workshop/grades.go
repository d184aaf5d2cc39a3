package workshop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/karplab/karplab/cluster/seats"
	"github.com/karplab/karplab/labs"
)

// SeatStatus is one row of `workshop status`.
type SeatStatus struct {
	Seat        int         `json:"seat"`
	Name        string      `json:"name"`
	Engine      string      `json:"engine"`
	State       seats.State `json:"state"`
	Learner     string      `json:"learner,omitempty"`
	Lab         string      `json:"lab,omitempty"`
	MemoryBytes int64       `json:"memoryBytes,omitempty"`
	LastCheck   *Grade      `json:"lastCheck,omitempty"`
}

// Status joins the room's seats with what the provider says of them.
func Status(ctx context.Context, p seats.Provider, dir string) (*Room, []SeatStatus, error) {
	room, err := Load(dir)
	if err != nil {
		return nil, nil, err
	}
	list, err := p.List(ctx, room.Labels())
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]seats.Status{}
	for _, st := range list {
		byName[st.Name] = st
	}
	var rows []SeatStatus
	for _, s := range room.Seats {
		st, ok := byName[s.Name]
		if !ok {
			st.State = seats.Missing
		}
		rows = append(rows, SeatStatus{Seat: s.Number, Name: s.Name, Engine: room.Engine, State: st.State, Learner: s.Learner, Lab: s.Lab, MemoryBytes: st.MemoryBytes, LastCheck: s.LastCheck})
	}
	return room, rows, nil
}

// GradeRow is one seat's grade: checked now (Fresh) or the last one recorded.
type GradeRow struct {
	Seat    int         `json:"seat"`
	Learner string      `json:"learner,omitempty"`
	State   seats.State `json:"state"`
	Fresh   bool        `json:"fresh"` // false: the seat does not run, this is its last grade
	Grade   *Grade      `json:"grade,omitempty"`
}

// gradeParallel is how many seats are checked at once (each check is a process of its own
// in the seat; the host has few cores).
const gradeParallel = 4

// Grades runs `karplab check LAB --json` in every running seat (LAB is lab, else the lab
// staged in the seat, else the agenda's first), records each grade in the room, and for a
// seat that does not run reads its last.
func Grades(ctx context.Context, p seats.Provider, dir, lab string) ([]GradeRow, error) {
	room, rows, err := Status(ctx, p, dir)
	if err != nil {
		return nil, err
	}
	if lab != "" {
		if _, err := labs.Get(lab); err != nil {
			return nil, &RefusedError{Reason: err.Error()}
		}
	}
	out := make([]GradeRow, len(rows))
	sem := make(chan struct{}, gradeParallel)
	var wg sync.WaitGroup
	for i, r := range rows {
		out[i] = GradeRow{Seat: r.Seat, Learner: r.Learner, State: r.State, Grade: r.LastCheck}
		which := firstOf(lab, r.Lab, first(room.Labs))
		if r.State != seats.Running || which == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			g := grade(ctx, p, r.Name, which)
			out[i].Grade, out[i].Fresh = g, true
		}()
	}
	wg.Wait()
	for _, r := range out {
		if r.Fresh {
			room.Seat(r.Seat).LastCheck = r.Grade
		}
	}
	if err := room.Save(dir); err != nil {
		return nil, err
	}
	return out, nil
}

// grade runs one check in the seat.
func grade(ctx context.Context, p seats.Provider, name, lab string) *Grade {
	var stdout, stderr bytes.Buffer
	g := &Grade{Lab: lab, At: now().UTC()}
	code, err := p.Exec(ctx, name, seats.ExecOptions{Argv: Shell("karplab", "check", lab, "--json"), Stdout: &stdout, Stderr: &stderr})
	if err == nil && code > 1 {
		err = fmt.Errorf("karplab check exited %d: %s", code, lastLine(stderr.String()))
	}
	if err != nil {
		g.Error = err.Error()
		return g
	}
	report, err := decodeReport(stdout.Bytes())
	if err != nil {
		g.Error = err.Error()
		return g
	}
	g.Passed, g.Checks, g.Failed = report.Passed, len(report.Checks), report.Failed()
	return g
}

// Down removes every seat of the room with its data (those on disk and any the engine
// holds under the room's label), then the room's state.
func Down(ctx context.Context, p seats.Provider, dir string) (int, error) {
	room, err := Load(dir)
	if err != nil {
		return 0, err
	}
	names := map[string]bool{}
	for _, s := range room.Seats {
		names[s.Name] = true
	}
	list, err := p.List(ctx, room.Labels())
	if err != nil {
		return 0, err
	}
	for _, st := range list {
		names[st.Name] = true
	}
	var errs []error
	for name := range names {
		if err := p.Remove(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err // the state stays, so down again finds what is left
	}
	return len(names), Remove(dir)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
