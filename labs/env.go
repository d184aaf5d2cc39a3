package labs

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/cluster"
	"github.com/karplab/karplab/cluster/metrics"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/accesskeys"
	"github.com/karplab/karplab/labs/evidence"
)

// nodeClassGVR is the provider's EC2NodeClass resource, nodePoolsGVR core's NodePool and
// nodeClaimsGVR its NodeClaim, read unstructured.
var (
	nodeClassGVR  = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
	nodePoolsGVR  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClaimsGVR = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
)

// Env is a running lab as the scenarios see it: both control planes, and the files the
// daemon keeps.
type Env struct {
	Home    cluster.Home
	Rest    *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  *restmapper.DeferredDiscoveryRESTMapper
	// EC2 is an aws-sdk-go-v2 client on the emulator, signing as the grader.
	EC2 *ec2.Client
	// Admin reads the emulator's audit trail and billing, and sets faults and policy.
	Admin *fakeec2.AdminClient
	// EC2Endpoint is the emulator's URL.
	EC2Endpoint string
	// Account is the lab's AWS account: region, zones, cluster name.
	Account cluster.Account
	// Now is the clock graders date their reports with.
	Now func() time.Time
	// Timed, when set, hears how long each staging and each grading took (the tests log
	// it, and the CI's test summary tables where the time went).
	Timed func(phase string, took time.Duration)
}

func (e *Env) timed(phase string, since time.Time) {
	if e != nil && e.Timed != nil {
		e.Timed(phase, time.Since(since))
	}
}

// NewEnv connects to the lab running in home. It fails with cluster.ErrNotRunning when there is none.
func NewEnv(ctx context.Context, home cluster.Home) (*Env, error) {
	st, err := cluster.LiveStatus(ctx, home)
	if err != nil {
		return nil, err
	}
	if st.State.Phase != cluster.PhaseReady {
		return nil, fmt.Errorf("the lab is %s, not ready: wait for karplab start to finish", st.State.Phase)
	}
	if st.State.Provider == "kwok" {
		return nil, fmt.Errorf("the lab runs the stock kwok provider, which has no EC2 side to grade; labs need an EC2 provider (karplab stop; karplab start --provider aws)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", home.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("loading the lab's kubeconfig: %w", err)
	}
	return NewEnvFor(home, cfg, st.State.EC2Endpoint)
}

// NewEnvFor builds an Env from its parts (tests run the daemon in-process).
func NewEnvFor(home cluster.Home, cfg *rest.Config, ec2Endpoint string) (*Env, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	acct, err := home.ReadAccount()
	if err != nil {
		return nil, err
	}
	return &Env{
		Home:        home,
		Rest:        cfg,
		Kube:        kube,
		Dynamic:     dyn,
		Mapper:      restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		EC2:         cluster.NewEC2ClientIn(acct.Region, ec2Endpoint, accesskeys.Grader),
		Account:     acct,
		Admin:       fakeec2.NewAdminClient(ec2Endpoint),
		EC2Endpoint: ec2Endpoint,
		Now:         time.Now,
	}, nil
}

// TakeSnapshot reads both control planes as they are now.
func (e *Env) TakeSnapshot(ctx context.Context) (*evidence.Snapshot, error) {
	return evidence.Take(ctx, evidence.Sources{HistoryPath: e.Home.History(), Kube: e.Kube, EC2: e.EC2, Admin: e.Admin, Now: e.Now, Usage: e.usage})
}

// usage reads the metrics-server's records. The metrics API runs on the embedded backend
// only; elsewhere the snapshot has none, and the graders that need usage say so.
func (e *Env) usage(ctx context.Context) (*metrics.Report, error) {
	rep, err := cluster.Usage(ctx, e.Home)
	if err != nil {
		return nil, nil
	}
	return rep, nil
}
