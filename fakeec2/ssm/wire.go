package ssm

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/account"
)

// The wire shapes of the actions, as aws-sdk-go-v2's ssm schemas name their members.

type filterIn struct {
	Key    string   `json:"Key"`
	Option string   `json:"Option"`
	Values []string `json:"Values"`
}

type tagIn struct{ Key, Value string }

type paramOut struct {
	Name             string
	Type             string
	Value            string
	Version          int64
	Selector         string `json:",omitempty"`
	LastModifiedDate float64
	ARN              string
	DataType         string
}

type getParameterIn struct {
	Name           *string
	WithDecryption bool
}

type getParameterOut struct{ Parameter paramOut }

type getParametersIn struct {
	Names          []string
	WithDecryption bool
}

type getParametersOut struct {
	Parameters        []paramOut
	InvalidParameters []string
}

type byPathIn struct {
	Path             *string
	Recursive        bool
	ParameterFilters []filterIn
	WithDecryption   bool
	MaxResults       *int
	NextToken        string
}

type byPathOut struct {
	Parameters []paramOut
	NextToken  string `json:",omitempty"`
}

type putIn struct {
	Name, Value, Type, DataType, Description, KeyId, Tier, AllowedPattern *string
	Overwrite                                                             bool
	Tags                                                                  []tagIn
}

type putOut struct {
	Version int64
	Tier    string
}

type nameIn struct{ Name *string }

type empty struct{}

// out encodes one version as GetParameter* answer it; a SecureString's value stays
// sealed unless the caller asked for decryption.
func (s *Service) out(p *param, v *version, selector string, decrypt bool) paramOut {
	val := v.Value
	if v.Type == TypeSecureString && !decrypt {
		val = seal(v)
	}
	return paramOut{Name: p.Name, Type: v.Type, Value: val, Version: v.Version, Selector: selector,
		LastModifiedDate: account.EpochSeconds(v.LastModifiedDate), ARN: s.m.arn(p), DataType: v.DataType}
}

// seal stands in for KMS ciphertext: opaque to the caller, stable per version.
func seal(v *version) string {
	return base64.StdEncoding.EncodeToString([]byte("lab-kms:" + v.KeyID + ":" + strconv.FormatInt(v.Version, 10) + ":" + v.Value))
}

// authorize checks the policy for action on resource; a denial is recorded on the call.
func (s *Service) authorize(c *account.Call, resource string) *account.Error {
	action := "ssm:" + c.Action
	if reason := s.host.Authorize(c.Caller, action, resource); reason != "" {
		c.DenialReason = reason
		return account.BadRequest("AccessDeniedException", "%s", account.NotAuthorizedMessage(s.host, c.Caller, action, resource))
	}
	return nil
}

func required(member string, v *string) *account.Error {
	if v == nil {
		return account.BadRequest("ValidationException",
			"1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", member)
	}
	return nil
}

// nameRef reads a required Name that may select a version or label ("/a:3", "/a:prod").
func nameRef(name *string) (ref, *account.Error) {
	if e := required("name", name); e != nil {
		return ref{}, e
	}
	return parseRef(*name)
}

// maxResults applies an action's MaxResults range and default.
func maxResults(v *int, limit int) (int, *account.Error) {
	switch {
	case v == nil:
		return limit, nil
	case *v < 1:
		return 0, account.BadRequest("ValidationException",
			"1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value greater than or equal to 1", *v)
	case *v > limit:
		return 0, account.BadRequest("ValidationException",
			"1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to %d", *v, limit)
	}
	return *v, nil
}

func badToken() *account.Error {
	return account.BadRequest("InvalidNextToken", "The specified token is not valid.")
}

func filters(in []filterIn) []filter {
	out := make([]filter, len(in))
	for i, f := range in {
		out[i] = filter{Key: f.Key, Option: f.Option, Values: f.Values}
	}
	return out
}

func (s *Service) getParameter(c *account.Call, in *getParameterIn) (*getParameterOut, *account.Error) {
	r, e := nameRef(in.Name)
	if e != nil {
		return nil, e
	}
	if e := s.authorize(c, s.m.nameARN(r.name)); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, v, e := s.m.resolve(r)
	if e != nil {
		return nil, e
	}
	return &getParameterOut{Parameter: s.out(p, v, r.selector, in.WithDecryption)}, nil
}

func (s *Service) getParameters(c *account.Call, in *getParametersIn) (*getParametersOut, *account.Error) {
	if len(in.Names) < 1 || len(in.Names) > 10 {
		return nil, account.BadRequest("ValidationException",
			"1 validation error detected: Value '[%s]' at 'names' failed to satisfy constraint: Member must have length less than or equal to 10, Member must have length greater than or equal to 1",
			strings.Join(in.Names, ", "))
	}
	refs := make([]ref, len(in.Names))
	bad := make([]bool, len(in.Names))
	for i, n := range in.Names {
		var e *account.Error
		if refs[i], e = parseRef(n); e != nil {
			bad[i] = true
			continue
		}
		if e := s.authorize(c, s.m.nameARN(refs[i].name)); e != nil {
			return nil, e
		}
	}
	out := &getParametersOut{Parameters: []paramOut{}, InvalidParameters: []string{}}
	seen := map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range in.Names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if bad[i] {
			out.InvalidParameters = append(out.InvalidParameters, n)
			continue
		}
		p, v, e := s.m.resolve(refs[i])
		if e != nil {
			out.InvalidParameters = append(out.InvalidParameters, n)
			continue
		}
		out.Parameters = append(out.Parameters, s.out(p, v, refs[i].selector, in.WithDecryption))
	}
	return out, nil
}

// validPath checks a hierarchy: "/" or a slash-led name, a trailing slash allowed.
func validPath(path string) *account.Error {
	trimmed := strings.TrimSuffix(path, "/")
	if path == "/" {
		return nil
	}
	if !strings.HasPrefix(path, "/") || validName(trimmed) != nil {
		return account.BadRequest("ValidationException", "%s", pathMessage)
	}
	return nil
}

func (s *Service) getParametersByPath(c *account.Call, in *byPathIn) (*byPathOut, *account.Error) {
	if e := required("path", in.Path); e != nil {
		return nil, e
	}
	path := strings.TrimSpace(*in.Path)
	if e := validPath(path); e != nil {
		return nil, e
	}
	limit, e := maxResults(in.MaxResults, 10)
	if e != nil {
		return nil, e
	}
	fs := filters(in.ParameterFilters)
	if e := checkFilters(fs, byPathKeys); e != nil {
		return nil, e
	}
	if e := s.authorize(c, s.m.nameARN(strings.TrimSuffix(path, "/"))); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	type hit struct {
		p *param
		v *version
	}
	var hits []hit
	for _, p := range s.m.underPath(path, in.Recursive) {
		if v := pick(p, fs); v != nil {
			hits = append(hits, hit{p, v})
		}
	}
	page, next, err := account.Page(hits, func(h hit) string { return h.p.Name }, in.NextToken, limit)
	if err != nil {
		return nil, badToken()
	}
	out := &byPathOut{Parameters: make([]paramOut, 0, len(page)), NextToken: next}
	for _, h := range page {
		out.Parameters = append(out.Parameters, s.out(h.p, h.v, "", in.WithDecryption))
	}
	return out, nil
}

func (s *Service) putParameter(c *account.Call, in *putIn) (*putOut, *account.Error) {
	if e := required("name", in.Name); e != nil {
		return nil, e
	}
	if e := required("value", in.Value); e != nil {
		return nil, e
	}
	if deref(in.Type) == TypeSecureString && c.Params != nil {
		c.Params["Value"] = "HIDDEN_DUE_TO_SECURITY_REASONS" // as CloudTrail records it
	}
	name := strings.TrimSpace(*in.Name)
	if e := s.authorize(c, s.m.nameARN(name)); e != nil {
		return nil, e
	}
	pi := putInput{Name: name, Value: *in.Value, Type: deref(in.Type), DataType: deref(in.DataType),
		Description: deref(in.Description), KeyID: deref(in.KeyId), Tier: deref(in.Tier),
		AllowedPattern: deref(in.AllowedPattern), Overwrite: in.Overwrite}
	for _, t := range in.Tags {
		pi.Tags = append(pi.Tags, Tag(t))
	}
	s.mu.Lock()
	p, v, created, e := s.m.put(pi, c.Now.Truncate(time.Millisecond), account.CallerARN(s.host, c.Caller))
	if e != nil {
		s.mu.Unlock()
		return nil, e
	}
	if created {
		c.Created = append(c.Created, s.m.arn(p))
	}
	out := &putOut{Version: v.Version, Tier: v.Tier}
	if e := s.commitLocked(s.m.op(p)); e != nil {
		return nil, e
	}
	return out, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *Service) deleteParameter(c *account.Call, in *nameIn) (*empty, *account.Error) {
	if e := required("name", in.Name); e != nil {
		return nil, e
	}
	name := strings.TrimSpace(*in.Name)
	if e := s.authorize(c, s.m.nameARN(name)); e != nil {
		return nil, e
	}
	s.mu.Lock()
	p, e := s.m.remove(name)
	if e != nil {
		s.mu.Unlock()
		return nil, e
	}
	c.Deleted = append(c.Deleted, s.m.arn(p))
	if e := s.commitLocked(account.Op{Bucket: bucketParams, Key: p.Name}); e != nil {
		return nil, e
	}
	return &empty{}, nil
}
