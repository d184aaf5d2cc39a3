package app

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/karplab/karplab/cluster"
)

func envCommand() *cli.Command {
	return &cli.Command{
		Name:  "env",
		Usage: "print shell exports that point kubectl and the aws CLI at the lab",
		Description: `Use it as: eval "$(karplab env)"
It sets KUBECONFIG, AWS_ENDPOINT_URL, AWS_REGION and dummy AWS credentials, so the course's
kubectl and aws commands work verbatim against the lab. It also puts $KARPLAB_HOME/bin first
on PATH: its aws wrapper passes the endpoint as --endpoint-url to your aws CLI, because aws
CLI v2 before 2.13 (Debian 12's) and v1 before 1.29 ignore AWS_ENDPOINT_URL; and karplab
itself is there, so the labs' scripts (karplab ec2 billing, karplab time skip) run from any
folder.`,
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			endpoint := "http://" + cluster.DefaultEC2Addr
			if st, err := home.ReadState(); err == nil && st.EC2Endpoint != "" {
				endpoint = st.EC2Endpoint
			}
			exe, _ := os.Executable()
			if err := home.WriteBin(exe, false); err != nil {
				return err
			}
			fmt.Fprint(c.App.Writer, cluster.ShellEnv(home, endpoint))
			return nil
		},
	}
}
