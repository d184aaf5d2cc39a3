package container

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/karplab/karplab/cluster/seats"
)

// runOnTerminal runs the engine's `exec -it` on a pseudo-terminal made here, of opts.Size,
// as a person's terminal would: the engine's client reads the size from its terminal and
// follows its changes (SIGWINCH), so a resize is a change of this terminal's size.
func runOnTerminal(cmd *exec.Cmd, opts seats.ExecOptions) error {
	if f, ok := opts.Stdin.(*os.File); ok && IsTerminal(f) {
		// A person's own terminal: the engine's client makes it raw and follows its size.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = f, opts.Stdout, opts.Stderr
		return cmd.Run()
	}
	ptmx, tty, err := openPTY()
	if err != nil {
		return err
	}
	defer ptmx.Close()
	if err := setSize(ptmx, opts.Size); err != nil {
		tty.Close()
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		tty.Close()
		return err
	}
	tty.Close() // the child holds it; the master reads EOF (EIO) once the child is gone
	done := make(chan struct{})
	defer close(done)
	if opts.Resize != nil {
		go func() {
			for {
				select {
				case sz, ok := <-opts.Resize:
					if !ok {
						return
					}
					setSize(ptmx, sz) //nolint:errcheck // a failed resize leaves the old size
				case <-done:
					return
				}
			}
		}()
	}
	if opts.Stdin != nil {
		go io.Copy(ptmx, opts.Stdin) //nolint:errcheck // ends with the terminal
	}
	out := opts.Stdout
	if out == nil {
		out = io.Discard
	}
	copied := make(chan struct{})
	go func() { io.Copy(out, ptmx); close(copied) }() //nolint:errcheck // EIO once the child is gone
	err = cmd.Wait()
	<-copied
	return err
}

// openPTY opens a new pseudo-terminal pair: its master and its terminal.
func openPTY() (*os.File, *os.File, error) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening a terminal: %w", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("unlocking the terminal: %w", err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("naming the terminal: %w", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptmx.Close()
		return nil, nil, fmt.Errorf("opening the terminal: %w", err)
	}
	return ptmx, tty, nil
}

func setSize(f *os.File, sz seats.TermSize) error {
	if sz.Rows == 0 || sz.Cols == 0 {
		sz = seats.TermSize{Rows: 24, Cols: 80}
	}
	return unix.IoctlSetWinsize(int(f.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: sz.Rows, Col: sz.Cols})
}

// IsTerminal says whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// sizedArgv sets the terminal's size before argv runs: the engine's client sends it only
// once the command has started (Docker's API 1.41 here takes no size at exec's creation), so
// a command that asks at once saw 0 0 about one time in two.
func sizedArgv(opts seats.ExecOptions) []string {
	sz := opts.Size
	if f, ok := opts.Stdin.(*os.File); ok && IsTerminal(f) {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil {
			sz = seats.TermSize{Rows: ws.Row, Cols: ws.Col}
		}
	}
	if sz.Rows == 0 || sz.Cols == 0 {
		sz = seats.TermSize{Rows: 24, Cols: 80}
	}
	return append([]string{"sh", "-c", `stty rows "$1" cols "$2" 2>/dev/null; shift 2; exec "$@"`, "karplab-tty",
		strconv.Itoa(int(sz.Rows)), strconv.Itoa(int(sz.Cols))}, opts.Argv...)
}
