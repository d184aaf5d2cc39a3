package iam

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/karplab/karplab/fakeec2/account"
)

// Namespace and Version of IAM's awsquery protocol.
const (
	Namespace = "https://iam.amazonaws.com/doc/2010-05-08/"
	Version   = "2010-05-08"
)

// queryService is IAM's awsquery dispatch table, bound to s.
func (s *Service) queryService() account.QueryService {
	ro := func(h account.QueryHandler) account.QueryActionSpec {
		return account.QueryActionSpec{Handler: h, ReadOnly: true}
	}
	rw := func(h account.QueryHandler) account.QueryActionSpec { return account.QueryActionSpec{Handler: h} }
	return account.QueryService{Namespace: Namespace, Version: Version, Actions: map[string]account.QueryActionSpec{
		"GetRole":                       ro(s.getRole),
		"CreateRole":                    rw(s.createRole),
		"DeleteRole":                    rw(s.deleteRole),
		"ListRoles":                     ro(s.listRoles),
		"GetInstanceProfile":            ro(s.getInstanceProfile),
		"CreateInstanceProfile":         rw(s.createInstanceProfile),
		"DeleteInstanceProfile":         rw(s.deleteInstanceProfile),
		"AddRoleToInstanceProfile":      rw(s.addRoleToInstanceProfile),
		"RemoveRoleFromInstanceProfile": rw(s.removeRoleFromInstanceProfile),
		"TagInstanceProfile":            rw(s.tagInstanceProfile),
		"UntagInstanceProfile":          rw(s.untagInstanceProfile),
		"ListInstanceProfiles":          ro(s.listInstanceProfiles),
		"ListInstanceProfilesForRole":   ro(s.listInstanceProfilesForRole),
		"ListInstanceProfileTags":       ro(s.listInstanceProfileTags),
	}}
}

// Serve answers one awsquery call: form-encoded in the body (or the URL's query, which
// IAM also accepts), XML out.
func (s *Service) Serve(c *account.Call) *account.Response {
	return account.ServeQuery(c, s.query)
}

// authorize asks the account's policy; a denial answers AccessDenied and is recorded.
func (s *Service) authorize(c *account.Call, action, resource string) *account.Error {
	reason := s.host.Authorize(c.Caller, action, resource)
	if reason == "" {
		return nil
	}
	c.DenialReason = reason
	return account.Errorf(http.StatusForbidden, "AccessDenied", "%s",
		account.NotAuthorizedMessage(s.host, c.Caller, action, resource))
}

// authorizeProfile asks the policy about action on the named instance profile's ARN.
func (s *Service) authorizeProfile(c *account.Call, action, name string) *account.Error {
	return s.authorize(c, action, s.resolve(func(m *model) string { return m.profileARNFor(name) }))
}

// authorizeRole asks the policy about action on the named role's ARN.
func (s *Service) authorizeRole(c *account.Call, action, name string) *account.Error {
	return s.authorize(c, action, s.resolve(func(m *model) string { return m.roleARNFor(name) }))
}

// resolve reads an ARN from the model under the lock, for authorize to check.
func (s *Service) resolve(fn func(m *model) string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(s.m)
}

// read runs fn on the model under the lock.
func (s *Service) read(fn func(m *model) (any, *account.Error)) (any, *account.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(s.m)
}

// mutate runs fn under the lock, enqueues the writes it returns and waits for them after
// unlocking.
func (s *Service) mutate(fn func(m *model) (any, []account.Op, *account.Error)) (any, *account.Error) {
	s.mu.Lock()
	out, ops, e := fn(s.m)
	var wait <-chan error
	if e == nil && len(ops) > 0 {
		wait = s.host.Store().Enqueue(ops...)
	}
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	if wait != nil {
		if err := <-wait; err != nil {
			return nil, account.Internal("saving iam state: %v", err)
		}
	}
	return out, nil
}

// formTags decodes Tags.member.N.Key/Value.
func formTags(f url.Values, prefix string) []Tag {
	var out []Tag
	for i := 1; ; i++ {
		p := prefix + ".member." + strconv.Itoa(i)
		k, ok := f[p+".Key"]
		if !ok {
			return out
		}
		out = append(out, Tag{Key: first(k), Value: f.Get(p + ".Value")})
	}
}

// formList decodes Name.member.N.
func formList(f url.Values, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := f[prefix+".member."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, first(v))
	}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// paging is a list call's Marker and MaxItems.
type paging struct {
	marker string
	max    int
}

func formPaging(f url.Values) (paging, *account.Error) {
	p := paging{marker: f.Get("Marker"), max: defaultMaxItems}
	if _, ok := f["Marker"]; ok && (p.marker == "" || len(p.marker) > 320) {
		return p, validationError("1 validation error detected: Value '%s' at 'marker' failed to satisfy constraint: Member must have length between 1 and 320", p.marker)
	}
	if v, ok := f["MaxItems"]; ok {
		n, err := strconv.Atoi(first(v))
		if err != nil {
			return p, validationError("1 validation error detected: Value '%s' at 'maxItems' failed to satisfy constraint: Member must be a number", first(v))
		}
		if n < 1 || n > maxMaxItems {
			return p, validationError("1 validation error detected: Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and %d", n, maxMaxItems)
		}
		p.max = n
	}
	return p, nil
}

// pageOf cuts one page; marker is "" when the list is not truncated.
func pageOf[T any](items []T, name func(T) string, p paging) (page []T, truncated bool, marker string, e *account.Error) {
	page, next, err := account.Page(items, name, p.marker, p.max)
	if err != nil {
		return nil, false, "", validationError("Invalid Marker: %s", p.marker)
	}
	return page, next != "", next, nil
}

// members writes a list the awsquery way: <Name><member>...</member></Name>, present
// (empty) even when there is nothing, as IAM writes it.
type members[T any] struct {
	Items []T `xml:"member"`
}

type xmlTag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type xmlRole struct {
	Path                     string           `xml:"Path"`
	RoleName                 string           `xml:"RoleName"`
	RoleID                   string           `xml:"RoleId"`
	Arn                      string           `xml:"Arn"`
	CreateDate               string           `xml:"CreateDate"`
	AssumeRolePolicyDocument string           `xml:"AssumeRolePolicyDocument"`
	Description              string           `xml:"Description,omitempty"`
	MaxSessionDuration       int32            `xml:"MaxSessionDuration,omitempty"`
	Tags                     *members[xmlTag] `xml:"Tags,omitempty"`
}

type xmlProfile struct {
	Path                string           `xml:"Path"`
	InstanceProfileName string           `xml:"InstanceProfileName"`
	InstanceProfileID   string           `xml:"InstanceProfileId"`
	Arn                 string           `xml:"Arn"`
	CreateDate          string           `xml:"CreateDate"`
	Roles               members[xmlRole] `xml:"Roles"`
	Tags                *members[xmlTag] `xml:"Tags,omitempty"`
}

func tagsXML(tags []Tag) *members[xmlTag] {
	if len(tags) == 0 {
		return nil
	}
	out := &members[xmlTag]{}
	for _, t := range tags {
		out.Items = append(out.Items, xmlTag{Key: t.Key, Value: t.Value})
	}
	return out
}

// policyXML URL-encodes a policy document, as IAM returns them.
func policyXML(doc string) string {
	return strings.ReplaceAll(url.QueryEscape(doc), "+", "%20")
}

// roleXML renders a role; full adds what only GetRole/CreateRole return (listings and
// a profile's roles omit tags, description and session duration).
func roleXML(r *Role, full bool) xmlRole {
	x := xmlRole{Path: r.Path, RoleName: r.Name, RoleID: r.ID, Arn: r.ARN,
		CreateDate: account.ISO8601(r.CreateDate), AssumeRolePolicyDocument: policyXML(r.AssumeRolePolicyDocument)}
	if full {
		x.Description, x.MaxSessionDuration, x.Tags = r.Description, r.MaxSessionDuration, tagsXML(r.Tags)
	}
	return x
}

// profileXML renders a profile with its role; withTags is false for listings, which
// AWS documents as not returning tags.
func (m *model) profileXML(p *profile, withTags bool) xmlProfile {
	x := xmlProfile{Path: p.Path, InstanceProfileName: p.Name, InstanceProfileID: p.ID, Arn: p.ARN,
		CreateDate: account.ISO8601(p.CreateDate), Roles: members[xmlRole]{Items: []xmlRole{}}}
	if r, ok := m.roles[key(p.RoleName)]; ok && p.RoleName != "" {
		x.Roles.Items = append(x.Roles.Items, roleXML(r, false))
	}
	if withTags {
		x.Tags = tagsXML(p.Tags)
	}
	return x
}
