package reexec

const (
	// Daemon is the hidden verb that runs the lab in the foreground: `karplab daemon`.
	Daemon = "daemon"
	// PreflightDoneFlag is the daemon verb's flag that start passes once it has checked the
	// choices and the cluster itself.
	PreflightDoneFlag = "preflight-done"
	// ReplayFlag is the daemon verb's flag naming the bundle directory to start from.
	ReplayFlag = "replay"
	// Internal holds the commands the daemon re-executes itself with; users never type them.
	Internal = "internal"
	// Karpenter is Internal's subcommand that runs Karpenter's controllers.
	Karpenter = "karpenter"
)

// KarpenterArgs is the command line, after the binary, of the Karpenter child with flags.
func KarpenterArgs(flags []string) []string {
	return append([]string{Internal, Karpenter}, flags...)
}
