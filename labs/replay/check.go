package replay

import (
	"fmt"
	"strings"

	"github.com/karplab/karplab/fakeec2"
)

// Check is Validate and then everything a start would find later: the cluster's name (given,
// else the bundle's) and the account the bundle imports, tried against a new account of the
// region (in memory, as the lab's will be made). Every problem is among the report's gaps,
// so none shows up after a lab has started; the import is what a start would bring.
func Check(b *Bundle, cat Catalog, given Given) (Report, string, fakeec2.Import) {
	r := Validate(b, cat, given)
	name := given.ClusterName
	if name == "" {
		var err error
		if name, err = ClusterName(b); err != nil {
			r.Gaps = append(r.Gaps, err.Error())
		}
	}
	if r.Region == "" || name == "" {
		return r, name, fakeec2.Import{}
	}
	imp, err := AccountImport(b, name)
	if err != nil {
		r.Gaps = append(r.Gaps, strings.Split(err.Error(), "\n")...) // one line a node
		return r, name, imp
	}
	srv, err := fakeec2.New(fakeec2.Options{Region: r.Region, Zones: given.Zones})
	if err != nil {
		r.Gaps = append(r.Gaps, fmt.Sprintf("the lab's account in %s: %v", r.Region, err))
		return r, name, imp
	}
	defer srv.Close()
	for _, p := range srv.CheckImport(imp.Without(srv.Has)) {
		r.Gaps = append(r.Gaps, "the account: "+p)
	}
	return r, name, imp
}
