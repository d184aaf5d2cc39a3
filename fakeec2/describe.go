package fakeec2

// describeSpec is the shape most Describe handlers share: filters over a record table,
// MaxResults/NextToken paging by Seq, and an optional ID list.
type describeSpec[T any] struct {
	attrs    attrTable[T]
	tags     func(T) []Tag
	min, max int    // MaxResults bounds (pageParams)
	idParam  string // "VpcId", "VolumeId", ...
	idSet    string // when set, IDs with MaxResults are InvalidParameterCombination (AWS names the set)
	seq      func(T) uint64
}

// describeReq is a decoded Describe request, checked before the store lock is taken.
type describeReq[T any] struct {
	spec describeSpec[T]
	pred func(T) bool
	page pageReq
	ids  []string
}

func parseDescribe[T any](c *call, d describeSpec[T]) (*describeReq[T], *APIError) {
	fs, err := c.q.filters()
	if err != nil {
		return nil, err
	}
	pred, err := compileFilters(fs, d.attrs, d.tags)
	if err != nil {
		return nil, err
	}
	p, err := pageParams(c.q, d.min, d.max)
	if err != nil {
		return nil, err
	}
	ids := c.q.strs(d.idParam)
	if d.idSet != "" && len(ids) > 0 && p.max > 0 {
		return nil, badRequest(CodeInvalidParameterCombination, "The parameter %s cannot be used with the parameter maxResults", d.idSet)
	}
	return &describeReq[T]{spec: d, pred: pred, page: p, ids: ids}, nil
}

// run answers one page: the named records (the first missing one fails with notFound's
// error) or all of them, sorted by Seq and filtered. Callers hold s.mu.
func (r *describeReq[T]) run(all map[string]T, notFound func(id string) *APIError) ([]T, string, *APIError) {
	var items []T
	for _, id := range r.ids {
		x, ok := all[id]
		if !ok {
			return nil, "", notFound(id)
		}
		items = append(items, x)
	}
	if len(r.ids) == 0 {
		for _, x := range all {
			items = append(items, x)
		}
	}
	bySeq(items, r.spec.seq)
	page, next := paginate(filterSlice(items, r.pred), r.spec.seq, r.page)
	return page, next, nil
}
