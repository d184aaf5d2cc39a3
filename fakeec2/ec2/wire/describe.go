package wire

import "github.com/karplab/karplab/fakeec2/ec2"

// Describe is the shape the Describe handlers share: filters over a record table,
// MaxResults/NextToken paging by Seq, and lists of IDs or names. Each knob's zero value
// is the common case.
type Describe[T any] struct {
	Attrs    AttrTable[T]
	Tags     func(T) []ec2.Tag
	Min, Max int  // MaxResults bounds (PageParams)
	NoPaging bool // the action takes no MaxResults/NextToken
	Seq      func(T) uint64
	// Compile replaces Attrs and Tags where a table is not enough (DescribeTags' resource
	// filters, DescribeCapacityReservations' names that never match).
	Compile func([]Filter) (func(T) bool, *Error)
	// Params reads the action's other parameters, after paging and before the lists, so
	// errors come in the order EC2 gives them.
	Params    func(*Query) *Error
	IDParam   string                        // "VpcId", "VolumeId", ...
	NameParam string                        // a second list, looked up with ByName ("GroupName")
	ByName    func(name string) (T, *Error) // called under the caller's store lock
	// WithMax, when set, refuses an ID or name list with MaxResults: InvalidParameterCombination
	// with this message.
	WithMax  string
	CheckIDs func(ids []string) *Error // every ID at once, before the lookups; under the lock
	Dedupe   bool                      // an ID named twice is answered once
	Keep     func(T) bool              // a selection besides the filters (Owner, IncludeAllInstances)
}

// SetWithMax is EC2's message for an ID list named set sent with MaxResults.
func SetWithMax(set string) string {
	return "The parameter " + set + " cannot be used with the parameter maxResults"
}

// NoneTable accepts the filter names but matches nothing: for records the lab never has.
func NoneTable[T any](names ...string) AttrTable[T] {
	t := AttrTable[T]{}
	for _, n := range names {
		t[n] = func(T) []string { return nil }
	}
	return t
}

// DescribeReq is a decoded Describe request, checked before the store lock is taken.
type DescribeReq[T any] struct {
	spec       Describe[T]
	pred       func(T) bool
	page       Page
	ids, names []string
}

// ParseDescribe decodes q's filters, paging, other parameters and ID and name lists, in
// the order EC2 checks them.
func ParseDescribe[T any](q *Query, d Describe[T]) (*DescribeReq[T], *Error) {
	fs, err := q.Filters()
	if err != nil {
		return nil, err
	}
	compile := d.Compile
	if compile == nil {
		compile = func(fs []Filter) (func(T) bool, *Error) { return CompileFilters(fs, d.Attrs, d.Tags) }
	}
	pred, err := compile(fs)
	if err != nil {
		return nil, err
	}
	r := &DescribeReq[T]{spec: d, pred: pred}
	if !d.NoPaging {
		if r.page, err = PageParams(q, d.Min, d.Max); err != nil {
			return nil, err
		}
	}
	if d.Params != nil {
		if err := d.Params(q); err != nil {
			return nil, err
		}
	}
	if d.IDParam != "" {
		r.ids = q.Strs(d.IDParam)
	}
	if d.NameParam != "" {
		r.names = q.Strs(d.NameParam)
	}
	if d.WithMax != "" && len(r.ids)+len(r.names) > 0 && r.page.Max > 0 {
		return nil, BadRequest(CodeInvalidParameterCombination, "%s", d.WithMax)
	}
	return r, nil
}

// Match is whether x passes the request's filters.
func (r *DescribeReq[T]) Match(x T) bool { return r.pred(x) }

// Run answers one page: the records named by the ID and name lists (the first unknown
// one fails, IDs with notFound's error) or all of them, sorted by Seq, kept and
// filtered. Callers hold their store's lock.
func (r *DescribeReq[T]) Run(all map[string]T, notFound func(id string) *Error) ([]T, string, *Error) {
	d := r.spec
	if d.CheckIDs != nil {
		if err := d.CheckIDs(r.ids); err != nil {
			return nil, "", err
		}
	}
	var items []T
	seen := map[string]bool{}
	for _, id := range r.ids {
		x, ok := all[id]
		if !ok {
			return nil, "", notFound(id)
		}
		if d.Dedupe && seen[id] {
			continue
		}
		seen[id] = true
		items = append(items, x)
	}
	for _, n := range r.names {
		x, err := d.ByName(n)
		if err != nil {
			return nil, "", err
		}
		items = append(items, x)
	}
	if len(r.ids)+len(r.names) == 0 {
		for _, x := range all {
			items = append(items, x)
		}
	}
	ec2.BySeq(items, d.Seq)
	page, next := r.List(items)
	return page, next, nil
}

// List answers one page of items already in answer order, their Seq set by the caller.
func (r *DescribeReq[T]) List(items []T) ([]T, string) {
	kept := items[:0:0]
	for _, x := range items {
		if (r.spec.Keep == nil || r.spec.Keep(x)) && r.pred(x) {
			kept = append(kept, x)
		}
	}
	return r.Cut(kept)
}

// Cut pages items that are already filtered.
func (r *DescribeReq[T]) Cut(items []T) ([]T, string) {
	if r.spec.NoPaging {
		return items, ""
	}
	return Paginate(items, r.spec.Seq, r.page)
}
