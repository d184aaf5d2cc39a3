package seats

import (
	"context"
	"errors"
	"io"
)

// Provider runs seats. Every method takes the context first; a seat is named by the name
// it was created with, unique within the provider.
type Provider interface {
	// Name names the provider, enough to make it again ("docker", "podman", later "kubernetes").
	Name() string

	// Create makes the seat spec names from spec.Image and starts it: capped at
	// spec.MemoryBytes, with no network and no privileges. It returns ErrExists when a seat
	// of that name exists (running or not), and leaves nothing behind when it fails.
	Create(ctx context.Context, spec Spec) error

	// Start starts a seat that exited, with the data it had. It returns ErrNotFound when
	// there is no such seat, and nil when it runs already.
	Start(ctx context.Context, name string) error

	// Exec runs opts.Argv in the running seat, as its learner, and returns the command's
	// exit code. The error is for what kept the command from running: ErrNotFound,
	// ErrNotRunning, or the engine's own failure; a command that ran and failed is a code.
	Exec(ctx context.Context, name string, opts ExecOptions) (int, error)

	// State is the seat's status. A seat that does not exist is State Missing, not an error.
	State(ctx context.Context, name string) (Status, error)

	// List is the status of every seat whose labels include all of labels, by name.
	List(ctx context.Context, labels map[string]string) ([]Status, error)

	// Remove stops the seat and removes it with its data. A missing seat is not an error.
	Remove(ctx context.Context, name string) error
}

// Spec is what a seat is made of.
type Spec struct {
	Name        string
	Image       string
	MemoryBytes int64
	// Env is set in the seat for every process, KEY=VALUE.
	Env []string
	// Labels find the seat again (List) after the process that made it is gone.
	Labels map[string]string
}

// ExecOptions are a command to run in a seat and where its streams go. Nil streams are
// empty input or discarded output.
type ExecOptions struct {
	Argv   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// TTY runs the command on a terminal of Size (Stderr then unused: a terminal has one
	// output); Resize changes its size while it runs.
	TTY    bool
	Size   TermSize
	Resize <-chan TermSize
}

// TermSize is a terminal's size in characters.
type TermSize struct{ Rows, Cols uint16 }

// State is where a seat is in its life.
type State string

const (
	Running State = "running"
	Exited  State = "exited" // stopped, crashed or killed; Start brings it back with its data
	Missing State = "missing"
)

// Status is what a provider knows of a seat.
type Status struct {
	Name   string
	State  State
	Labels map[string]string
	// MemoryBytes is what the seat uses now, 0 when unknown or not running.
	MemoryBytes int64
}

var (
	// ErrExists means a seat of the name exists already.
	ErrExists = errors.New("a seat of that name exists")
	// ErrNotFound means there is no seat of the name.
	ErrNotFound = errors.New("no such seat")
	// ErrNotRunning means the seat exists but does not run.
	ErrNotRunning = errors.New("the seat is not running")
)
