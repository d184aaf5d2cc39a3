package app

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show each lab component, its address and health",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"}},
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			st, err := cluster.LiveStatus(c.Context, home)
			if err != nil {
				return &exitError{code: ExitError, err: err}
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "karplab %s (pid %d, backend %s, provider %s, up since %s)\n",
				st.State.Phase, st.State.PID, st.State.Backend, st.State.Provider, st.State.StartedAt.Local().Format("15:04:05"))
			if st.State.Error != "" {
				fmt.Fprintf(w, "error: %s\n", st.State.Error)
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "COMPONENT\tHEALTHY\tADDRESS\tDETAIL")
			unhealthy := 0
			for _, comp := range st.Components {
				healthy := "yes"
				if !comp.Healthy {
					healthy = "NO"
					unhealthy++
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", comp.Name, healthy, comp.Address, comp.Detail)
			}
			tw.Flush()
			fmt.Fprintf(w, "kubeconfig: %s\n", st.State.Kubeconfig)
			if unhealthy > 0 {
				return &exitError{code: ExitFailed}
			}
			return nil
		},
	}
}
