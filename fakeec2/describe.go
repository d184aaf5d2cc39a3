package fakeec2

import (
	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ec2/wire"
)

// describeSpec is the shape the Describe handlers share: filters over a record table,
// MaxResults/NextToken paging by Seq, and lists of IDs or names. Each knob's zero value
// is the common case.
type describeSpec[T any] struct {
	attrs    wire.AttrTable[T]
	tags     func(T) []ec2.Tag
	min, max int  // MaxResults bounds (wire.PageParams)
	noPaging bool // the action takes no MaxResults/NextToken
	seq      func(T) uint64
	// compile replaces attrs and tags where a table is not enough (DescribeTags' resource
	// filters, DescribeCapacityReservations' names that never match).
	compile func([]wire.Filter) (func(T) bool, *wire.Error)
	// params reads the action's other parameters, after paging and before the lists, so
	// errors come in the order EC2 gives them.
	params    func(*wire.Query) *wire.Error
	idParam   string                             // "VpcId", "VolumeId", ...
	nameParam string                             // a second list, looked up with byName ("GroupName")
	byName    func(name string) (T, *wire.Error) // called under s.mu
	// withMax, when set, refuses an ID or name list with MaxResults: InvalidParameterCombination
	// with this message.
	withMax  string
	checkIDs func(ids []string) *wire.Error // every ID at once, before the lookups; under s.mu
	dedupe   bool                           // an ID named twice is answered once
	keep     func(T) bool                   // a selection besides the filters (Owner, IncludeAllInstances)
}

// setWithMax is EC2's message for an ID list named set sent with MaxResults.
func setWithMax(set string) string {
	return "The parameter " + set + " cannot be used with the parameter maxResults"
}

// noneTable accepts the filter names but matches nothing: for records the lab never has.
func noneTable[T any](names ...string) wire.AttrTable[T] {
	t := wire.AttrTable[T]{}
	for _, n := range names {
		t[n] = func(T) []string { return nil }
	}
	return t
}

// describeReq is a decoded Describe request, checked before the store lock is taken.
type describeReq[T any] struct {
	spec       describeSpec[T]
	pred       func(T) bool
	page       wire.Page
	ids, names []string
}

func parseDescribe[T any](c *call, d describeSpec[T]) (*describeReq[T], *wire.Error) {
	fs, err := c.q.Filters()
	if err != nil {
		return nil, err
	}
	compile := d.compile
	if compile == nil {
		compile = func(fs []wire.Filter) (func(T) bool, *wire.Error) { return wire.CompileFilters(fs, d.attrs, d.tags) }
	}
	pred, err := compile(fs)
	if err != nil {
		return nil, err
	}
	r := &describeReq[T]{spec: d, pred: pred}
	if !d.noPaging {
		if r.page, err = wire.PageParams(c.q, d.min, d.max); err != nil {
			return nil, err
		}
	}
	if d.params != nil {
		if err := d.params(c.q); err != nil {
			return nil, err
		}
	}
	if d.idParam != "" {
		r.ids = c.q.Strs(d.idParam)
	}
	if d.nameParam != "" {
		r.names = c.q.Strs(d.nameParam)
	}
	if d.withMax != "" && len(r.ids)+len(r.names) > 0 && r.page.Max > 0 {
		return nil, wire.BadRequest(wire.CodeInvalidParameterCombination, "%s", d.withMax)
	}
	return r, nil
}

// run answers one page: the records named by the ID and name lists (the first unknown
// one fails, IDs with notFound's error) or all of them, sorted by Seq, kept and
// filtered. Callers hold s.mu.
func (r *describeReq[T]) run(all map[string]T, notFound func(id string) *wire.Error) ([]T, string, *wire.Error) {
	d := r.spec
	if d.checkIDs != nil {
		if err := d.checkIDs(r.ids); err != nil {
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
		if d.dedupe && seen[id] {
			continue
		}
		seen[id] = true
		items = append(items, x)
	}
	for _, n := range r.names {
		x, err := d.byName(n)
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
	ec2.BySeq(items, d.seq)
	page, next := r.list(items)
	return page, next, nil
}

// list answers one page of items already in answer order, their Seq set by the caller.
func (r *describeReq[T]) list(items []T) ([]T, string) {
	pred := r.pred
	if keep := r.spec.keep; keep != nil {
		pred = func(x T) bool { return keep(x) && r.pred(x) }
	}
	return r.cut(filterSlice(items, pred))
}

// cut pages items that are already filtered.
func (r *describeReq[T]) cut(items []T) ([]T, string) {
	if r.spec.noPaging {
		return items, ""
	}
	return wire.Paginate(items, r.spec.seq, r.page)
}
