package wire

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// AttrTable maps a Describe call's filter names to the values a record has for them.
type AttrTable[T any] map[string]func(T) []string

// CompileFilters checks the filter names against table (tag:KEY, tag-key and tag-value
// are always known when tagsOf is set) and returns the predicate: filters AND, values OR,
// values may use the * and ? wildcards.
func CompileFilters[T any](fs []Filter, table AttrTable[T], tagsOf func(T) []ec2.Tag) (func(T) bool, *Error) {
	type compiled struct {
		values func(T) []string
		pats   []string
	}
	var cs []compiled
	for _, f := range fs {
		var get func(T) []string
		switch {
		case tagsOf != nil && strings.HasPrefix(f.Name, "tag:"):
			key := strings.TrimPrefix(f.Name, "tag:")
			get = func(r T) []string {
				if v, ok := ec2.TagValue(tagsOf(r), key); ok {
					return []string{v}
				}
				return nil
			}
		case tagsOf != nil && f.Name == "tag-key":
			get = func(r T) []string {
				tags := tagsOf(r)
				out := make([]string, len(tags))
				for i, t := range tags {
					out[i] = t.Key
				}
				return out
			}
		case tagsOf != nil && f.Name == "tag-value":
			get = func(r T) []string {
				tags := tagsOf(r)
				out := make([]string, len(tags))
				for i, t := range tags {
					out[i] = t.Value
				}
				return out
			}
		default:
			get = table[f.Name]
		}
		if get == nil {
			return nil, InvalidValue("The filter '%s' is invalid", f.Name)
		}
		if len(f.Values) == 0 {
			return nil, InvalidValue("The filter '%s' requires at least one value", f.Name)
		}
		cs = append(cs, compiled{values: get, pats: f.Values})
	}
	return func(r T) bool {
		for _, c := range cs {
			if !anyMatch(c.pats, c.values(r)) {
				return false
			}
		}
		return true
	}, nil
}

func anyMatch(pats, vals []string) bool {
	for _, v := range vals {
		for _, p := range pats {
			if WildMatch(p, v) {
				return true
			}
		}
	}
	return false
}

// WildMatch matches s against an EC2 filter pattern: * any run, ? one character.
func WildMatch(p, s string) bool {
	if !strings.ContainsAny(p, "*?") {
		return p == s
	}
	// Iterative matcher with backtracking to the last star.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// One is the filter values of an attribute that may be unset: none for "".
func One(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// Page is the page a Describe call asks for.
type Page struct {
	Max   int    // 0: everything
	After uint64 // from NextToken
}

// PageParams reads MaxResults/NextToken. As on EC2, a MaxResults below the action's
// minimum is refused and one above its page size is capped to it (karpenter asks
// DescribeSpotPriceHistory for 2000, the aws CLI v1 DescribeVolumes for 1000).
func PageParams(q *Query, min, max int) (Page, *Error) {
	var p Page
	n, ok, err := q.Int("MaxResults")
	if err != nil {
		return p, err
	}
	if ok {
		if n < int64(min) {
			return p, InvalidValue("Value ( %d ) for parameter maxResults is invalid. Expecting a value greater than %d.", n, min)
		}
		p.Max = int(min64(n, int64(max)))
	}
	if tok := q.Str("NextToken"); tok != "" {
		b, derr := base64.RawURLEncoding.DecodeString(tok)
		seq, perr := strconv.ParseUint(strings.TrimPrefix(string(b), "seq:"), 10, 64)
		if derr != nil || perr != nil || !strings.HasPrefix(string(b), "seq:") {
			return p, BadRequest(CodeInvalidPaginationToken, "Invalid pagination token: %s", tok)
		}
		p.After = seq
	}
	return p, nil
}

// Paginate cuts items (sorted by seq) to one page and returns the next token ("" at the end).
func Paginate[T any](items []T, seq func(T) uint64, p Page) ([]T, string) {
	start := 0
	if p.After > 0 {
		for start < len(items) && seq(items[start]) <= p.After {
			start++
		}
	}
	items = items[start:]
	if p.Max == 0 || len(items) <= p.Max {
		return items, ""
	}
	last := seq(items[p.Max-1])
	return items[:p.Max], base64.RawURLEncoding.EncodeToString([]byte("seq:" + strconv.FormatUint(last, 10)))
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}
