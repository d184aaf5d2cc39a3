package app

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/exercises"
	"github.com/karplab/karplab/labs"
	"github.com/karplab/karplab/solutions"
)

func labCommand() *cli.Command {
	return &cli.Command{
		Name:  "lab",
		Usage: "list the scenarios, stage one, or copy out its exercise",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the labs in course order",
				Action: func(c *cli.Context) error {
					tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
					fmt.Fprintln(tw, "LAB\tWHAT YOU PROVE")
					for _, l := range labs.All() {
						fmt.Fprintf(tw, "%s\t%s\n", l.Name, l.Title)
					}
					if err := tw.Flush(); err != nil {
						return err
					}
					// Println: the last line ends in a newline, so a shell prompt or the next
					// command's output starts on a line of its own (TestLabList).
					_, err := fmt.Fprintln(c.App.Writer, "\nkarplab lab get NAME copies an exercise here; karplab lab run NAME stages it; karplab check NAME grades it.")
					return err
				},
			},
			{
				Name:      "run",
				Usage:     "stage a lab on the running lab: its workload and faults, with progress",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "solution", Usage: "also apply the reference solution and wait for the outcome (to watch the scenario end to end)"},
				},
				Action: func(c *cli.Context) error {
					l, err := labArg(c)
					if err != nil {
						return err
					}
					env, err := labEnv(c)
					if err != nil {
						return err
					}
					return l.Run(c.Context, env, c.App.ErrWriter, labs.StageOptions{Solution: c.Bool("solution")})
				},
			},
			{
				Name:      "get",
				Usage:     "copy a lab's exercise (task README and manifests to complete) into DIR (default ./NAME)",
				ArgsUsage: "NAME [DIR]",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "solution", Usage: "copy the reference solution instead (default DIR ./NAME-solution)"},
				},
				Action: func(c *cli.Context) error {
					l, err := labArg(c)
					if err != nil {
						return err
					}
					fsys, dir := fs.FS(exercises.FS), l.Name
					if c.Bool("solution") {
						fsys, dir = solutions.FS, l.Name+"-solution"
					}
					if d := c.Args().Get(1); d != "" {
						dir = d
					}
					files, err := copyLabFiles(fsys, l.Name, dir)
					if err != nil {
						return &exitError{code: ExitError, err: err}
					}
					fmt.Fprintf(c.App.ErrWriter, "Wrote %s to %s/\n", strings.Join(files, ", "), dir)
					if !c.Bool("solution") {
						fmt.Fprintf(c.App.ErrWriter, "Read %s first.\n", filepath.Join(dir, "README.md"))
					}
					return nil
				},
			},
		},
	}
}

func labArg(c *cli.Context) (*labs.Lab, error) {
	name := c.Args().First()
	if name == "" {
		return nil, &exitError{code: ExitError, err: fmt.Errorf("name a lab (karplab lab list shows them)")}
	}
	l, err := labs.Get(name)
	if err != nil {
		return nil, &exitError{code: ExitError, err: err}
	}
	return l, nil
}

func labEnv(c *cli.Context) (*labs.Env, error) {
	home, err := cluster.DefaultHome()
	if err != nil {
		return nil, err
	}
	env, err := labs.NewEnv(c.Context, home)
	if err != nil {
		return nil, &exitError{code: ExitError, err: err}
	}
	return env, nil
}

// copyLabFiles writes NAME/* of fsys (exercises or solutions) to dir, refusing to overwrite
// the learner's work.
func copyLabFiles(fsys fs.FS, name, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("lab %s has no files here: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		target := filepath.Join(dir, e.Name())
		if _, err := os.Stat(target); err == nil {
			return nil, fmt.Errorf("%s exists; not overwriting your work (choose another DIR)", target)
		}
	}
	for _, e := range entries {
		b, err := fs.ReadFile(fsys, name+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, e.Name())
	}
	return files, nil
}
