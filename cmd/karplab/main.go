// Command karplab is an offline lab for Karpenter node provisioning on AWS.
package main

import (
	"os"

	"github.com/karplab/karplab/cmd/karplab/app"
)

func main() {
	os.Exit(app.Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
