package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/fakeec2"
	model "github.com/karplab/karplab/fakeec2/ec2"
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

// replayServices are the lab's parts when it starts from a bundle: the control plane with its
// scheduler and controller manager held, the account with the bundle's network, images and
// instances imported, the bundle's objects loaded, then the kubelets, the controllers and
// Karpenter, in that order.
func replayServices(d *daemon, be backend.Backend, endpoint string) ([]*service, error) {
	em, ok := be.(*embedded)
	if !ok {
		return nil, fmt.Errorf("a replay runs on --backend embedded, not %s: its controllers must start after the bundle is loaded", be.Name())
	}
	b, err := replay.Open(d.cfg.Replay, "", replay.DefaultLimits)
	if err != nil {
		return nil, err
	}
	rec := &ReplayRecord{Bundle: d.cfg.Replay, CapturedAt: b.CapturedAt}
	rec.Settings = carryKarpenterSettings(&d.cfg, replay.KarpenterEnv(b))
	return []*service{
		controlPlaneService(d, be),
		ec2Service(d, be, endpoint),
		crdService(d, be),
		metricsService(d, be),
		recorderService(d),
		replayLoadService(d, b, rec),
		kubeletService(d, endpoint),
		replayReleaseService(d, em, rec),
		karpenterService(d, endpoint),
	}, nil
}

// carryKarpenterSettings sets what the bundle's Karpenter ran with on the lab's Karpenter and
// says what it carried; the lab keeps what names its own account (cluster, region, queue).
func carryKarpenterSettings(cfg *DaemonConfig, env map[string]string) []string {
	var said []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range env {
			if !yield(k) {
				return
			}
		}
	}) {
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
func replayLoadService(d *daemon, b *replay.Bundle, rec *ReplayRecord) *service {
	cfg := d.cfg
	return &service{
		name: "replay: the bundle's account and objects",
		start: func(ctx context.Context) (string, error) {
			srv := d.ec2()
			imp, err := replay.AccountImport(b, cfg.Account.ClusterName)
			if err != nil {
				return "", err
			}
			imp, err = withoutExisting(ctx, NewEC2ClientIn(cfg.Account.Region, "http://"+cfg.EC2Addr, LearnerAccessKeyID), imp)
			if err != nil {
				return "", err
			}
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
			if err := writeJSONAtomic(cfg.Home.ReplayRecordFile(), rec); err != nil {
				return "", err
			}
			return fmt.Sprintf("%d instances imported; %s in %s", rec.Instances, createdLine(rec.Created), loaded.Took.Round(time.Millisecond)), nil
		},
	}
}

func createdLine(created map[string]int) string {
	var parts []string
	for _, k := range []string{"NodePool", "EC2NodeClass", "NodeClaim", "Node", "Pod"} {
		parts = append(parts, fmt.Sprintf("%d %s", created[k], k))
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

// withoutExisting leaves out of imp the network and images the account has already, with
// the same IDs: a capture of a lab holds the lab account's own.
func withoutExisting(ctx context.Context, api *ec2.Client, imp fakeec2.Import) (fakeec2.Import, error) {
	idFilter := func(name string, ids []string) []ec2types.Filter {
		return []ec2types.Filter{{Name: aws.String(name), Values: ids}}
	}
	have := map[string]bool{}
	var errs []error
	if ids := idsOf(imp.VPCs, func(v model.VPC) string { return v.ID }); len(ids) > 0 {
		out, err := api.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{Filters: idFilter("vpc-id", ids)})
		errs = append(errs, err)
		for _, v := range outOr(out, func(o *ec2.DescribeVpcsOutput) []ec2types.Vpc { return o.Vpcs }) {
			have[aws.ToString(v.VpcId)] = true
		}
	}
	if ids := idsOf(imp.Subnets, func(v model.Subnet) string { return v.ID }); len(ids) > 0 {
		out, err := api.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: idFilter("subnet-id", ids)})
		errs = append(errs, err)
		for _, v := range outOr(out, func(o *ec2.DescribeSubnetsOutput) []ec2types.Subnet { return o.Subnets }) {
			have[aws.ToString(v.SubnetId)] = true
		}
	}
	if ids := idsOf(imp.SecurityGroups, func(v model.SecurityGroup) string { return v.ID }); len(ids) > 0 {
		out, err := api.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: idFilter("group-id", ids)})
		errs = append(errs, err)
		for _, v := range outOr(out, func(o *ec2.DescribeSecurityGroupsOutput) []ec2types.SecurityGroup { return o.SecurityGroups }) {
			have[aws.ToString(v.GroupId)] = true
		}
	}
	if ids := idsOf(imp.Images, func(v model.Image) string { return v.ID }); len(ids) > 0 {
		out, err := api.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: idFilter("image-id", ids)})
		errs = append(errs, err)
		for _, v := range outOr(out, func(o *ec2.DescribeImagesOutput) []ec2types.Image { return o.Images }) {
			have[aws.ToString(v.ImageId)] = true
		}
	}
	if err := errors.Join(errs...); err != nil {
		return imp, fmt.Errorf("reading the account before the import: %w", err)
	}
	imp.VPCs = slices.DeleteFunc(imp.VPCs, func(v model.VPC) bool { return have[v.ID] })
	imp.Subnets = slices.DeleteFunc(imp.Subnets, func(v model.Subnet) bool { return have[v.ID] })
	imp.SecurityGroups = slices.DeleteFunc(imp.SecurityGroups, func(v model.SecurityGroup) bool { return have[v.ID] })
	imp.Images = slices.DeleteFunc(imp.Images, func(v model.Image) bool { return have[v.ID] })
	return imp, nil
}

func idsOf[T any](records []T, id func(T) string) []string {
	var out []string
	for _, r := range records {
		out = append(out, id(r))
	}
	return out
}

func outOr[O any, T any](out *O, list func(*O) []T) []T {
	if out == nil {
		return nil
	}
	return list(out)
}
