package fakeec2

import (
	"fmt"
	"strings"

	"github.com/karplab/karplab/fakeec2/account"
	"github.com/karplab/karplab/fakeec2/ec2"

	"github.com/karplab/karplab/fakeec2/budgets"
	"github.com/karplab/karplab/fakeec2/eks"
	"github.com/karplab/karplab/fakeec2/iam"
	"github.com/karplab/karplab/fakeec2/pricing"
	"github.com/karplab/karplab/fakeec2/sqs"
	"github.com/karplab/karplab/fakeec2/ssm"
	"github.com/karplab/karplab/fakeec2/sts"
)

// The account's services beside EC2, each in its own package over the shared host
// (fakeec2/account). EC2 reaches into them where AWS's services meet: a launch names an
// IAM instance profile, a new AMI release updates SSM's public parameters, EC2's events
// reach the SQS interruption queue.
type accountServices struct {
	iam     *iam.Service
	sts     *sts.Service
	eks     *eks.Service
	pricing *pricing.Service
	ssm     *ssm.Service
	sqs     *sqs.Service
	budgets *budgets.Service
	// budgetLoop evaluates the budgets on ledger changes and on a tick (budgetledger.go).
	budgetLoop *budgetLoop
}

// openServices opens every service over s's host and registers it with the router.
func (s *Server) openServices() error {
	var err error
	if s.svc.iam, err = iam.New(s.host, iam.Options{SeedRoles: iam.SeedRolesFor(s.discovery)}); err != nil {
		return fmt.Errorf("opening IAM: %w", err)
	}
	if s.svc.sts, err = sts.New(s.host, sts.Options{DecodeDenial: s.decodeDenial}); err != nil {
		return fmt.Errorf("opening STS: %w", err)
	}
	if s.svc.eks, err = eks.New(s.host); err != nil {
		return fmt.Errorf("opening EKS: %w", err)
	}
	if s.svc.pricing, err = pricing.New(s.host, pricing.Options{Products: priceList(s.region),
		RegionRatio: ec2.PriceRatio(s.region)}); err != nil {
		return fmt.Errorf("opening Pricing: %w", err)
	}
	if s.svc.ssm, err = ssm.New(s.host, ssm.Options{}); err != nil {
		return fmt.Errorf("opening SSM: %w", err)
	}
	if s.svc.sqs, err = sqs.New(s.host, sqs.Options{}); err != nil {
		return fmt.Errorf("opening SQS: %w", err)
	}
	if err := s.openBudgets(); err != nil {
		return fmt.Errorf("opening Budgets: %w", err)
	}
	for _, svc := range []account.Service{s.svc.iam, s.svc.sts, s.svc.eks, s.svc.pricing, s.svc.ssm, s.svc.sqs, s.svc.budgets} {
		s.registerService(svc)
	}
	if err := s.ec2.PublishImageParameters(); err != nil {
		return err
	}
	if err := s.ensureInterruptionQueue(); err != nil {
		return err
	}
	s.startBudgetEvaluation()
	return nil
}

// ensureInterruptionQueue creates the queue EC2's events go to, as Karpenter's
// CloudFormation stack does on AWS.
func (s *Server) ensureInterruptionQueue() error {
	if s.interruptionQueue == "" {
		return nil
	}
	if _, err := s.svc.sqs.EnsureQueue(s.interruptionQueue); err != nil {
		return fmt.Errorf("creating the interruption queue %s: %w", s.interruptionQueue, err)
	}
	return nil
}

// priceList is the catalog as the Price List API sells it: the prices the ledger bills.
func priceList(region string) []pricing.Product {
	catalog := ec2.Catalog(region)
	out := make([]pricing.Product, 0, len(catalog))
	for _, it := range catalog {
		out = append(out, pricing.Product{InstanceType: it.Name, VCPU: int(it.VCPUs), MemoryGiB: float64(it.MemoryMiB) / 1024,
			OnDemandUSDPerHour: it.OnDemandPrice, Arch: it.Arch, ClockSpeedGHz: it.ClockSpeedGHz,
			NetworkPerformance: it.NetworkPerformance, BareMetal: it.BareMetal, PhysicalProcessor: it.PhysicalProcessor,
			InstanceFamily: it.Family, GPU: int(it.GPU.Count), PreviousGeneration: it.PreviousGeneration})
	}
	return out
}

// SetEKSCluster tells EKS the truth about the lab's cluster (endpoint, CA, version,
// service CIDR), which DescribeCluster then answers.
func (s *Server) SetEKSCluster(c eks.Cluster) error { return s.svc.eks.SetCluster(c) }

// resetServices drops what callers made in the services (budgets too), keeping what AWS
// provides (seeded roles, public parameters, the interruption queue).
func (s *Server) resetServices() error {
	if err := s.svc.iam.Reset(); err != nil {
		return fmt.Errorf("resetting IAM: %w", err)
	}
	if err := s.svc.ssm.Reset(); err != nil {
		return fmt.Errorf("resetting SSM: %w", err)
	}
	if err := s.svc.sqs.Reset(); err != nil {
		return fmt.Errorf("resetting SQS: %w", err)
	}
	if err := s.svc.budgets.Reset(); err != nil {
		return fmt.Errorf("resetting Budgets: %w", err)
	}
	if err := s.ec2.PublishImageParameters(); err != nil {
		return err
	}
	return s.ensureInterruptionQueue()
}

// SSM returns the account's Parameter Store; SQS its queues (for the lab's evidence).
func (s *Server) SSM() *ssm.Service { return s.svc.ssm }
func (s *Server) SQS() *sqs.Service { return s.svc.sqs }

// IAM returns the account's IAM (for the lab's evidence and for launches).
func (s *Server) IAM() *iam.Service { return s.svc.iam }

// decodeDenial finds the audit record of the call that was denied with encoded: what
// sts:DecodeAuthorizationMessage tells about it.
func (s *Server) decodeDenial(encoded string) (sts.Denial, bool) {
	s.auditMu.RLock()
	defer s.auditMu.RUnlock()
	for i := len(s.audit) - 1; i >= 0; i-- {
		if e := s.audit[i]; e.EncodedMessage == encoded {
			return sts.Denial{Caller: e.Caller, Action: e.ServiceName() + ":" + e.Action, Resource: "*",
				Reason: e.DenialReason, ExplicitDeny: !strings.HasPrefix(e.DenialReason, "no statement allows")}, true
		}
	}
	return sts.Denial{}, false
}
