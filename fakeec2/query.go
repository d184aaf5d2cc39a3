package fakeec2

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

// query is a decoded EC2 Query-protocol request: the form's dotted keys
// (InstanceId.1, Filter.2.Value.1, LaunchTemplateConfigs.1.Overrides.3.InstanceType) as a
// tree. Lists are children named by their 1-based index.
type query struct {
	val  string
	set  bool
	kids map[string]*query
}

// parseQueryString decodes a form-encoded request body.
func parseQueryString(body string) (*query, error) {
	form, err := url.ParseQuery(body)
	if err != nil {
		return nil, fmt.Errorf("decoding form: %w", err)
	}
	return parseQuery(form)
}

// parseQuery builds the tree from form values. A key whose segments are empty, too deep or
// an out-of-range list index is rejected, as is a key that is both a value and a parent.
func parseQuery(form url.Values) (*query, error) {
	if len(form) > maxQueryKeys {
		return nil, fmt.Errorf("too many parameters (%d)", len(form))
	}
	root := &query{}
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
				n.kids = map[string]*query{}
			}
			c := n.kids[s]
			if c == nil {
				c = &query{}
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

func (q *query) checkShape(path string) error {
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

// get follows a dotted path; nil when absent.
func (q *query) get(path string) *query {
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

// has reports whether a value or structure exists at path.
func (q *query) has(path string) bool { return q.get(path) != nil }

// str is the value at path, "" when absent.
func (q *query) str(path string) string {
	if n := q.get(path); n != nil {
		return n.val
	}
	return ""
}

// list returns the members path.1, path.2, ... in index order (gaps allowed, as AWS does).
func (q *query) list(path string) []*query {
	n := q
	if path != "" {
		n = q.get(path)
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
	out := make([]*query, 0, len(idx))
	for _, i := range idx {
		out = append(out, n.kids[strconv.Itoa(i)])
	}
	return out
}

// strs returns the string members of the list at path.
func (q *query) strs(path string) []string {
	l := q.list(path)
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, m := range l {
		out = append(out, m.val)
	}
	return out
}

// boolean parses the value at path; absent is (false, false).
func (q *query) boolean(path string) (v bool, present bool, err *APIError) {
	n := q.get(path)
	if n == nil {
		return false, false, nil
	}
	switch strings.ToLower(n.val) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, true, errInvalidValue("Value (%s) for parameter %s is invalid. Expected a boolean.", n.val, path)
}

// integer parses the value at path; absent is (0, false).
func (q *query) integer(path string) (v int64, present bool, err *APIError) {
	n := q.get(path)
	if n == nil {
		return 0, false, nil
	}
	i, perr := strconv.ParseInt(strings.TrimSpace(n.val), 10, 64)
	if perr != nil {
		return 0, true, errInvalidValue("Value (%s) for parameter %s is invalid. Expected an integer.", n.val, path)
	}
	return i, true, nil
}

// float parses the value at path; absent is (0, false).
func (q *query) float(path string) (v float64, present bool, err *APIError) {
	n := q.get(path)
	if n == nil {
		return 0, false, nil
	}
	f, perr := strconv.ParseFloat(strings.TrimSpace(n.val), 64)
	if perr != nil {
		return 0, true, errInvalidValue("Value (%s) for parameter %s is invalid. Expected a number.", n.val, path)
	}
	return f, true, nil
}

// timestamp parses an ISO 8601 value at path.
func (q *query) timestamp(path string) (time.Time, bool, *APIError) {
	n := q.get(path)
	if n == nil {
		return time.Time{}, false, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z", "2006-01-02"} {
		if t, err := time.Parse(layout, n.val); err == nil {
			return t, true, nil
		}
	}
	return time.Time{}, true, errInvalidValue("Value (%s) for parameter %s is invalid. Expected a timestamp.", n.val, path)
}

// flatten returns the request's parameters as dotted key -> value, for the audit trail.
// Long values (user data) are cut so the trail stays small.
func (q *query) flatten() map[string]string {
	out := map[string]string{}
	var walk func(prefix string, n *query)
	walk = func(prefix string, n *query) {
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

// filter is one Filter.N of a Describe call.
type filter struct {
	Name   string
	Values []string
}

// filters decodes Filter.N.Name / Filter.N.Value.M.
func (q *query) filters() ([]filter, *APIError) {
	var out []filter
	for _, f := range q.list("Filter") {
		name := f.str("Name")
		if name == "" {
			return nil, errMissing("Filter.Name")
		}
		out = append(out, filter{Name: name, Values: f.strs("Value")})
	}
	return out, nil
}

func (q *query) tagSpecs(path string) ([]ec2.TagSpec, *APIError) {
	var out []ec2.TagSpec
	for _, s := range q.list(path) {
		rt := s.str("ResourceType")
		if rt == "" {
			return nil, errMissing(path + ".ResourceType")
		}
		tags, err := s.tags("Tag")
		if err != nil {
			return nil, err
		}
		out = append(out, ec2.TagSpec{ResourceType: rt, Tags: tags})
	}
	return out, nil
}

// tags decodes Tag.N.Key / Tag.N.Value.
func (q *query) tags(path string) ([]ec2.Tag, *APIError) {
	var out []ec2.Tag
	for _, t := range q.list(path) {
		if !t.has("Key") {
			return nil, errMissing("Tag.Key")
		}
		out = append(out, ec2.Tag{Key: t.str("Key"), Value: t.str("Value")})
	}
	return out, nil
}

// userData decodes base64 user data (the SDK and the CLI send it encoded).
func decodeUserData(s string) string {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return string(b)
	}
	return s
}
