package workshop

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/karplab/karplab/cluster/seats"
	"github.com/karplab/karplab/labs"
)

// UpOptions say what `workshop up` makes.
type UpOptions struct {
	Seats     int
	Learners  []string // by seat, from seat 1; fewer than Seats leaves the rest unnamed
	Labs      []string // the agenda; the first is staged in every seat
	MemoryMiB int64    // each seat's cap
	// Image returns the seat image, building it if need be; Up calls it only once every
	// refusal has passed and a seat must be made.
	Image func(context.Context) (string, error)
	// Status receives progress, one line per step, each seat's prefixed "seat N: ".
	Status io.Writer
	// MemAvailable is what the host can give the seats (default MemAvailable).
	MemAvailable func() (int64, error)
}

// DefaultMemoryMiB is a seat's cap: the lab's daemon holds about 500 MiB on the happy path.
const DefaultMemoryMiB = 1200

// hostReserveMiB is what the host keeps beside the seats (its engine, the CLI, the page).
const hostReserveMiB = 1024

// MaxSeats bounds a room: 2 cores carry a few labs, and a typo (--seats 300) is refused.
const MaxSeats = 64

// RefusedError is a refusal before anything is made: the command line exits 2 with it.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refuse(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// Up makes the room in dir (or finds it), creates the seats it lacks, starts the stopped
// ones with their data, runs `karplab start` in each, and stages the agenda's first lab in
// a seat that has none. Refusals come first, before anything is made. Seats 0 is the room's
// own count once it has seats (up again after a crash). The caller holds Lock.
func Up(ctx context.Context, p seats.Provider, dir string, opts UpOptions) (*Room, error) {
	if opts.Status == nil {
		opts.Status = io.Discard
	}
	room, err := Load(dir)
	if errors.Is(err, ErrNoRoom) {
		room, err = newRoom()
	}
	if err != nil {
		return nil, err
	}
	if opts.MemoryMiB == 0 {
		opts.MemoryMiB = cmp.Or(room.MemoryMiB, DefaultMemoryMiB)
	}
	if opts.Seats == 0 && len(room.Seats) > 0 {
		opts.Seats = len(room.Seats) // up again: the room as it was
	}
	if err := check(room, opts); err != nil {
		return nil, err
	}
	current, err := p.List(ctx, room.Labels())
	if err != nil {
		return nil, err
	}
	states := map[string]seats.State{}
	for _, st := range current {
		states[st.Name] = st.State
	}
	var missing []int
	for n := 1; n <= opts.Seats; n++ {
		if states[room.SeatName(n)] == "" {
			missing = append(missing, n)
		}
	}
	if err := checkMemory(len(missing), opts); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		if room.Image, err = opts.Image(ctx); err != nil {
			return nil, err
		}
	}
	room.Engine, room.MemoryMiB = p.Name(), opts.MemoryMiB
	if len(opts.Labs) > 0 {
		room.Labs = opts.Labs
	}
	for n := 1; n <= opts.Seats; n++ {
		s := room.Seat(n)
		if s == nil {
			room.Seats = append(room.Seats, Seat{Number: n, Name: room.SeatName(n)})
			s = &room.Seats[len(room.Seats)-1]
		}
		if n <= len(opts.Learners) && opts.Learners[n-1] != "" {
			s.Learner = opts.Learners[n-1]
		}
		if states[s.Name] == "" {
			s.Lab = "" // a new seat has nothing staged
		}
	}
	if err := room.Save(dir); err != nil { // before any seat: a crash from here on finds them
		return nil, err
	}
	fmt.Fprintf(opts.Status, "Workshop %s: %d seats on %s, %d MiB each, image %s\n", room.ID, opts.Seats, p.Name(), opts.MemoryMiB, room.Image)
	errs := make([]error, opts.Seats)
	var wg sync.WaitGroup
	var mu sync.Mutex // the room's seats, as each goroutine updates its own
	for n := 1; n <= opts.Seats; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &prefixWriter{w: opts.Status, prefix: "seat " + strconv.Itoa(n) + ": ", mu: &statusMu}
			mu.Lock()
			seat := *room.Seat(n)
			mu.Unlock()
			lab, err := upSeat(ctx, p, room, seat, states[seat.Name], out)
			if err != nil {
				errs[n-1] = fmt.Errorf("seat %d: %w", n, err)
			}
			mu.Lock()
			room.Seat(n).Lab = lab
			mu.Unlock()
			out.Flush()
		}()
	}
	wg.Wait()
	if err := room.Save(dir); err != nil {
		return nil, err
	}
	return room, errors.Join(errs...)
}

// statusMu keeps the seats' progress lines whole.
var statusMu sync.Mutex

// check refuses what no seat can fix: the seat count, the learners, an unknown lab.
func check(room *Room, opts UpOptions) error {
	if opts.Seats == 0 {
		return refuse("a new workshop needs --seats N (1 to %d)", MaxSeats)
	}
	if opts.Seats < 1 || opts.Seats > MaxSeats {
		return refuse("--seats %d: a room has 1 to %d seats", opts.Seats, MaxSeats)
	}
	if have := len(room.Seats); opts.Seats < have {
		return refuse("--seats %d: this workshop has %d seats already; karplab workshop down removes them all first", opts.Seats, have)
	}
	if len(opts.Learners) > opts.Seats {
		return refuse("%d learners' names for %d seats", len(opts.Learners), opts.Seats)
	}
	for _, name := range opts.Labs {
		if _, err := labs.Get(name); err != nil {
			return refuse("--labs: %v", err)
		}
	}
	if opts.MemoryMiB < 512 {
		return refuse("--memory %d: a seat's lab needs at least 512 MiB", opts.MemoryMiB)
	}
	return nil
}

// checkMemory refuses seats the host cannot hold beside what it keeps for itself.
func checkMemory(seatsToMake int, opts UpOptions) error {
	if seatsToMake == 0 {
		return nil
	}
	available := opts.MemAvailable
	if available == nil {
		available = MemAvailable
	}
	avail, err := available()
	if err != nil {
		return err
	}
	availMiB := avail >> 20
	need := int64(seatsToMake) * opts.MemoryMiB
	if need+hostReserveMiB <= availMiB {
		return nil
	}
	holds := max(0, (availMiB-hostReserveMiB)/opts.MemoryMiB)
	return refuse("%d new seats of %d MiB need %d MiB, and this host has %d MiB available (%d MiB kept for itself): it holds %d more seats (--memory sets a seat's cap)",
		seatsToMake, opts.MemoryMiB, need, availMiB, hostReserveMiB, holds)
}

// MemAvailable is the host's MemAvailable (/proc/meminfo), in bytes.
func MemAvailable() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading the host's memory: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				break
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("reading the host's memory: no MemAvailable in /proc/meminfo")
}

// upSeat brings one seat up and returns the lab staged in it.
func upSeat(ctx context.Context, p seats.Provider, room *Room, seat Seat, state seats.State, out io.Writer) (string, error) {
	switch state {
	case "":
		fmt.Fprintf(out, "creating %s\n", seat.Name)
		spec := seats.Spec{Name: seat.Name, Image: room.Image, MemoryBytes: room.MemoryMiB << 20, Labels: room.Labels(),
			// The daemon's soft limit, within the seat's cap beside Karpenter's process.
			Env: []string{"GOMEMLIMIT=" + strconv.FormatInt(room.MemoryMiB*3/4, 10) + "MiB"}}
		spec.Labels["karplab.seat"] = strconv.Itoa(seat.Number)
		if err := p.Create(ctx, spec); err != nil {
			return "", err
		}
	case seats.Exited:
		fmt.Fprintf(out, "starting %s again, with its data\n", seat.Name)
		if err := p.Start(ctx, seat.Name); err != nil {
			return seat.Lab, err
		}
	}
	if err := run(ctx, p, seat.Name, out, "karplab", "start"); err != nil {
		return seat.Lab, err
	}
	if seat.Lab != "" || len(room.Labs) == 0 {
		return seat.Lab, nil
	}
	if err := run(ctx, p, seat.Name, out, "karplab", "lab", "run", room.Labs[0]); err != nil {
		return "", err
	}
	return room.Labs[0], nil
}

// run runs argv in the seat's shell, its output to out; a non-zero exit is an error.
func run(ctx context.Context, p seats.Provider, name string, out io.Writer, argv ...string) error {
	code, err := p.Exec(ctx, name, seats.ExecOptions{Argv: Shell(argv...), Stdout: out, Stderr: out})
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%s exited %d", strings.Join(argv, " "), code)
	}
	return nil
}

// Shell is argv as the learner's terminal runs it: in a login shell, whose profile has
// done eval "$(karplab env)".
func Shell(argv ...string) []string {
	return append([]string{"bash", "-l", "-c", `exec "$@"`, "karplab-seat"}, argv...)
}

// Exec runs argv in seat n's shell and returns its exit code.
func Exec(ctx context.Context, p seats.Provider, dir string, n int, opts seats.ExecOptions) (int, error) {
	room, err := Load(dir)
	if err != nil {
		return 0, err
	}
	s := room.Seat(n)
	if s == nil {
		return 0, fmt.Errorf("no seat %d: the workshop has seats 1 to %d", n, len(room.Seats))
	}
	opts.Argv = Shell(opts.Argv...)
	code, err := p.Exec(ctx, s.Name, opts)
	for _, sentinel := range []error{seats.ErrNotRunning, seats.ErrNotFound} {
		if errors.Is(err, sentinel) { // the provider's error names the container only
			return 0, fmt.Errorf("seat %d (%s): %w; karplab workshop up starts it again", n, s.Name, sentinel)
		}
	}
	return code, err
}

// prefixWriter writes whole lines to w, each after prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
	buf    bytes.Buffer
}

func (pw *prefixWriter) Write(b []byte) (int, error) {
	pw.buf.Write(b)
	for {
		line, err := pw.buf.ReadBytes('\n')
		if err != nil {
			pw.buf.Write(line) // not a whole line yet
			return len(b), nil
		}
		pw.mu.Lock()
		fmt.Fprintf(pw.w, "%s%s", pw.prefix, line)
		pw.mu.Unlock()
	}
}

// Flush writes what is left of a last line without its newline.
func (pw *prefixWriter) Flush() {
	if pw.buf.Len() > 0 {
		pw.Write([]byte("\n")) //nolint:errcheck // never fails
	}
}

// decodeReport reads `karplab check --json`'s report.
func decodeReport(b []byte) (*labs.Report, error) {
	var r labs.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("reading the check's report: %w", err)
	}
	return &r, nil
}

// now is the clock of the grades (a test's own).
var now = time.Now
