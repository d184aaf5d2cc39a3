package iam

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

// EC2TrustPolicy lets EC2 instances assume a role: what a node role trusts.
const EC2TrustPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// SeedRole is a role New creates when the store holds none.
type SeedRole struct {
	Name, Path, Description string
	// AssumeRolePolicyDocument defaults to EC2TrustPolicy.
	AssumeRolePolicyDocument string
}

// DefaultSeedRoles are the course's roles: the node role its EC2NodeClass names and the
// controller's role.
func DefaultSeedRoles() []SeedRole { return SeedRolesFor("ziba-production") }

// SeedRolesFor are the roles Karpenter's getting-started guide creates for a cluster:
// KarpenterNodeRole-NAME and KarpenterControllerRole-NAME.
func SeedRolesFor(name string) []SeedRole {
	return []SeedRole{
		{Name: "KarpenterNodeRole-" + name, Description: "Karpenter node role"},
		{Name: "KarpenterControllerRole-" + name, Description: "Karpenter controller role"},
	}
}

// Options configures New.
type Options struct {
	// SeedRoles are created when the store has no role; nil means DefaultSeedRoles, an
	// empty non-nil slice none.
	SeedRoles []SeedRole
}

// Service is the account's IAM. It implements account.Service.
type Service struct {
	host  account.Host
	seeds []SeedRole
	query account.QueryService

	mu sync.Mutex
	m  *model
}

var _ account.Service = (*Service)(nil)

// New opens IAM over host's store, seeding the roles of opts when it holds none.
func New(host account.Host, opts Options) (*Service, error) {
	seeds := opts.SeedRoles
	if seeds == nil {
		seeds = DefaultSeedRoles()
	}
	s := &Service{host: host, seeds: seeds, m: newModel(host.AccountID())}
	s.query = s.queryService()
	if err := s.load(); err != nil {
		return nil, err
	}
	if len(s.m.roles) == 0 {
		s.mu.Lock()
		ops, err := s.seedLocked()
		wait := host.Store().Enqueue(ops...)
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if err := <-wait; err != nil {
			return nil, fmt.Errorf("saving iam seed roles: %w", err)
		}
	}
	return s, nil
}

// Name is IAM's SigV4 signing name.
func (s *Service) Name() string { return "iam" }

func (s *Service) load() error {
	st := s.host.Store()
	if err := account.LoadJSON(st, bucketRoles, func(k string, r *Role) { s.m.roles[k] = r }); err != nil {
		return fmt.Errorf("loading %s: %w", bucketRoles, err)
	}
	if err := account.LoadJSON(st, bucketProfiles, func(k string, p *profile) { s.m.profiles[k] = p }); err != nil {
		return fmt.Errorf("loading %s: %w", bucketProfiles, err)
	}
	return nil
}

// seedLocked creates the seed roles that are missing.
func (s *Service) seedLocked() ([]account.Op, error) {
	var ops []account.Op
	for _, sr := range s.seeds {
		if _, ok := s.m.roles[key(sr.Name)]; ok {
			continue
		}
		doc := sr.AssumeRolePolicyDocument
		if doc == "" {
			doc = EC2TrustPolicy
		}
		r, rops, e := s.m.createRole(createRoleInput{Name: sr.Name, Path: sr.Path,
			AssumeRolePolicyDocument: doc, Description: sr.Description}, s.host.NewID("AROA"), s.host.Now())
		if e != nil {
			return ops, fmt.Errorf("seeding role %q: %w", sr.Name, e)
		}
		r.Seeded = true
		ops = append(ops, rops...)
	}
	return ops, nil
}

// Reset drops every instance profile and every role but the seeded ones (recreating a
// seeded role that was deleted).
func (s *Service) Reset() error {
	s.mu.Lock()
	var ops []account.Op
	for k, p := range s.m.profiles {
		ops = append(ops, account.Op{Bucket: bucketProfiles, Key: k})
		delete(s.m.profiles, key(p.Name))
	}
	for k, r := range s.m.roles {
		if !r.Seeded {
			ops = append(ops, account.Op{Bucket: bucketRoles, Key: k})
			delete(s.m.roles, k)
		}
	}
	seedOps, err := s.seedLocked()
	ops = append(ops, seedOps...)
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("resetting iam: %w", err)
	}
	if err := <-wait; err != nil {
		return fmt.Errorf("resetting iam: %w", err)
	}
	return nil
}

// InstanceProfile is the lab's view of an instance profile and the role it carries.
type InstanceProfile struct {
	Name, ID, ARN, Path string
	CreateDate          time.Time
	Tags                []Tag
	Role                *Role // nil: the profile holds no role
}

// InstanceProfile finds a profile by name or by ARN (an ARN must match exactly, path
// included, as EC2 checks an IamInstanceProfile given at launch).
func (s *Service) InstanceProfile(nameOrARN string) (InstanceProfile, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(nameOrARN, "arn:") {
		for _, p := range s.m.profiles {
			if p.ARN == nameOrARN {
				return s.viewLocked(p), true
			}
		}
		return InstanceProfile{}, false
	}
	p, ok := s.m.profiles[key(nameOrARN)]
	if !ok {
		return InstanceProfile{}, false
	}
	return s.viewLocked(p), true
}

// Role finds a role by name or exact ARN.
func (s *Service) Role(nameOrARN string) (Role, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.m.roles {
		if r.ARN == nameOrARN || key(r.Name) == key(nameOrARN) {
			return copyRole(r), true
		}
	}
	return Role{}, false
}

// Roles lists every role by name.
func (s *Service) Roles() []Role {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Role
	for _, r := range sortedByName(s.m.roles) {
		out = append(out, copyRole(r))
	}
	return out
}

// Profiles lists every instance profile by name.
func (s *Service) Profiles() []InstanceProfile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []InstanceProfile
	for _, p := range sortedByName(s.m.profiles) {
		out = append(out, s.viewLocked(p))
	}
	return out
}

func (s *Service) viewLocked(p *profile) InstanceProfile {
	v := InstanceProfile{Name: p.Name, ID: p.ID, ARN: p.ARN, Path: p.Path, CreateDate: p.CreateDate,
		Tags: append([]Tag(nil), p.Tags...)}
	if r, ok := s.m.roles[key(p.RoleName)]; ok && p.RoleName != "" {
		rv := copyRole(r)
		v.Role = &rv
	}
	return v
}

func copyRole(r *Role) Role {
	v := *r
	v.Tags = append([]Tag(nil), r.Tags...)
	return v
}
