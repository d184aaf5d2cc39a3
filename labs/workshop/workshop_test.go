package workshop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/cluster/seats"
)

// fakeProvider keeps seats in memory and answers karplab check with a report of its own.
type fakeProvider struct {
	mu     sync.Mutex
	seats  map[string]*seats.Status
	execs  []string // "NAME: argv after the shell"
	report map[string]string
}

func newFake() *fakeProvider {
	return &fakeProvider{seats: map[string]*seats.Status{}, report: map[string]string{}}
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Create(ctx context.Context, spec seats.Spec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seats[spec.Name] != nil {
		return seats.ErrExists
	}
	f.seats[spec.Name] = &seats.Status{Name: spec.Name, State: seats.Running, Labels: spec.Labels}
	return nil
}

func (f *fakeProvider) Start(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seats[name] == nil {
		return seats.ErrNotFound
	}
	f.seats[name].State = seats.Running
	return nil
}

func (f *fakeProvider) Exec(ctx context.Context, name string, opts seats.ExecOptions) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.seats[name]
	if s == nil {
		return 0, seats.ErrNotFound
	}
	if s.State != seats.Running {
		return 0, seats.ErrNotRunning
	}
	argv := opts.Argv[len(Shell()):]
	f.execs = append(f.execs, name+": "+strings.Join(argv, " "))
	if slices.Equal(argv[:2], []string{"karplab", "check"}) && opts.Stdout != nil {
		io.WriteString(opts.Stdout, f.report[name])
		if strings.Contains(f.report[name], `"passed": false`) {
			return 1, nil
		}
	}
	return 0, nil
}

func (f *fakeProvider) State(ctx context.Context, name string) (seats.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.seats[name]; s != nil {
		return *s, nil
	}
	return seats.Status{Name: name, State: seats.Missing}, nil
}

func (f *fakeProvider) List(ctx context.Context, labels map[string]string) ([]seats.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seats.Status
	for _, s := range f.seats {
		if s.Labels["karplab.workshop"] == labels["karplab.workshop"] {
			out = append(out, *s)
		}
	}
	return out, nil
}

func (f *fakeProvider) Remove(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.seats, name)
	return nil
}

func plenty() (int64, error) { return 64 << 30, nil }

func upOptions(n int, labs ...string) UpOptions {
	return UpOptions{Seats: n, Labs: labs, MemAvailable: plenty, Image: func(context.Context) (string, error) { return "seat:test", nil }}
}

// The state file keeps what up wrote, whole, and a missing one is ErrNoRoom.
func TestRoomState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "workshop")
	if _, err := Load(dir); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("Load of no room = %v, want ErrNoRoom", err)
	}
	at := time.Date(2026, 12, 8, 10, 0, 0, 0, time.UTC)
	want := &Room{ID: "abc123", Engine: "docker", Image: "seat:1", MemoryMiB: 1200, Labs: []string{"happy-path", "denied-path"}, Created: at,
		Seats: []Seat{{Number: 1, Name: "karplab-seat-abc123-1", Learner: "ana", Lab: "happy-path", LastCheck: &Grade{Lab: "happy-path", Passed: true, Checks: 8, At: at}}, {Number: 2, Name: "karplab-seat-abc123-2"}}}
	if err := want.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load after Save (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "room.json.tmp")); err == nil {
		t.Error("Save left its temporary file")
	}
	if err := os.WriteFile(filepath.Join(dir, "room.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "room.json") {
		t.Errorf("Load of a broken file = %v, want an error naming it", err)
	}
}

// Each refusal is one line and comes before anything is made: no seat, no image, no state.
func TestUpRefusals(t *testing.T) {
	tight := func() (int64, error) { return 3 << 30, nil }
	tests := []struct {
		name string
		opts UpOptions
		want string
	}{
		{name: "unknown lab", opts: upOptions(2, "happy-path", "no-such-lab"), want: `--labs: no lab named "no-such-lab"; the labs are: happy-path`},
		{name: "no seats", opts: upOptions(0), want: "a new workshop needs --seats N (1 to 64)"},
		{name: "negative seats", opts: upOptions(-1), want: "--seats -1: a room has 1 to 64 seats"},
		{name: "too many seats", opts: upOptions(500), want: "--seats 500: a room has 1 to 64 seats"},
		{name: "more learners than seats", opts: UpOptions{Seats: 1, Learners: []string{"ana", "ben"}, MemAvailable: plenty}, want: "2 learners' names for 1 seats"},
		{name: "beyond the host's memory", opts: UpOptions{Seats: 3, MemAvailable: tight},
			want: "3 new seats of 1200 MiB need 3600 MiB, and this host has 3072 MiB available (1024 MiB kept for itself): it holds 1 more seats"},
		{name: "a cap too small", opts: UpOptions{Seats: 1, MemoryMiB: 100, MemAvailable: plenty}, want: "--memory 100: a seat's lab needs at least 512 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "workshop")
			p := newFake()
			built := false
			tt.opts.Image = func(context.Context) (string, error) { built = true; return "seat:test", nil }
			_, err := Up(context.Background(), p, dir, tt.opts)
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Up = %v, want a one-line refusal saying %q", err, tt.want)
			}
			if _, err := os.Stat(dir); err == nil || built || len(p.seats) > 0 {
				t.Errorf("a refusal made something: state dir %v, image built %v, seats %d", err == nil, built, len(p.seats))
			}
		})
	}
}

// Up makes the seats, starts each lab and stages the first lab; after a seat is killed,
// up again starts it with its data (its lab stays staged) and makes a removed one anew;
// grades run the check where a seat runs and keep the last grade where it does not; down
// removes every seat and the state.
func TestUpGradesDown(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "workshop")
	p := newFake()
	var status strings.Builder
	opts := upOptions(3, "happy-path")
	opts.Learners, opts.Status = []string{"ana", "ben"}, &status
	room, err := Up(ctx, p, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	name := room.SeatName
	for n := 1; n <= 3; n++ {
		for _, want := range []string{name(n) + ": karplab start", name(n) + ": karplab lab run happy-path"} {
			if !slices.Contains(p.execs, want) {
				t.Errorf("execs %q lack %q", p.execs, want)
			}
		}
	}
	if !strings.Contains(status.String(), "seat 2: creating "+name(2)) {
		t.Errorf("progress lacks seat 2's prefixed line:\n%s", status.String())
	}
	loaded, _ := Load(dir)
	if got := []string{loaded.Seats[0].Learner, loaded.Seats[1].Learner, loaded.Seats[2].Learner, loaded.Seats[2].Lab}; !slices.Equal(got, []string{"ana", "ben", "", "happy-path"}) {
		t.Errorf("learners and seat 3's lab = %q", got)
	}

	p.report[name(1)] = `{"lab": "happy-path", "passed": true, "checks": [{"id": "a", "passed": true}, {"id": "b", "passed": true}]}`
	p.report[name(2)] = `{"lab": "happy-path", "passed": false, "checks": [{"id": "a", "passed": true}, {"id": "b", "passed": false}]}`
	p.report[name(3)] = p.report[name(1)]
	if _, err := Grades(ctx, p, dir, ""); err != nil {
		t.Fatal(err)
	}
	p.seats[name(1)].State = seats.Exited // killed
	delete(p.seats, name(3))              // removed under the room
	rows, err := Grades(ctx, p, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%v %v %v | %v %v %v | %v %v", rows[0].State, rows[0].Fresh, rows[0].Grade.Passed, rows[1].State, rows[1].Fresh, rows[1].Grade.Failed, rows[2].State, rows[2].Fresh)
	if want := "exited false true | running true [b] | missing false"; got != want {
		t.Errorf("grades = %s, want %s", got, want)
	}

	p.execs = nil
	if _, err := Up(ctx, p, dir, upOptions(0)); err != nil { // the room's own 3 seats
		t.Fatal(err)
	}
	if p.seats[name(1)].State != seats.Running || p.seats[name(3)] == nil {
		t.Fatalf("up again left seat 1 %v and seat 3 %v", p.seats[name(1)].State, p.seats[name(3)])
	}
	if slices.Contains(p.execs, name(1)+": karplab lab run happy-path") || !slices.Contains(p.execs, name(3)+": karplab lab run happy-path") {
		t.Errorf("up again staged %q; want only the new seat 3 staged", p.execs)
	}

	if n, err := Down(ctx, p, dir); err != nil || n != 3 || len(p.seats) != 0 {
		t.Errorf("Down = %d, %v, leaving %d seats; want 3 removed, none left", n, err, len(p.seats))
	}
	if _, err := Load(dir); !errors.Is(err, ErrNoRoom) {
		t.Errorf("after down, Load = %v, want ErrNoRoom", err)
	}
}

// The lock waits for the command that holds it.
func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "workshop")
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time)
	go func() {
		second, err := Lock(dir)
		if err != nil {
			t.Error(err)
		}
		got <- time.Now()
		second()
	}()
	time.Sleep(100 * time.Millisecond)
	released := time.Now()
	unlock()
	if at := <-got; at.Before(released) {
		t.Errorf("the second Lock returned while the first held it")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("Lock made %s: a refused up must leave none", dir)
	}
}
