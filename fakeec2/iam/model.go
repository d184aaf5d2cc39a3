package iam

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/karplab/karplab/fakeec2/account"
)

// Store buckets, keyed by the lower-cased name (IAM names are unique regardless of case).
const (
	bucketRoles    = "iam-roles"
	bucketProfiles = "iam-instance-profiles"
)

// Quotas as AWS documents them (IAM and STS quotas page).
const (
	maxTagsPerResource    = 50
	maxRolesPerProfile    = 1
	defaultMaxItems       = 100
	maxMaxItems           = 1000
	defaultSessionSeconds = 3600
)

// Tag is an IAM tag.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Role is an IAM role as the model keeps it and as the lab reads it.
type Role struct {
	Name                     string    `json:"name"`
	ID                       string    `json:"id"`
	ARN                      string    `json:"arn"`
	Path                     string    `json:"path"`
	CreateDate               time.Time `json:"createDate"`
	AssumeRolePolicyDocument string    `json:"assumeRolePolicyDocument"`
	Description              string    `json:"description,omitempty"`
	MaxSessionDuration       int32     `json:"maxSessionDuration"`
	Tags                     []Tag     `json:"tags,omitempty"`
	Seeded                   bool      `json:"seeded,omitempty"` // created by New; survives Reset
}

// profile is an instance profile as the model keeps it. RoleName is the canonical
// name of the role it holds ("" for none): a profile holds at most one.
type profile struct {
	Name       string    `json:"name"`
	ID         string    `json:"id"`
	ARN        string    `json:"arn"`
	Path       string    `json:"path"`
	CreateDate time.Time `json:"createDate"`
	RoleName   string    `json:"roleName,omitempty"`
	Tags       []Tag     `json:"tags,omitempty"`
}

// model is IAM's state for one account. Its methods check and apply one action and
// return the store writes it makes; the caller holds the service lock.
type model struct {
	accountID string
	roles     map[string]*Role
	profiles  map[string]*profile
}

func newModel(accountID string) *model {
	return &model{accountID: accountID, roles: map[string]*Role{}, profiles: map[string]*profile{}}
}

func key(name string) string { return strings.ToLower(name) }

func (m *model) roleARN(path, name string) string {
	return fmt.Sprintf("arn:aws:iam::%s:role%s%s", m.accountID, path, name)
}

func (m *model) profileARN(path, name string) string {
	return fmt.Sprintf("arn:aws:iam::%s:instance-profile%s%s", m.accountID, path, name)
}

func roleOp(r *Role) account.Op {
	return account.Op{Bucket: bucketRoles, Key: key(r.Name), Value: r}
}

func profileOp(p *profile) account.Op {
	return account.Op{Bucket: bucketProfiles, Key: key(p.Name), Value: p}
}

func noSuchRole(name string) *account.Error {
	return account.Errorf(http.StatusNotFound, "NoSuchEntity", "The role with name %s cannot be found.", name)
}

func noSuchProfile(name string) *account.Error {
	return account.Errorf(http.StatusNotFound, "NoSuchEntity", "Instance Profile %s cannot be found.", name)
}

// validationError words a constraint failure as IAM's front end does.
func validationError(format string, args ...any) *account.Error {
	return account.BadRequest("ValidationError", format, args...)
}

func invalidInput(format string, args ...any) *account.Error {
	return account.BadRequest("InvalidInput", format, args...)
}

var (
	namePattern = regexp.MustCompile(`^[\w+=,.@-]+$`)
	// Path: "/" or "/" printable-ASCII "/"; PathPrefix: "/" then any ASCII but control.
	pathPattern   = regexp.MustCompile(`^(/|/[\x21-\x7e]+/)$`)
	prefixPattern = regexp.MustCompile(`^/[\x21-\x7f]*$`)
	tagPattern    = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)
)

// checkName validates a role or profile name of at most max characters; field is the
// camel-case member name IAM's messages quote ("roleName").
func checkName(field, v string, max int) *account.Error {
	if v == "" {
		return validationError("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", field)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return validationError("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", v, field, max)
	}
	if !namePattern.MatchString(v) {
		return validationError("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", v, field)
	}
	return nil
}

// normPath defaults an absent path to "/" and validates it.
func normPath(p string) (string, *account.Error) {
	if p == "" {
		return "/", nil
	}
	if len(p) > 512 {
		return "", validationError("1 validation error detected: Value '%s' at 'path' failed to satisfy constraint: Member must have length less than or equal to 512", p)
	}
	if !pathPattern.MatchString(p) {
		return "", validationError("The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	return p, nil
}

func checkPathPrefix(p string) *account.Error {
	if p == "" {
		return nil
	}
	if len(p) > 512 {
		return validationError("1 validation error detected: Value '%s' at 'pathPrefix' failed to satisfy constraint: Member must have length less than or equal to 512", p)
	}
	if !prefixPattern.MatchString(p) {
		return validationError("The specified value for pathPrefix is invalid. It must begin with / and contain only alphanumeric characters and/or / characters.")
	}
	return nil
}

// checkTags validates tags to add to a resource that has existing ones.
func checkTags(existing, add []Tag) *account.Error {
	seen := map[string]bool{}
	for _, t := range add {
		if t.Key == "" || utf8.RuneCountInString(t.Key) > 128 || !tagPattern.MatchString(t.Key) {
			return validationError("1 validation error detected: Value '%s' at 'tags.member.key' failed to satisfy constraint: Member must have length between 1 and 128 and satisfy regular expression pattern: [\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]+", t.Key)
		}
		if utf8.RuneCountInString(t.Value) > 256 || !tagPattern.MatchString(t.Value) {
			return validationError("1 validation error detected: Value '%s' at 'tags.member.value' failed to satisfy constraint: Member must have length less than or equal to 256 and satisfy regular expression pattern: [\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*", t.Value)
		}
		if seen[key(t.Key)] {
			return invalidInput("Duplicate tag keys found. Please note that Tag keys are case insensitive.")
		}
		seen[key(t.Key)] = true
	}
	merged := mergeTags(existing, add)
	if len(merged) > maxTagsPerResource {
		return account.Errorf(http.StatusConflict, "LimitExceeded", "Cannot exceed quota for TagsPerInstanceProfile: %d", maxTagsPerResource)
	}
	return nil
}

// mergeTags overwrites the values of keys already present (matched case-insensitively,
// keeping their place) and appends the rest.
func mergeTags(existing, add []Tag) []Tag {
	out := append([]Tag(nil), existing...)
	for _, t := range add {
		i := tagIndex(out, t.Key)
		if i >= 0 {
			out[i] = t
			continue
		}
		out = append(out, t)
	}
	return out
}

func tagIndex(tags []Tag, k string) int {
	for i, t := range tags {
		if strings.EqualFold(t.Key, k) {
			return i
		}
	}
	return -1
}

// checkPolicyDocument accepts what IAM parses: a JSON object with a Statement.
func checkPolicyDocument(doc string) *account.Error {
	if doc == "" {
		return validationError("1 validation error detected: Value null at 'assumeRolePolicyDocument' failed to satisfy constraint: Member must not be null")
	}
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(doc), &v) != nil {
		return account.BadRequest("MalformedPolicyDocument", "This policy contains invalid Json")
	}
	if _, ok := v["Statement"]; !ok {
		return account.BadRequest("MalformedPolicyDocument", "Missing required field Statement")
	}
	return nil
}

// sortedByName returns the values of m ordered by lower-cased name, as IAM lists them.
func sortedByName[T any](m map[string]*T) []*T {
	keys := account.SortedKeys(m)
	out := make([]*T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// underPath returns the values of m whose path starts with prefix ("" or "/": all), by
// name: what IAM's List calls with a PathPrefix answer.
func underPath[T any](m map[string]*T, prefix string, path func(*T) string) ([]*T, *account.Error) {
	if e := checkPathPrefix(prefix); e != nil {
		return nil, e
	}
	var out []*T
	for _, v := range sortedByName(m) {
		if strings.HasPrefix(path(v), prefix) {
			out = append(out, v)
		}
	}
	return out, nil
}
