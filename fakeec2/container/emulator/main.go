// Command emulator is the lab's AWS account alone, for the container image of package
// container (this module): the emulator of `karplab ec2 serve` without the Kubernetes side,
// so it builds into a small static binary (CGO_ENABLED=0) that runs FROM scratch. It lives in
// the container module, below the karplab commands, because the image is the module's own.
//
//	fakeec2 [-addr 0.0.0.0:4566] [-state DIR] [-boot-delay 2s]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/karplab/karplab/fakeec2"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4566", "listen address (in a container: 0.0.0.0:4566, published on the host's loopback)")
	state := flag.String("state", "", "state directory (empty: keep state in memory)")
	boot := flag.Duration("boot-delay", fakeec2.DefaultBootDelay, "how long instances stay pending (0: none)")
	flag.Parse()
	if flag.NArg() > 0 || *boot < 0 {
		fmt.Fprintf(os.Stderr, "fakeec2: usage: fakeec2 [-addr HOST:PORT] [-state DIR] [-boot-delay DURATION] (got %q, boot delay %s)\n", flag.Args(), *boot)
		os.Exit(2)
	}
	srv, err := fakeec2.New(fakeec2.Options{StateDir: *state, BootDelay: fakeec2.FlagDelay(*boot)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeec2: starting the EC2 emulator:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = srv.ListenAndServe(ctx, *addr, func(a net.Addr) {
		fmt.Fprintf(os.Stderr, "fakeec2: serving EC2 at http://%s; admin API and health at http://%s/_karplab/health\n", a, a)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeec2:", err)
		os.Exit(1)
	}
}
