package app

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/kind/engine"
	"github.com/karplab/karplab/cluster/rootfs"
	"github.com/karplab/karplab/cluster/seats"
	"github.com/karplab/karplab/cluster/seats/container"
	"github.com/karplab/karplab/cluster/seats/seatimage"
	"github.com/karplab/karplab/labs/workshop"
)

func workshopCommand() *cli.Command {
	return &cli.Command{
		Name:  "workshop",
		Usage: "run a room of learners: one lab per seat, each in a container of its own",
		Description: `A workshop is N seats on this host, one learner each. A seat is a container (Docker where
it runs one, else podman) with no network, no privileges and a memory cap, running its own
karplab: its own control plane, Karpenter and AWS account, so no learner sees another's.

   karplab workshop image                          build the seat image (up does it too)
   karplab workshop up --seats 12 --labs happy-path,denied-path --learners ana,ben
   karplab workshop status                         seat, engine, state, learner, lab, last check
   karplab workshop exec 3 -- kubectl get nodes    a command in seat 3's shell
   karplab workshop grades --csv > grades.csv      every seat's karplab check, now
   karplab workshop down                           every seat and its data removed

The room's state lives in $KARPLAB_HOME/workshop: up after a crash (or after a seat was
killed) finds its seats, starts those that stopped with their data and makes those that
are missing. Progress goes to stderr, reports to stdout; exit 0, 1 (a grade failed) or 2
(usage or environment: refused, and nothing made). The learners' pages and the
instructor's board are not there yet.`,
		Subcommands: []*cli.Command{
			workshopImageCommand(), workshopUpCommand(), workshopStatusCommand(),
			workshopExecCommand(), workshopGradesCommand(), workshopDownCommand(),
		},
	}
}

func workshopDir(home cluster.Home) string { return filepath.Join(string(home), "workshop") }

// workshopHome is the lab home, made if need be.
func workshopHome() (cluster.Home, error) {
	home, err := cluster.DefaultHome()
	if err != nil {
		return "", err
	}
	return home, home.Ensure()
}

// chooseProvider is the provider of the room's engine, or the first engine that runs a seat.
func chooseProvider(c *cli.Context, home cluster.Home, room *workshop.Room) (*container.Provider, error) {
	conf := filepath.Join(string(home), "containers.conf")
	if room != nil && room.Engine != "" {
		e := &engine.Engine{Name: room.Engine}
		if _, err := os.Stat(conf); err == nil && e.Name == "podman" && os.Getenv("CONTAINERS_CONF") == "" {
			e.Env = []string{"CONTAINERS_CONF=" + conf}
		}
		return container.New(e), nil
	}
	p, err := container.Choose(c.Context, engine.Options{ContainersConf: conf})
	if err != nil {
		return nil, err
	}
	for _, n := range p.Engine().Notes {
		fmt.Fprintln(c.App.ErrWriter, n)
	}
	return p, nil
}

// roomProvider loads the room and its engine's provider.
func roomProvider(c *cli.Context) (cluster.Home, *workshop.Room, *container.Provider, error) {
	home, err := workshopHome()
	if err != nil {
		return "", nil, nil, err
	}
	room, err := workshop.Load(workshopDir(home))
	if err != nil {
		return "", nil, nil, err
	}
	p, err := chooseProvider(c, home, room)
	return home, room, p, err
}

func ensureSeatImage(ctx context.Context, c *cli.Context, e *engine.Engine) (string, error) {
	return seatimage.Ensure(ctx, seatimage.Options{Engine: e, Status: c.App.ErrWriter, Mirror: c.String("mirror")})
}

func workshopImageCommand() *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "build the seat image offline (what up does when it is missing); prints its name",
		Description: `Builds the seat's image from Debian's packages (debootstrap: bash, vim-tiny, nano, less,
tini, ca-certificates and Debian's aws CLI v2), a learner's account whose shells point at
the seat's lab, this karplab binary and every lab's exercise in the learner's home. Each
layer is tagged by a hash of its inputs: a second build is a no-op, and a new binary
rebuilds the top layer only. Needs root and debootstrap for the Debian layer.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "mirror", Value: rootfs.DebianMirror, Usage: "the Debian mirror debootstrap reads"}},
		Action: func(c *cli.Context) error {
			home, err := workshopHome()
			if err != nil {
				return err
			}
			p, err := chooseProvider(c, home, nil)
			if err != nil {
				return err
			}
			began := time.Now()
			tag, err := ensureSeatImage(c.Context, c, p.Engine())
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "%s has %s (%s)\n", p.Engine().Label(), tag, time.Since(began).Round(time.Millisecond))
			fmt.Fprintln(c.App.Writer, tag)
			return nil
		},
	}
}

func workshopUpCommand() *cli.Command {
	return &cli.Command{
		Name:  "up",
		Usage: "start N seats, each running karplab start, and stage the agenda's first lab",
		Description: `Makes the room (or finds it in $KARPLAB_HOME/workshop), builds the seat image if the engine
lacks it, creates the seats that are missing, starts those that stopped (with their data),
runs karplab start in every seat and, with --labs, stages the first lab where none is.
It refuses in one line, exit 2, before making anything: seats beyond what the host's
memory holds (it says the figure), an unknown lab, no engine that runs a seat.
   karplab workshop up --seats 2 --labs happy-path
   karplab workshop up                      # again, after a crash: restores what is gone`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "seats", Usage: "how many seats (1 to " + strconv.Itoa(workshop.MaxSeats) + "; default the room's own, once it has some)"},
			&cli.StringSliceFlag{Name: "labs", Usage: "the agenda, in order (karplab lab list); the first is staged in every seat"},
			&cli.StringSliceFlag{Name: "learners", Usage: "the learners' names, seat 1 first"},
			&cli.Int64Flag{Name: "memory", Usage: "each new seat's memory cap, MiB (default " + strconv.Itoa(workshop.DefaultMemoryMiB) + ", or the room's own)"},
			&cli.StringFlag{Name: "mirror", Value: rootfs.DebianMirror, Usage: "the Debian mirror a build of the seat image reads"},
		},
		Action: func(c *cli.Context) error {
			home, err := workshopHome()
			if err != nil {
				return err
			}
			dir := workshopDir(home)
			unlock, err := workshop.Lock(dir)
			if err != nil {
				return err
			}
			defer unlock()
			room, err := workshop.Load(dir)
			if err != nil && !errors.Is(err, workshop.ErrNoRoom) {
				return err
			}
			p, err := chooseProvider(c, home, room)
			if err != nil {
				return err
			}
			room, err = workshop.Up(c.Context, p, dir, workshop.UpOptions{
				Seats: c.Int("seats"), Labs: c.StringSlice("labs"), Learners: c.StringSlice("learners"), MemoryMiB: c.Int64("memory"),
				Image:  func(ctx context.Context) (string, error) { return ensureSeatImage(ctx, c, p.Engine()) },
				Status: c.App.ErrWriter,
			})
			if room != nil {
				fmt.Fprintf(c.App.ErrWriter, "\n%d seats up (karplab workshop status; karplab workshop exec N -- CMD)\n", len(room.Seats))
			}
			return err
		},
	}
}

func workshopStatusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "each seat: engine, state, learner, current lab, memory, last check",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the seats as JSON"}},
		Action: func(c *cli.Context) error {
			home, _, p, err := roomProvider(c)
			if err != nil {
				return err
			}
			_, rows, err := workshop.Status(c.Context, p, workshopDir(home))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, rows)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SEAT\tENGINE\tSTATE\tLEARNER\tLAB\tMEMORY\tLAST CHECK")
			for _, r := range rows {
				mem := "-"
				if r.MemoryBytes > 0 {
					mem = fmt.Sprintf("%d MiB", r.MemoryBytes>>20)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seat, r.Engine, r.State, orDash(r.Learner), orDash(r.Lab), mem, gradeText(r.LastCheck))
			}
			return tw.Flush()
		},
	}
}

func workshopExecCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a command in a seat's shell, as the learner's terminal does; its exit code is karplab's",
		ArgsUsage: "SEAT -- CMD [ARGS...]",
		Description: `Runs CMD in seat SEAT as its learner, in a login shell that has done eval "$(karplab env)":
kubectl, aws and karplab reach that seat's lab. Standard input goes to the command; from a
terminal, the command gets one (karplab workshop exec 1 -- bash is the learner's shell).
   karplab workshop exec 1 -- kubectl get nodes
   karplab workshop exec 2 -- aws ec2 describe-instances
   karplab workshop exec 1 -- karplab lab run happy-path --solution
   karplab workshop exec 1 -- bash -c 'kubectl get pods | grep Pending'`,
		SkipFlagParsing: true, // everything after SEAT is the command's
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) < 2 {
				return &exitError{code: ExitError, err: errors.New("usage: karplab workshop exec SEAT -- CMD [ARGS...] (see --help)")}
			}
			if args[0] == "--help" || args[0] == "-h" {
				return cli.ShowSubcommandHelp(c)
			}
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return &exitError{code: ExitError, err: fmt.Errorf("seat %q: a seat is a number (karplab workshop status)", args[0])}
			}
			argv := args[1:]
			if argv[0] == "--" {
				argv = argv[1:]
			}
			if len(argv) == 0 {
				return &exitError{code: ExitError, err: errors.New("no command to run (karplab workshop exec SEAT -- CMD)")}
			}
			home, _, p, err := roomProvider(c)
			if err != nil {
				return err
			}
			opts := seats.ExecOptions{Argv: argv, Stdin: c.App.Reader, Stdout: c.App.Writer, Stderr: c.App.ErrWriter}
			if f, ok := c.App.Reader.(*os.File); ok && container.IsTerminal(f) {
				opts.TTY = true // from a person's terminal, as docker exec -it: bash, vim, top work
			}
			code, err := workshop.Exec(c.Context, p, workshopDir(home), n, opts)
			if err != nil {
				return err
			}
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
}

func workshopGradesCommand() *cli.Command {
	return &cli.Command{
		Name:  "grades",
		Usage: "run karplab check in every running seat (a stopped seat shows its last grade); exit 1 if any fails",
		Description: `Runs karplab check LAB --json in each running seat, LAB being --lab or the lab staged in
the seat, records the grade in the room's state, and prints one row per seat. A seat that
does not run shows its last grade, marked so.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "lab", Usage: "the lab to grade in every seat (default each seat's current lab)"},
			&cli.BoolFlag{Name: "csv", Usage: "print CSV"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			home, _, p, err := roomProvider(c)
			if err != nil {
				return err
			}
			unlock, err := workshop.Lock(workshopDir(home))
			if err != nil {
				return err
			}
			rows, err := workshop.Grades(c.Context, p, workshopDir(home), c.String("lab"))
			unlock()
			if err != nil {
				return err
			}
			switch {
			case c.Bool("json"):
				err = writeJSON(c.App.Writer, rows)
			case c.Bool("csv"):
				err = writeGradesCSV(c.App.Writer, rows)
			default:
				err = writeGradesText(c.App.Writer, rows)
			}
			if err != nil {
				return err
			}
			for _, r := range rows {
				if r.Grade == nil || !r.Grade.Passed {
					return failed()
				}
			}
			return nil
		},
	}
}

func workshopDownCommand() *cli.Command {
	return &cli.Command{
		Name:  "down",
		Usage: "remove every seat and its data, and the room's state",
		Action: func(c *cli.Context) error {
			home, _, p, err := roomProvider(c)
			if err != nil {
				return err
			}
			unlock, err := workshop.Lock(workshopDir(home))
			if err != nil {
				return err
			}
			defer unlock()
			n, err := workshop.Down(c.Context, p, workshopDir(home))
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "Removed %d seats and the workshop's state\n", n)
			return nil
		},
	}
}

func gradeText(g *workshop.Grade) string {
	switch {
	case g == nil:
		return "-"
	case g.Error != "":
		return "error: " + g.Error
	case g.Passed:
		return fmt.Sprintf("PASS %d/%d %s", g.Checks, g.Checks, g.Lab)
	}
	return fmt.Sprintf("FAIL %d/%d %s (%s)", g.Checks-len(g.Failed), g.Checks, g.Lab, strings.Join(g.Failed, ", "))
}

func writeGradesText(w io.Writer, rows []workshop.GradeRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEAT\tLEARNER\tSTATE\tGRADE\tCHECKED")
	for _, r := range rows {
		when := "-"
		if r.Grade != nil {
			when = r.Grade.At.Local().Format("15:04:05")
			if !r.Fresh {
				when += " (last; the seat is " + string(r.State) + ")"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Seat, orDash(r.Learner), r.State, gradeText(r.Grade), when)
	}
	return tw.Flush()
}

func writeGradesCSV(w io.Writer, rows []workshop.GradeRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"seat", "learner", "state", "lab", "passed", "checks", "failed", "checked_at", "fresh", "error"}) //nolint:errcheck // Flush reports it
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.Seat), r.Learner, string(r.State), "", "", "", "", "", strconv.FormatBool(r.Fresh), ""}
		if g := r.Grade; g != nil {
			rec[3], rec[4], rec[5], rec[6], rec[7], rec[9] = g.Lab, strconv.FormatBool(g.Passed), strconv.Itoa(g.Checks), strings.Join(g.Failed, " "), g.At.Format(time.RFC3339), g.Error
		}
		cw.Write(rec) //nolint:errcheck // Flush reports it
	}
	cw.Flush()
	return cw.Error()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
