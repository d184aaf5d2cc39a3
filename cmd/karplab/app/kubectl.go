package app

import (
	"os"

	"github.com/urfave/cli/v2"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	componentcli "k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/plugin"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/karplab/karplab/cluster"
)

func kubectlCommand() *cli.Command {
	return &cli.Command{
		Name:            "kubectl",
		Usage:           "run kubectl (built in) against the lab",
		ArgsUsage:       "[kubectl arguments...]",
		SkipFlagParsing: true, // every argument belongs to kubectl
		Description: `Runs kubectl v1.37 compiled into karplab, with KUBECONFIG set to the lab's, so nothing
else needs installing. Examples (from the course):
   karplab kubectl get pods -A --field-selector=status.phase=Pending
   karplab kubectl get nodepools,nodeclaims
   karplab kubectl describe nodepool ziba-general
   karplab kubectl get nodes -L karpenter.sh/nodepool,karpenter.sh/capacity-type,node.kubernetes.io/instance-type`,
		Action: func(c *cli.Context) error {
			home, err := cluster.DefaultHome()
			if err != nil {
				return err
			}
			// An explicit --kubeconfig in the arguments still wins over this.
			os.Setenv("KUBECONFIG", home.Kubeconfig())
			args := append([]string{"kubectl"}, c.Args().Slice()...)
			logs.GlogSetter(kubectlcmd.GetLogVerbosity(args)) //nolint:errcheck
			cmd := kubectlcmd.NewDefaultKubectlCommandWithArgs(kubectlcmd.KubectlOptions{
				PluginHandler: kubectlcmd.NewDefaultPluginHandler(plugin.ValidPluginFilenamePrefixes),
				Arguments:     args,
				ConfigFlags:   genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag().WithDiscoveryBurst(300).WithDiscoveryQPS(50.0),
				IOStreams:     genericiooptions.IOStreams{In: c.App.Reader, Out: c.App.Writer, ErrOut: c.App.ErrWriter},
			})
			cmd.SetArgs(args[1:])
			if err := componentcli.RunNoErrOutput(cmd); err != nil {
				kubectlutil.CheckErr(err) // prints as kubectl does and exits with kubectl's code
			}
			return nil
		},
	}
}
