package labs

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karplab/karplab/cluster/recorder"
	"github.com/karplab/karplab/fakeec2"
)

// Snapshot is everything the graders read, taken at one time from both control planes: the
// Kubernetes history the daemon recorded, and the EC2 account as the API, the audit trail
// and the billing ledger show it. Correlate joins it; it is plain data, so a real run's
// snapshot can be kept as a test fixture.
type Snapshot struct {
	TakenAt   time.Time                   `json:"takenAt"`
	History   []recorder.Record           `json:"history"`
	Audit     []fakeec2.AuditEvent        `json:"audit"`
	Billing   fakeec2.Billing             `json:"billing"`
	Instances []ec2types.Instance         `json:"instances"`
	Volumes   []ec2types.Volume           `json:"volumes"`
	ENIs      []ec2types.NetworkInterface `json:"enis"`
	// Policy is the emulator's IAM-like policy in force (nil in snapshots older than it).
	Policy *fakeec2.Policy `json:"policy,omitempty"`
	// PDBs are the PodDisruptionBudgets as they are now (the recorder keeps no history of them).
	PDBs []policyv1.PodDisruptionBudget `json:"pdbs,omitempty"`
	// Images are the EKS-optimized AL2023 AMIs EC2 describes (amazon's), for the AMI graders.
	Images []ec2types.Image `json:"images,omitempty"`
}

// TakeSnapshot reads both control planes.
func (e *Env) TakeSnapshot(ctx context.Context) (*Snapshot, error) {
	s := &Snapshot{TakenAt: e.Now().UTC()}
	var err error
	if s.History, err = recorder.Read(e.Home.History()); err != nil {
		return nil, err
	}
	if s.Audit, err = e.Admin.Audit(ctx, fakeec2.AuditQuery{}); err != nil {
		return nil, fmt.Errorf("reading the EC2 audit trail: %w", err)
	}
	if s.Billing, err = e.Admin.Billing(ctx); err != nil {
		return nil, fmt.Errorf("reading the EC2 billing ledger: %w", err)
	}
	policy, err := e.Admin.Policy(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the EC2 policy: %w", err)
	}
	s.Policy = &policy
	instances := ec2.NewDescribeInstancesPaginator(e.EC2, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(1000)})
	for instances.HasMorePages() {
		page, err := instances.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instances: %w", err)
		}
		for _, r := range page.Reservations {
			s.Instances = append(s.Instances, r.Instances...)
		}
	}
	volumes := ec2.NewDescribeVolumesPaginator(e.EC2, &ec2.DescribeVolumesInput{MaxResults: aws.Int32(500)})
	for volumes.HasMorePages() {
		page, err := volumes.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing volumes: %w", err)
		}
		s.Volumes = append(s.Volumes, page.Volumes...)
	}
	enis := ec2.NewDescribeNetworkInterfacesPaginator(e.EC2, &ec2.DescribeNetworkInterfacesInput{MaxResults: aws.Int32(1000)})
	for enis.HasMorePages() {
		page, err := enis.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing network interfaces: %w", err)
		}
		s.ENIs = append(s.ENIs, page.NetworkInterfaces...)
	}
	pdbs, err := e.Kube.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pod disruption budgets: %w", err)
	}
	s.PDBs = pdbs.Items
	images, err := e.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-*"}},
	}})
	if err != nil {
		return nil, fmt.Errorf("describing images: %w", err)
	}
	s.Images = images.Images
	return s, nil
}
