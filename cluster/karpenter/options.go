package karpenter

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"
)

// Providers Run can start.
const (
	// ProviderKWOK is Karpenter's stock kwok provider (KWOKNodeClass, Nodes without EC2), for
	// side-by-side comparison.
	ProviderKWOK = "kwok"
	// ProviderAWS is the real karpenter-provider-aws v1.15.0 (its operator, cloud provider and
	// controllers), talking to the emulator's EC2, IAM, SSM, SQS, EKS, Pricing and STS.
	ProviderAWS = "aws"
)

// Options configure one Karpenter process. Args and ParseArgs turn them into the command
// line of `karplab internal karpenter` and back, so the daemon's Supervisor and the child
// agree on them.
type Options struct {
	// Provider is ProviderAWS (default) or ProviderKWOK.
	Provider string
	// ClusterName tags resources kubernetes.io/cluster/<name>=owned; default "karplab".
	ClusterName string
	// Kubeconfig is the admin kubeconfig of the lab's API server; empty means $KUBECONFIG.
	Kubeconfig string
	// ClusterEndpoint is the API server URL the provider writes into node user data
	// (CLUSTER_ENDPOINT); empty means the kubeconfig's server.
	ClusterEndpoint string
	// InterruptionQueue is the SQS queue the real provider reads EC2's events from
	// (ProviderAWS only; empty disables interruption handling, as in the provider).
	InterruptionQueue string
	// BatchIdleDuration and BatchMaxDuration are Karpenter's provisioning batch window
	// (defaults 1s and 10s, Karpenter's own).
	BatchIdleDuration time.Duration
	BatchMaxDuration  time.Duration
	// MetricsPort and HealthProbePort: 0 (default) picks a free port, so two labs or a
	// restarted child never collide.
	MetricsPort     int
	HealthProbePort int
	// LeaderElection takes a Lease in LeaderElectionNamespace before reconciling. Off by
	// default: the Supervisor runs exactly one child and kills it with its parent.
	LeaderElection          bool
	LeaderElectionNamespace string
	// LogLevel is Karpenter's: debug, info (default) or error.
	LogLevel string
	// FeatureGates is passed to Karpenter's --feature-gates as is (e.g. "SpotToSpotConsolidation=true").
	FeatureGates string
	// LabClock is the lab's AWS account endpoint whose clock Karpenter's controllers follow
	// (its lead over the wall clock, read once at start: a skip restarts Karpenter); empty
	// means the wall clock.
	LabClock string
	// InstallRecord is the file (installs package) where the process notes every object it
	// creates; empty records nothing.
	InstallRecord string

	// Logger receives Run's own messages (Karpenter logs to stdout itself); not a flag.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Provider == "" {
		o.Provider = ProviderAWS
	}
	if o.ClusterName == "" {
		o.ClusterName = "karplab"
	}
	if o.BatchIdleDuration == 0 {
		o.BatchIdleDuration = time.Second
	}
	if o.BatchMaxDuration == 0 {
		o.BatchMaxDuration = 10 * time.Second
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = "kube-system"
	}
	return o
}

func (o Options) validate() error {
	switch o.Provider {
	case ProviderAWS, ProviderKWOK:
	default:
		return fmt.Errorf("unknown provider %q: want %q or %q", o.Provider, ProviderAWS, ProviderKWOK)
	}
	switch o.LogLevel {
	case "debug", "info", "error":
	default:
		return fmt.Errorf("unknown log level %q: want debug, info or error", o.LogLevel)
	}
	if o.BatchIdleDuration < 0 || o.BatchMaxDuration < o.BatchIdleDuration {
		return fmt.Errorf("batch window: idle %s, max %s: want 0 <= idle <= max", o.BatchIdleDuration, o.BatchMaxDuration)
	}
	return nil
}

func (o *Options) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("karpenter", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.Provider, "provider", o.Provider, "aws or kwok")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "cluster name")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig path")
	fs.StringVar(&o.ClusterEndpoint, "cluster-endpoint", o.ClusterEndpoint, "API server URL for nodes")
	fs.StringVar(&o.InterruptionQueue, "interruption-queue", o.InterruptionQueue, "SQS interruption queue name (aws)")
	fs.DurationVar(&o.BatchIdleDuration, "batch-idle-duration", o.BatchIdleDuration, "batch idle duration")
	fs.DurationVar(&o.BatchMaxDuration, "batch-max-duration", o.BatchMaxDuration, "batch max duration")
	fs.IntVar(&o.MetricsPort, "metrics-port", o.MetricsPort, "metrics port (0: any)")
	fs.IntVar(&o.HealthProbePort, "health-probe-port", o.HealthProbePort, "health probe port (0: any)")
	fs.BoolVar(&o.LeaderElection, "leader-election", o.LeaderElection, "use leader election")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "lease namespace")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "debug, info or error")
	fs.StringVar(&o.FeatureGates, "feature-gates", o.FeatureGates, "Karpenter feature gates")
	fs.StringVar(&o.LabClock, "lab-clock", o.LabClock, "emulator URL whose lab time the controllers follow")
	fs.StringVar(&o.InstallRecord, "install-record", o.InstallRecord, "file where every object the process creates is noted (for karplab stop --uninstall)")
	return fs
}

// ParseArgs reads the flags Args writes.
func ParseArgs(args []string) (Options, error) {
	var o Options
	fs := o.flagSet()
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("parsing karpenter flags: %w", err)
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("parsing karpenter flags: unexpected argument %q", fs.Arg(0))
	}
	return o, nil
}

// Args renders the options as flags ParseArgs reads back; zero values are left out.
func (o Options) Args() []string {
	var args []string
	add := func(name, value string) { args = append(args, "--"+name+"="+value) }
	str := func(name, value string) {
		if value != "" {
			add(name, value)
		}
	}
	dur := func(name string, d time.Duration) {
		if d != 0 {
			add(name, d.String())
		}
	}
	num := func(name string, n int) {
		if n != 0 {
			add(name, strconv.Itoa(n))
		}
	}
	str("provider", o.Provider)
	str("cluster-name", o.ClusterName)
	str("kubeconfig", o.Kubeconfig)
	str("cluster-endpoint", o.ClusterEndpoint)
	str("interruption-queue", o.InterruptionQueue)
	dur("batch-idle-duration", o.BatchIdleDuration)
	dur("batch-max-duration", o.BatchMaxDuration)
	num("metrics-port", o.MetricsPort)
	num("health-probe-port", o.HealthProbePort)
	if o.LeaderElection {
		add("leader-election", "true")
	}
	str("leader-election-namespace", o.LeaderElectionNamespace)
	str("log-level", o.LogLevel)
	str("feature-gates", o.FeatureGates)
	str("lab-clock", o.LabClock)
	str("install-record", o.InstallRecord)
	return args
}

// karpenterArgs is the command line Karpenter's operator parses from os.Args[1:]. The
// real provider's options are registered in the same flag set whenever it is linked in
// (this binary), and it requires --cluster-name whichever provider runs.
func (o Options) karpenterArgs() []string {
	args := []string{
		"--cluster-name=" + o.ClusterName,
		"--metrics-port=" + strconv.Itoa(o.MetricsPort),
		"--health-probe-port=" + strconv.Itoa(o.HealthProbePort),
		"--batch-idle-duration=" + o.BatchIdleDuration.String(),
		"--batch-max-duration=" + o.BatchMaxDuration.String(),
		"--log-level=" + o.LogLevel,
		"--disable-leader-election=" + strconv.FormatBool(!o.LeaderElection),
		"--leader-election-namespace=" + o.LeaderElectionNamespace,
	}
	if o.FeatureGates != "" {
		args = append(args, "--feature-gates="+o.FeatureGates)
	}
	if o.Provider == ProviderAWS {
		// As the provider's Helm chart sets them (CLUSTER_ENDPOINT, INTERRUPTION_QUEUE).
		if o.ClusterEndpoint != "" {
			args = append(args, "--cluster-endpoint="+o.ClusterEndpoint)
		}
		if o.InterruptionQueue != "" {
			args = append(args, "--interruption-queue="+o.InterruptionQueue)
		}
	}
	return args
}
