package evidence

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/karplab/karplab/cluster/metrics"
	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/authz"
	"github.com/karplab/karplab/fakeec2/billing"
	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/trail"
)

// Snapshot is everything the graders read, taken at one time from both control planes: the
// Kubernetes history the daemon recorded, and the EC2 account as the API, the audit trail
// and the billing ledger show it. Correlate joins it; it is plain data, so a real run's
// snapshot can be kept as a test fixture.
type Snapshot struct {
	// TakenAt and every time below are lab time (see labtime.go); WallTakenAt is when the
	// snapshot was taken on the wall clock, and LabSkips the skips between the two.
	TakenAt     time.Time `json:"takenAt"`
	WallTakenAt time.Time `json:"wallTakenAt,omitzero"`
	LabSkips    []LabSkip `json:"labSkips,omitempty"`

	History   []recorder.Record           `json:"history"`
	Audit     []trail.AuditEvent          `json:"audit"`
	Billing   billing.Billing             `json:"billing"`
	Instances []ec2types.Instance         `json:"instances"`
	Volumes   []ec2types.Volume           `json:"volumes"`
	ENIs      []ec2types.NetworkInterface `json:"enis"`
	// EBSSnapshots are the account's own EBS snapshots (nil in snapshots older than them).
	EBSSnapshots []ec2types.Snapshot `json:"ebsSnapshots,omitempty"`
	// Policy is the emulator's IAM-like policy in force (nil in snapshots older than it).
	Policy *authz.Policy `json:"policy,omitempty"`
	// PDBs are the PodDisruptionBudgets as they are now (the recorder keeps no history of them).
	PDBs []policyv1.PodDisruptionBudget `json:"pdbs,omitempty"`
	// Images are the EKS-optimized AL2023 AMIs EC2 describes (amazon's), for the AMI graders.
	Images []ec2types.Image `json:"images,omitempty"`
	// Usage is what the lab's metrics-server observed: each pod's current and peak usage
	// against its requests (nil where no metrics API runs, and in older snapshots).
	Usage *metrics.Report `json:"usage,omitempty"`
	// Budgets are the account's AWS Budgets: their spend and every alert they fired (nil
	// in older snapshots).
	Budgets []budgets.Budget `json:"budgets,omitempty"`
}

// Sources are where a snapshot is read from: the lab's two control planes.
type Sources struct {
	// HistoryPath is the recorder's history file (cluster.Home.History()).
	HistoryPath string
	Kube        kubernetes.Interface
	// EC2 should sign as the grader, so the audit trail tells these reads from the learner's.
	EC2 *ec2.Client
	// Admin reads the emulator's audit trail, billing ledger and policy.
	Admin *fakeec2.AdminClient
	// Now dates the snapshot.
	Now func() time.Time
	// Usage reads the lab's metrics-server records; nil where none runs.
	Usage func(context.Context) (*metrics.Report, error)
}

// Take reads both control planes into a snapshot.
func Take(ctx context.Context, src Sources) (*Snapshot, error) {
	now := src.Now
	if now == nil {
		now = time.Now
	}
	s := &Snapshot{TakenAt: now().UTC()}
	var err error
	if s.History, err = recorder.Read(src.HistoryPath); err != nil {
		return nil, err
	}
	if s.Audit, err = src.Admin.Audit(ctx, trail.AuditQuery{}); err != nil {
		return nil, fmt.Errorf("reading the EC2 audit trail: %w", err)
	}
	if s.Billing, err = src.Admin.Billing(ctx); err != nil {
		return nil, fmt.Errorf("reading the EC2 billing ledger: %w", err)
	}
	policy, err := src.Admin.Policy(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the EC2 policy: %w", err)
	}
	s.Policy = &policy
	instances := ec2.NewDescribeInstancesPaginator(src.EC2, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1000)})
	for instances.HasMorePages() {
		page, err := instances.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instances: %w", err)
		}
		for _, r := range page.Reservations {
			s.Instances = append(s.Instances, r.Instances...)
		}
	}
	volumes := ec2.NewDescribeVolumesPaginator(src.EC2, &ec2.DescribeVolumesInput{MaxResults: aws.Int32(500)})
	for volumes.HasMorePages() {
		page, err := volumes.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing volumes: %w", err)
		}
		s.Volumes = append(s.Volumes, page.Volumes...)
	}
	enis := ec2.NewDescribeNetworkInterfacesPaginator(src.EC2, &ec2.DescribeNetworkInterfacesInput{MaxResults: aws.Int32(1000)})
	for enis.HasMorePages() {
		page, err := enis.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing network interfaces: %w", err)
		}
		s.ENIs = append(s.ENIs, page.NetworkInterfaces...)
	}
	snaps := ec2.NewDescribeSnapshotsPaginator(src.EC2, &ec2.DescribeSnapshotsInput{OwnerIds: []string{"self"}, MaxResults: aws.Int32(1000)})
	for snaps.HasMorePages() {
		page, err := snaps.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing snapshots: %w", err)
		}
		s.EBSSnapshots = append(s.EBSSnapshots, page.Snapshots...)
	}
	pdbs, err := src.Kube.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pod disruption budgets: %w", err)
	}
	s.PDBs = pdbs.Items
	images, err := src.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-*"}},
	}})
	if err != nil {
		return nil, fmt.Errorf("describing images: %w", err)
	}
	s.Images = images.Images
	if s.Budgets, err = src.Admin.Budgets(ctx); err != nil {
		return nil, fmt.Errorf("reading the account's budgets: %w", err)
	}
	if src.Usage != nil {
		if s.Usage, err = src.Usage(ctx); err != nil {
			return nil, fmt.Errorf("reading the metrics-server's usage records: %w", err)
		}
	}
	s.toLabTime()
	return s, nil
}

// ReadSnapshot reads a snapshot saved as JSON (karplab evidence --snapshot FILE), gzipped or
// not: the golden tests keep real runs' snapshots gzipped.
func ReadSnapshot(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading snapshot %s: %w", path, err)
		}
		r = zr
	}
	var s Snapshot
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("decoding snapshot %s: %w", path, err)
	}
	return &s, nil
}
