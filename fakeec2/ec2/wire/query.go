package wire

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// Limits that keep a hostile request from making the parser allocate without bound.
const (
	maxQueryKeys  = 20000
	maxQueryDepth = 12
	maxListIndex  = 100000
	maxAuditValue = 4096
)

// Query is a decoded EC2 Query-protocol request: the form's dotted keys
// (InstanceId.1, Filter.2.Value.1, LaunchTemplateConfigs.1.Overrides.3.InstanceType) as a
// tree. Lists are children named by their 1-based index.
type Query struct {
	val  string
	set  bool
	kids map[string]*Query
}

// ParseQueryString decodes a form-encoded request body.
func ParseQueryString(body string) (*Query, error) {
	form, err := url.ParseQuery(body)
	if err != nil {
		return nil, fmt.Errorf("decoding form: %w", err)
	}
	return ParseQuery(form)
}

// ParseQuery builds the tree from form values. A key whose segments are empty, too deep or
// an out-of-range list index is rejected, as is a key that is both a value and a parent.
func ParseQuery(form url.Values) (*Query, error) {
	if len(form) > maxQueryKeys {
		return nil, fmt.Errorf("too many parameters (%d)", len(form))
	}
	root := &Query{}
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic errors
	for _, k := range keys {
		vals := form[k]
		if len(vals) == 0 {
			continue
		}
		segs := strings.Split(k, ".")
		if len(segs) > maxQueryDepth {
			return nil, fmt.Errorf("parameter %q is nested too deeply", k)
		}
		n := root
		for _, s := range segs {
			if s == "" {
				return nil, fmt.Errorf("parameter %q has an empty name segment", k)
			}
			if isDigits(s) {
				i, err := strconv.Atoi(s)
				if err != nil || i < 1 || i > maxListIndex || s[0] == '0' {
					return nil, fmt.Errorf("parameter %q has an invalid list index %q", k, s)
				}
			}
			if n.kids == nil {
				n.kids = map[string]*Query{}
			}
			c := n.kids[s]
			if c == nil {
				c = &Query{}
				n.kids[s] = c
			}
			n = c
		}
		n.val, n.set = vals[0], true
	}
	if err := root.checkShape(""); err != nil {
		return nil, err
	}
	return root, nil
}

func (q *Query) checkShape(path string) error {
	if q.set && len(q.kids) > 0 && path != "" {
		return fmt.Errorf("parameter %q is both a value and a structure", path)
	}
	for k, c := range q.kids {
		p := k
		if path != "" {
			p = path + "." + k
		}
		if err := c.checkShape(p); err != nil {
			return err
		}
	}
	return nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Get follows a dotted path; nil when absent.
func (q *Query) Get(path string) *Query {
	if q == nil {
		return nil
	}
	n := q
	for _, s := range strings.Split(path, ".") {
		if n.kids == nil {
			return nil
		}
		n = n.kids[s]
		if n == nil {
			return nil
		}
	}
	return n
}

// Has reports whether a value or structure exists at path.
func (q *Query) Has(path string) bool { return q.Get(path) != nil }

// Str is the value at path, "" when absent.
func (q *Query) Str(path string) string {
	if n := q.Get(path); n != nil {
		return n.val
	}
	return ""
}

// List returns the members path.1, path.2, ... in index order (gaps allowed, as AWS does).
func (q *Query) List(path string) []*Query {
	n := q
	if path != "" {
		n = q.Get(path)
	}
	if n == nil || len(n.kids) == 0 {
		return nil
	}
	idx := make([]int, 0, len(n.kids))
	for k := range n.kids {
		if isDigits(k) {
			i, _ := strconv.Atoi(k)
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	out := make([]*Query, 0, len(idx))
	for _, i := range idx {
		out = append(out, n.kids[strconv.Itoa(i)])
	}
	return out
}

// Strs returns the string members of the list at path.
func (q *Query) Strs(path string) []string {
	l := q.List(path)
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, m := range l {
		out = append(out, m.val)
	}
	return out
}

// Bool parses the value at path; absent is (false, false).
func (q *Query) Bool(path string) (v bool, present bool, err *Error) {
	n := q.Get(path)
	if n == nil {
		return false, false, nil
	}
	switch strings.ToLower(n.val) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, true, InvalidValue("Value (%s) for parameter %s is invalid. Expected a boolean.", n.val, path)
}

// Int parses the value at path; absent is (0, false).
func (q *Query) Int(path string) (v int64, present bool, err *Error) {
	n := q.Get(path)
	if n == nil {
		return 0, false, nil
	}
	i, perr := strconv.ParseInt(strings.TrimSpace(n.val), 10, 64)
	if perr != nil {
		return 0, true, InvalidValue("Value (%s) for parameter %s is invalid. Expected an integer.", n.val, path)
	}
	return i, true, nil
}

// Float parses the value at path; absent is (0, false).
func (q *Query) Float(path string) (v float64, present bool, err *Error) {
	n := q.Get(path)
	if n == nil {
		return 0, false, nil
	}
	f, perr := strconv.ParseFloat(strings.TrimSpace(n.val), 64)
	if perr != nil {
		return 0, true, InvalidValue("Value (%s) for parameter %s is invalid. Expected a number.", n.val, path)
	}
	return f, true, nil
}

// Time parses an ISO 8601 value at path.
func (q *Query) Time(path string) (time.Time, bool, *Error) {
	n := q.Get(path)
	if n == nil {
		return time.Time{}, false, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z", "2006-01-02"} {
		if t, err := time.Parse(layout, n.val); err == nil {
			return t, true, nil
		}
	}
	return time.Time{}, true, InvalidValue("Value (%s) for parameter %s is invalid. Expected a timestamp.", n.val, path)
}

// Flatten returns the request's parameters as dotted key -> value, for the audit trail.
// Long values (user data) are cut so the trail stays small.
func (q *Query) Flatten() map[string]string {
	out := map[string]string{}
	var walk func(prefix string, n *Query)
	walk = func(prefix string, n *Query) {
		if n.set && prefix != "" {
			v := n.val
			if len(v) > maxAuditValue {
				v = v[:maxAuditValue] + "...(truncated)"
			}
			out[prefix] = v
		}
		for k, c := range n.kids {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, c)
		}
	}
	walk("", q)
	delete(out, "Action")
	delete(out, "Version")
	return out
}

// Filter is one Filter.N of a Describe call.
type Filter struct {
	Name   string
	Values []string
}

// Filters decodes Filter.N.Name / Filter.N.Value.M.
func (q *Query) Filters() ([]Filter, *Error) {
	var out []Filter
	for _, f := range q.List("Filter") {
		name := f.Str("Name")
		if name == "" {
			return nil, Missing("Filter.Name")
		}
		out = append(out, Filter{Name: name, Values: f.Strs("Value")})
	}
	return out, nil
}

// TagSpecs decodes the list path.N.ResourceType / path.N.Tag.M.
func (q *Query) TagSpecs(path string) ([]ec2.TagSpec, *Error) {
	var out []ec2.TagSpec
	for _, s := range q.List(path) {
		rt := s.Str("ResourceType")
		if rt == "" {
			return nil, Missing(path + ".ResourceType")
		}
		tags, err := s.Tags("Tag")
		if err != nil {
			return nil, err
		}
		out = append(out, ec2.TagSpec{ResourceType: rt, Tags: tags})
	}
	return out, nil
}

// Tags decodes Tag.N.Key / Tag.N.Value.
func (q *Query) Tags(path string) ([]ec2.Tag, *Error) {
	var out []ec2.Tag
	for _, t := range q.List(path) {
		if !t.Has("Key") {
			return nil, Missing("Tag.Key")
		}
		out = append(out, ec2.Tag{Key: t.Str("Key"), Value: t.Str("Value")})
	}
	return out, nil
}

// DecodeUserData decodes base64 user data (the SDK and the CLI send it encoded).
func DecodeUserData(s string) string {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return string(b)
	}
	return s
}
