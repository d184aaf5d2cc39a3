package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/labs/replay"
)

// ReplayRecordFile is the replay's record in the home: what it loaded, for its report.
func (h Home) ReplayRecordFile() string { return h.path("replay.json") }

// ReplayRecord is what a replay brought into the lab and when it let the controllers go.
type ReplayRecord struct {
	Bundle     string    `json:"bundle"`
	CapturedAt time.Time `json:"capturedAt"`
	// ReleasedAt is when the kubelets, the controllers and Karpenter were let go (wall clock).
	ReleasedAt time.Time      `json:"releasedAt"`
	Created    map[string]int `json:"created"`
	Instances  int            `json:"instances"`
	LeftOut    []string       `json:"leftOut,omitempty"`
	// Pending are the pods production had not scheduled, as namespace/name.
	Pending []string `json:"pending,omitempty"`
	// NodeClaims and Nodes are the replayed ones' names.
	NodeClaims []string `json:"nodeClaims,omitempty"`
	Nodes      []string `json:"nodes,omitempty"`
	// Settings are Karpenter's settings carried over from the bundle.
	Settings []string      `json:"settings,omitempty"`
	LoadTook time.Duration `json:"loadTook"`
}

// ReadReplayRecord reads the home's replay record (os.ErrNotExist when the lab is no replay).
func (h Home) ReadReplayRecord() (*ReplayRecord, error) {
	b, err := os.ReadFile(h.ReplayRecordFile())
	if err != nil {
		return nil, err
	}
	var r ReplayRecord
	return &r, json.Unmarshal(b, &r)
}

// replayServices are what a start from a bundle adds to the lab's parts (newServices puts
// them in order): the load, which imports the bundle's network, images and instances into
// the account and creates its objects while the backend holds the scheduler and controller
// manager; and the release, which lets them go once the kubelets have adopted the nodes.
func replayServices(d *daemon, be backend.Backend) (load, release *service, err error) {
	em, ok := be.(*embedded)
	if !ok {
		return nil, nil, fmt.Errorf("a replay runs on --backend embedded, not %s: its controllers must start after the bundle is loaded", be.Name())
	}
	b, imp, err := openReplay(d.cfg)
	if err != nil {
		return nil, nil, err
	}
	rec := &ReplayRecord{Bundle: d.cfg.Replay, CapturedAt: b.CapturedAt}
	rec.Settings = carryKarpenterSettings(&d.cfg, replay.KarpenterEnv(b))
	return replayLoadService(d, b, imp, rec), replayReleaseService(d, em, rec), nil
}

// openReplay opens the daemon's bundle and refuses it as karplab replay's validation
// would: the daemon trusts no caller to have checked it (a start may come from a script).
// It returns the account import the check derived, which the load brings in.
func openReplay(cfg DaemonConfig) (*replay.Bundle, fakeec2.Import, error) {
	b, err := replay.Open(cfg.Replay, "", replay.DefaultLimits)
	if err != nil {
		return nil, fakeec2.Import{}, err
	}
	given := replay.Given{Region: cfg.Account.Region, Zones: cfg.Account.Zones, ClusterName: cfg.Account.ClusterName}
	rep, _, imp := replay.Check(b, replay.LabCatalog{}, given)
	if len(rep.Gaps) > 0 {
		return nil, imp, fmt.Errorf("the lab cannot replay %s (%d problems): %s", cfg.Replay, len(rep.Gaps), strings.Join(rep.Gaps, "; "))
	}
	return b, imp, nil
}

// carryKarpenterSettings sets what the bundle's Karpenter ran with on the lab's Karpenter and
// says what it carried; the lab keeps what names its own account (cluster, region, queue).
func carryKarpenterSettings(cfg *DaemonConfig, env map[string]string) []string {
	var said []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v := env[k]
		switch k {
		case "CLUSTER_NAME", "AWS_REGION", "INTERRUPTION_QUEUE", "EKS_CONTROL_PLANE", "CPU_REQUESTS":
			continue
		case "LOG_LEVEL": // what production logged at debug the replay must be able to show
			if v != "debug" && v != "info" && v != "error" {
				continue
			}
			cfg.Karpenter.LogLevel = v
		case "FEATURE_GATES":
			cfg.Karpenter.FeatureGates = v
		case "BATCH_IDLE_DURATION", "BATCH_MAX_DURATION":
			dur, err := time.ParseDuration(v)
			if err != nil {
				continue
			}
			if k == "BATCH_IDLE_DURATION" {
				cfg.Karpenter.BatchIdleDuration = dur
			} else {
				cfg.Karpenter.BatchMaxDuration = dur
			}
		default:
			cfg.KarpenterEnv = append(cfg.KarpenterEnv, k+"="+v)
		}
		said = append(said, k+"="+v)
	}
	return said
}

// replayLoadService imports the bundle's account and loads its objects, while nothing acts
// on them yet.
func replayLoadService(d *daemon, b *replay.Bundle, imp fakeec2.Import, rec *ReplayRecord) *service {
	cfg := d.cfg
	return &service{
		name: "replay: the bundle's account and objects",
		start: func(ctx context.Context) (string, error) {
			srv := d.ec2()
			// A capture of a lab holds the lab account's own network and images.
			imp = imp.Without(srv.Has)
			if err := srv.Import(imp); err != nil {
				return "", fmt.Errorf("importing the bundle's account: %w", err)
			}
			loaded, err := replay.Load(ctx, d.restConfig(), b, cfg.Status)
			if err != nil {
				return "", fmt.Errorf("loading the bundle (the lab is stopped and its data removed; fix the object named and replay again): %w", err)
			}
			rec.Created, rec.LeftOut, rec.Pending, rec.LoadTook = loaded.Created, loaded.LeftOut, loaded.Pending, loaded.Took
			rec.Instances = len(imp.Instances)
			for _, o := range b.Objects {
				switch o.GetKind() {
				case "NodeClaim":
					rec.NodeClaims = append(rec.NodeClaims, o.GetName())
				case "Node":
					rec.Nodes = append(rec.Nodes, o.GetName())
				}
			}
			sort.Strings(rec.NodeClaims)
			b = nil // loaded: the daemon need not hold the bundle's objects (28 MB at 5,000 pods)
			if err := writeJSONAtomic(cfg.Home.ReplayRecordFile(), rec); err != nil {
				return "", err
			}
			return fmt.Sprintf("%d instances imported; %s in %s", rec.Instances, rec.CreatedLine(), loaded.Took.Round(time.Millisecond)), nil
		},
	}
}

// CreatedLine says how many of each kind that matters the replay created.
func (r *ReplayRecord) CreatedLine() string {
	var parts []string
	for _, k := range []string{"NodePool", "EC2NodeClass", "NodeClaim", "Node", "Pod", "Deployment", "DaemonSet", "StatefulSet", "PodDisruptionBudget"} {
		if r.Created[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", r.Created[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// replayReleaseService waits for the kubelets to adopt the replayed nodes, then starts the
// controller manager and the scheduler; Karpenter follows as the next service.
func replayReleaseService(d *daemon, em *embedded, rec *ReplayRecord) *service {
	cfg := d.cfg
	return &service{
		name: "replay: kubelets adopted the nodes; controller manager and scheduler released",
		start: func(ctx context.Context) (string, error) {
			want := rec.Created["Node"]
			deadline := time.Now().Add(2 * time.Minute)
			adopted := 0
			for {
				adopted = 0
				for _, n := range d.kubelet().Nodes() {
					if n.Adopted {
						adopted++
					}
				}
				if adopted >= want || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if err := em.release(ctx); err != nil {
				return "", err
			}
			rec.ReleasedAt = time.Now().UTC()
			if err := writeJSONAtomic(cfg.Home.ReplayRecordFile(), rec); err != nil {
				return "", err
			}
			detail := fmt.Sprintf("%d of %d nodes adopted", adopted, want)
			if adopted < want {
				detail += " (the rest had no running instance the kubelet could see in 2m)"
			}
			return detail, nil
		},
	}
}
