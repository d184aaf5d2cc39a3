package ssm

import (
	"fmt"
	"sync"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

const targetPrefix = "AmazonSSM"

// Service is the account's Parameter Store. It implements account.Service.
type Service struct {
	host  account.Host
	table map[string]account.JSONActionSpec

	mu sync.Mutex
	m  *model
}

var _ account.Service = (*Service)(nil)

// Options configures New. It is empty today; it keeps New's signature stable.
type Options struct{}

// New opens Parameter Store over host's store. The public parameters start empty: call
// SetEKSImages or SetPublicParameters.
func New(host account.Host, _ Options) (*Service, error) {
	s := &Service{host: host, m: newModel(host.Region(), host.AccountID())}
	err := account.LoadJSON(host.Store(), bucketParams, func(k string, p *param) {
		if len(p.Versions) > 0 {
			s.m.params[k] = p
		}
	})
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", bucketParams, err)
	}
	s.table = map[string]account.JSONActionSpec{
		"GetParameter":          {Handler: account.JSONAction(s.getParameter), ReadOnly: true},
		"GetParameters":         {Handler: account.JSONAction(s.getParameters), ReadOnly: true},
		"GetParametersByPath":   {Handler: account.JSONAction(s.getParametersByPath), ReadOnly: true},
		"GetParameterHistory":   {Handler: account.JSONAction(s.getParameterHistory), ReadOnly: true},
		"DescribeParameters":    {Handler: account.JSONAction(s.describeParameters), ReadOnly: true},
		"PutParameter":          {Handler: account.JSONAction(s.putParameter)},
		"DeleteParameter":       {Handler: account.JSONAction(s.deleteParameter)},
		"LabelParameterVersion": {Handler: account.JSONAction(s.labelParameterVersion)},
	}
	return s, nil
}

// Name is SSM's SigV4 signing name.
func (s *Service) Name() string { return "ssm" }

// Serve answers one awsJson1_1 call.
func (s *Service) Serve(c *account.Call) *account.Response {
	return account.ServeJSON(c, account.JSON11, targetPrefix, s.table)
}

// PublicParameter is one of AWS's own read-only parameters (under /aws/).
type PublicParameter struct {
	Name, Value string
	DataType    string // "" means "text"
}

// SetPublicParameters replaces every public parameter. A name whose value changed gets a
// new version, as AWS bumps its parameters with each release. Names outside /aws/ are an
// error: the account's own parameters are not AWS's to publish.
func (s *Service) SetPublicParameters(params []PublicParameter) error {
	for _, p := range params {
		if !isPublicName(p.Name) || validName(p.Name) != nil {
			return fmt.Errorf("setting public ssm parameters: %q is not a valid name under /aws/", p.Name)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.setPublic(params, s.host.Now().Truncate(time.Millisecond)) // AWS keeps milliseconds
	return nil
}

// SetEKSImages publishes the EKS-optimized AMI parameters of images, replacing every
// public parameter (see EKSParameters).
func (s *Service) SetEKSImages(images []EKSImage) error {
	byName := EKSParameters(images)
	params := make([]PublicParameter, 0, len(byName))
	for _, name := range account.SortedKeys(byName) {
		params = append(params, PublicParameter{Name: name, Value: byName[name]})
	}
	return s.SetPublicParameters(params)
}

// Parameter is the lab's view of one version of a parameter.
type Parameter struct {
	Name, ARN, Type, Value, DataType string
	Version                          int64
	LastModifiedDate                 time.Time
	LastModifiedUser                 string
	Description, KeyID, Tier         string
	AllowedPattern                   string
	Labels                           []string
	Tags                             []Tag
	Public                           bool // one of AWS's parameters under /aws/
}

// Parameter finds a parameter by name, ARN or selector ("name:3", "name:label"); the
// value is in the clear.
func (s *Service) Parameter(name string) (Parameter, bool) {
	r, e := parseRef(name)
	if e != nil {
		return Parameter{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, v, e := s.m.resolve(r)
	if e != nil {
		return Parameter{}, false
	}
	return s.viewLocked(p, v), true
}

// Parameters lists the account's own parameters (not the public ones) by name.
func (s *Service) Parameters() []Parameter {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Parameter
	for _, p := range sorted(s.m.params) {
		out = append(out, s.viewLocked(p, p.current()))
	}
	return out
}

// PublicNames lists the public parameters' names in order.
func (s *Service) PublicNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return account.SortedKeys(s.m.public)
}

func (s *Service) viewLocked(p *param, v *version) Parameter {
	return Parameter{Name: p.Name, ARN: s.m.arn(p), Type: v.Type, Value: v.Value, DataType: v.DataType,
		Version: v.Version, LastModifiedDate: v.LastModifiedDate, LastModifiedUser: v.LastModifiedUser,
		Description: v.Description, KeyID: v.KeyID, Tier: v.Tier, AllowedPattern: v.AllowedPattern,
		Labels: append([]string(nil), v.Labels...), Tags: append([]Tag(nil), p.Tags...), Public: p.public}
}

// Reset drops every parameter of the account's own; the public ones stay.
func (s *Service) Reset() error {
	s.mu.Lock()
	ops := make([]account.Op, 0, len(s.m.params))
	for name := range s.m.params {
		ops = append(ops, account.Op{Bucket: bucketParams, Key: name})
	}
	s.m.params = map[string]*param{}
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return fmt.Errorf("resetting ssm: %w", err)
	}
	return nil
}

// commit enqueues ops under the lock, releases it and waits for the store.
func (s *Service) commitLocked(ops ...account.Op) *account.Error {
	wait := s.host.Store().Enqueue(ops...)
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return account.Internal("saving parameters: %v", err)
	}
	return nil
}
