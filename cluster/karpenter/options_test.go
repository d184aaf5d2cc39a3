package karpenter

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestArgsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{name: "zero", opts: Options{}},
		{name: "everything", opts: Options{
			Provider: ProviderKWOK, ClusterName: "lab2", Kubeconfig: "/tmp/kc", ClusterEndpoint: "https://127.0.0.1:6443",
			BatchIdleDuration: 500 * time.Millisecond, BatchMaxDuration: 3 * time.Second,
			MetricsPort: 18080, HealthProbePort: 18081, LeaderElection: true, LeaderElectionNamespace: "karpenter",
			LogLevel: "debug", FeatureGates: "SpotToSpotConsolidation=true", LabClock: "http://127.0.0.1:4566",
		}},
		{name: "aws", opts: Options{Provider: ProviderAWS, ClusterName: "karplab", InterruptionQueue: "karplab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArgs(tt.opts.Args())
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", tt.opts.Args(), err)
			}
			if diff := cmp.Diff(tt.opts, got, cmpopts.IgnoreUnexported(Options{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "defaults", opts: Options{}},
		{name: "unknown provider", opts: Options{Provider: "gce"}, wantErr: `unknown provider "gce"`},
		{name: "unknown log level", opts: Options{LogLevel: "trace"}, wantErr: `unknown log level "trace"`},
		{name: "batch window inverted", opts: Options{BatchIdleDuration: 5 * time.Second, BatchMaxDuration: time.Second}, wantErr: "batch window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.withDefaults().validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestKarpenterArgs(t *testing.T) {
	got := Options{}.withDefaults().karpenterArgs()
	want := []string{
		"--cluster-name=karplab", "--metrics-port=0", "--health-probe-port=0", "--batch-idle-duration=1s", "--batch-max-duration=10s",
		"--log-level=info", "--disable-leader-election=true", "--leader-election-namespace=kube-system",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("karpenter flags (-want +got):\n%s", diff)
	}
}

// TestKarpenterArgsAWS: the real provider gets its settings as its Helm chart passes them.
func TestKarpenterArgsAWS(t *testing.T) {
	got := Options{Provider: ProviderAWS, ClusterEndpoint: "https://127.0.0.1:6443", InterruptionQueue: "karplab"}.withDefaults().karpenterArgs()
	want := []string{
		"--cluster-name=karplab", "--metrics-port=0", "--health-probe-port=0", "--batch-idle-duration=1s", "--batch-max-duration=10s",
		"--log-level=info", "--disable-leader-election=true", "--leader-election-namespace=kube-system",
		"--cluster-endpoint=https://127.0.0.1:6443", "--interruption-queue=karplab",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("karpenter flags (-want +got):\n%s", diff)
	}
}

func TestOnLoopback(t *testing.T) {
	tests := []struct{ name, addr, want string }{
		{name: "all interfaces", addr: ":8080", want: "127.0.0.1:8080"},
		{name: "any port", addr: ":0", want: "127.0.0.1:0"},
		{name: "unspecified IPv4", addr: "0.0.0.0:8081", want: "127.0.0.1:8081"},
		{name: "unspecified IPv6", addr: "[::]:8081", want: "127.0.0.1:8081"},
		{name: "disabled", addr: "0", want: "0"},
		{name: "unset", addr: "", want: ""},
		{name: "named host kept", addr: "127.0.0.2:9000", want: "127.0.0.2:9000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onLoopback(tt.addr); got != tt.want {
				t.Errorf("onLoopback(%q) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}
