package ssm

import (
	"strconv"

	"github.com/karplab/karplab/fakeec2/account"
)

// The wire layer of the metadata actions: DescribeParameters, GetParameterHistory and
// LabelParameterVersion.

type legacyFilterIn struct {
	Key    string
	Values []string
}

type describeIn struct {
	Filters          []legacyFilterIn
	ParameterFilters []filterIn
	MaxResults       *int
	NextToken        string
}

type metaOut struct {
	Name             string
	ARN              string
	Type             string
	KeyId            string `json:",omitempty"`
	LastModifiedDate float64
	LastModifiedUser string `json:",omitempty"`
	Description      string `json:",omitempty"`
	AllowedPattern   string `json:",omitempty"`
	Version          int64
	Tier             string
	Policies         []struct{}
	DataType         string
}

type describeOut struct {
	Parameters []metaOut
	NextToken  string `json:",omitempty"`
}

type historyIn struct {
	Name           *string
	WithDecryption bool
	MaxResults     *int
	NextToken      string
}

type historyEntry struct {
	Name             string
	Type             string
	KeyId            string `json:",omitempty"`
	LastModifiedDate float64
	LastModifiedUser string `json:",omitempty"`
	Description      string `json:",omitempty"`
	Value            string
	AllowedPattern   string `json:",omitempty"`
	Version          int64
	Labels           []string
	Tier             string
	Policies         []struct{}
	DataType         string
}

type historyOut struct {
	Parameters []historyEntry
	NextToken  string `json:",omitempty"`
}

type labelIn struct {
	Name             *string
	ParameterVersion *int64
	Labels           []string
}

type labelOut struct {
	InvalidLabels    []string
	ParameterVersion int64
}

func (s *Service) describeParameters(c *account.Call, in *describeIn) (*describeOut, *account.Error) {
	if len(in.Filters) > 0 && len(in.ParameterFilters) > 0 {
		return nil, account.BadRequest("ValidationException", "You can use either Filters or ParameterFilters in a single request.")
	}
	limit, e := maxResults(in.MaxResults, 50)
	if e != nil {
		return nil, e
	}
	fs := filters(in.ParameterFilters)
	for _, f := range in.Filters { // the legacy filters: Name matches a prefix
		opt := "Equals"
		if f.Key == "Name" {
			opt = "BeginsWith"
		}
		fs = append(fs, filter{Key: f.Key, Option: opt, Values: f.Values})
	}
	if e := checkFilters(fs, describeKeys); e != nil {
		return nil, e
	}
	if e := s.authorize(c, "*"); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var hits []*param
	for _, p := range sorted(s.m.params) {
		if pick(p, fs) != nil {
			hits = append(hits, p)
		}
	}
	page, next, err := account.Page(hits, func(p *param) string { return p.Name }, in.NextToken, limit)
	if err != nil {
		return nil, badToken()
	}
	out := &describeOut{Parameters: make([]metaOut, 0, len(page)), NextToken: next}
	for _, p := range page {
		v := p.current()
		out.Parameters = append(out.Parameters, metaOut{Name: p.Name, ARN: s.m.arn(p), Type: v.Type, KeyId: v.KeyID,
			LastModifiedDate: account.EpochSeconds(v.LastModifiedDate), LastModifiedUser: v.LastModifiedUser,
			Description: v.Description, AllowedPattern: v.AllowedPattern, Version: v.Version, Tier: v.Tier,
			Policies: []struct{}{}, DataType: v.DataType})
	}
	return out, nil
}

func (s *Service) getParameterHistory(c *account.Call, in *historyIn) (*historyOut, *account.Error) {
	r, e := nameRef(in.Name)
	if e != nil {
		return nil, e
	}
	if r.selector != "" {
		return nil, account.BadRequest("ValidationException", "%s", nameMessage)
	}
	limit, e := maxResults(in.MaxResults, 50)
	if e != nil {
		return nil, e
	}
	if e := s.authorize(c, s.m.nameARN(r.name)); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.m.find(r.name)
	if p == nil {
		return nil, account.BadRequest("ParameterNotFound", "")
	}
	key := func(v *version) string { return strconv.FormatInt(v.Version, 10) }
	page, next, err := account.Page(p.Versions, key, in.NextToken, limit)
	if err != nil {
		return nil, badToken()
	}
	out := &historyOut{Parameters: make([]historyEntry, 0, len(page)), NextToken: next}
	for _, v := range page {
		val := v.Value
		if v.Type == TypeSecureString && !in.WithDecryption {
			val = seal(v)
		}
		out.Parameters = append(out.Parameters, historyEntry{Name: p.Name, Type: v.Type, KeyId: v.KeyID,
			LastModifiedDate: account.EpochSeconds(v.LastModifiedDate), LastModifiedUser: v.LastModifiedUser,
			Description: v.Description, Value: val, AllowedPattern: v.AllowedPattern, Version: v.Version,
			Labels: append([]string{}, v.Labels...), Tier: v.Tier, Policies: []struct{}{}, DataType: v.DataType})
	}
	return out, nil
}

func (s *Service) labelParameterVersion(c *account.Call, in *labelIn) (*labelOut, *account.Error) {
	if e := required("name", in.Name); e != nil {
		return nil, e
	}
	if len(in.Labels) < 1 || len(in.Labels) > maxLabels {
		return nil, account.BadRequest("ValidationException",
			"1 validation error detected: Value at 'labels' failed to satisfy constraint: Member must have length less than or equal to 10, Member must have length greater than or equal to 1")
	}
	if e := s.authorize(c, s.m.nameARN(*in.Name)); e != nil {
		return nil, e
	}
	var n int64
	if in.ParameterVersion != nil {
		n = *in.ParameterVersion
	}
	s.mu.Lock()
	p, got, bad, e := s.m.label(*in.Name, n, in.Labels)
	if e != nil {
		s.mu.Unlock()
		return nil, e
	}
	if e := s.commitLocked(s.m.op(p)); e != nil {
		return nil, e
	}
	return &labelOut{InvalidLabels: append([]string{}, bad...), ParameterVersion: got}, nil
}
