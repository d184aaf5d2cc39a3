package ssm

import (
	"strings"

	"github.com/karplab/karplab/fakeec2/account"
)

// filter is a ParameterStringFilter in model terms.
type filter struct {
	Key, Option string
	Values      []string
}

// Filter keys each action accepts.
var (
	byPathKeys   = []string{"Type", "KeyId", "Label", "DataType"}
	describeKeys = []string{"Name", "Type", "KeyId", "Path", "Tier", "DataType"}
)

// checkFilters rejects keys the action does not accept and options the key does not take,
// and fills in the default option.
func checkFilters(fs []filter, keys []string) *account.Error {
	for i := range fs {
		f := &fs[i]
		// "tag:KEY" goes where "Name" does: DescribeParameters takes both, ByPath neither.
		if !contains(keys, f.Key) && !(strings.HasPrefix(f.Key, "tag:") && contains(keys, "Name")) {
			return account.BadRequest("InvalidFilterKey", "The following filter key is not valid: %s. Valid filter keys include: [%s].",
				f.Key, strings.Join(keys, ", "))
		}
		ok := false
		switch {
		case f.Key == "Path":
			f.Option = or(f.Option, "OneLevel")
			ok = f.Option == "OneLevel" || f.Option == "Recursive"
		case f.Key == "Name" || strings.HasPrefix(f.Key, "tag:"):
			f.Option = or(f.Option, "Equals")
			ok = f.Option == "Equals" || f.Option == "BeginsWith" || f.Option == "Contains"
		default:
			f.Option = or(f.Option, "Equals")
			ok = f.Option == "Equals" || f.Option == "BeginsWith"
		}
		if !ok {
			return account.BadRequest("InvalidFilterOption",
				"The filter option is not valid. Valid options are Equals and BeginsWith. For Path filter, valid options are Recursive and OneLevel.")
		}
		if len(f.Values) == 0 && !strings.HasPrefix(f.Key, "tag:") {
			return account.BadRequest("InvalidFilterValue", "The filter value is not valid. Verify the value and try again.")
		}
	}
	return nil
}

// pick returns the version of p the filters select (the labelled one under a Label
// filter, else the current one), or nil when they exclude p.
func pick(p *param, fs []filter) *version {
	v := p.current()
	for _, f := range fs {
		if f.Key != "Label" {
			continue
		}
		v = nil
		for _, cand := range p.Versions {
			for _, l := range cand.Labels {
				if matchAny(l, f) {
					v = cand
				}
			}
		}
		if v == nil {
			return nil
		}
	}
	for _, f := range fs {
		if !matchOne(p, v, f) {
			return nil
		}
	}
	return v
}

func matchOne(p *param, v *version, f filter) bool {
	switch f.Key {
	case "Label":
		return true // applied by pick
	case "Name":
		return matchAny(p.Name, f)
	case "Type":
		return matchAny(v.Type, f)
	case "KeyId":
		return v.KeyID != "" && matchAny(v.KeyID, f)
	case "Tier":
		return matchAny(v.Tier, f)
	case "DataType":
		return matchAny(v.DataType, f)
	case "Path":
		for _, path := range f.Values {
			rest, ok := strings.CutPrefix(p.Name, strings.TrimSuffix(path, "/")+"/")
			if ok && rest != "" && (f.Option == "Recursive" || !strings.Contains(rest, "/")) {
				return true
			}
		}
		return false
	}
	key := strings.TrimPrefix(f.Key, "tag:")
	for _, t := range p.Tags {
		if t.Key == key && (len(f.Values) == 0 || matchAny(t.Value, f)) {
			return true
		}
	}
	return false
}

func matchAny(s string, f filter) bool {
	for _, want := range f.Values {
		switch f.Option {
		case "BeginsWith":
			if strings.HasPrefix(s, want) {
				return true
			}
		case "Contains":
			if strings.Contains(s, want) {
				return true
			}
		default:
			if s == want {
				return true
			}
		}
	}
	return false
}
