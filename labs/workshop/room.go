package workshop

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Room is the workshop's state on disk: Dir/room.json.
type Room struct {
	// ID names the room's seats (karplab-seat-ID-N) and labels them, so two homes on one
	// engine never share a seat.
	ID        string    `json:"id"`
	Engine    string    `json:"engine"`
	Image     string    `json:"image"`
	MemoryMiB int64     `json:"memoryMiB"`
	Labs      []string  `json:"labs,omitempty"` // the agenda, in order
	Seats     []Seat    `json:"seats"`
	Created   time.Time `json:"created"`
}

// Seat is one learner's place.
type Seat struct {
	Number  int    `json:"number"`
	Name    string `json:"name"` // the provider's name for it
	Learner string `json:"learner,omitempty"`
	// Lab is the lab staged in the seat now ("" before the first).
	Lab       string `json:"lab,omitempty"`
	LastCheck *Grade `json:"lastCheck,omitempty"`
}

// Grade is one `karplab check LAB --json` of a seat.
type Grade struct {
	Lab    string    `json:"lab"`
	Passed bool      `json:"passed"`
	Checks int       `json:"checks"`
	Failed []string  `json:"failed,omitempty"` // the failed checks' IDs
	At     time.Time `json:"at"`
	// Error is why no report came (the lab not running); Passed is false then.
	Error string `json:"error,omitempty"`
}

// Labels are what every seat of the room carries.
func (r *Room) Labels() map[string]string { return map[string]string{"karplab.workshop": r.ID} }

// SeatName is the provider's name for seat n.
func (r *Room) SeatName(n int) string { return "karplab-seat-" + r.ID + "-" + strconv.Itoa(n) }

// Seat is seat n, or nil.
func (r *Room) Seat(n int) *Seat {
	for i := range r.Seats {
		if r.Seats[i].Number == n {
			return &r.Seats[i]
		}
	}
	return nil
}

// newRoom is an empty room with a fresh ID.
func newRoom() (*Room, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &Room{ID: hex.EncodeToString(b), Created: time.Now().UTC()}, nil
}

func statePath(dir string) string { return filepath.Join(dir, "room.json") }

// ErrNoRoom means there is no workshop in the home: `workshop up` makes one.
var ErrNoRoom = errors.New("no workshop here (karplab workshop up --seats N starts one)")

// Load reads the room in dir; ErrNoRoom when there is none.
func Load(dir string) (*Room, error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoRoom
	}
	if err != nil {
		return nil, fmt.Errorf("reading the workshop: %w", err)
	}
	var r Room
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("reading the workshop %s: %w", statePath(dir), err)
	}
	if r.ID == "" {
		return nil, fmt.Errorf("reading the workshop %s: no id", statePath(dir))
	}
	return &r, nil
}

// Save writes the room to dir whole (a rename), so a crash leaves the old state or the new.
func (r *Room) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving the workshop: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving the workshop: %w", err)
	}
	if err := os.Rename(tmp, statePath(dir)); err != nil {
		return fmt.Errorf("saving the workshop: %w", err)
	}
	return nil
}

// Remove deletes the room's state (after its seats are gone).
func Remove(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the workshop's state: %w", err)
	}
	return nil
}

// Lock holds the room in dir for one command until unlock (up, grades and down each save the
// whole room, and two at once would lose one's changes); a second waits its turn.
func Lock(dir string) (unlock func(), err error) {
	// Beside dir, not in it: a refused up leaves no dir, and down removes it.
	f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the workshop: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the workshop: %w", err)
	}
	return func() { f.Close() }, nil
}
