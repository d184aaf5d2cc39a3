package evidence

import "time"

type claimView struct {
	Row                                                                    *NodeClaimRow
	Created, Launched, Registered, Initialized, DeletionRequested, Deleted stamp
	Pods                                                                   int
}

// addClaims fills the NodeClaims table, each with how many pods ran on it.
func (p *page) addClaims(ev *Evidence, st func(*time.Time) stamp) {
	claimPods := map[string]int{}
	for i := range ev.Pods {
		if c := ev.Pods[i].NodeClaim; c != "" {
			claimPods[c]++
		}
	}
	for i := range ev.NodeClaims {
		r := &ev.NodeClaims[i]
		created := r.Created
		p.Claims = append(p.Claims, claimView{Row: r, Created: st(&created), Launched: st(r.Launched),
			Registered: st(r.Registered), Initialized: st(r.Initialized),
			DeletionRequested: st(r.DeletionRequested), Deleted: st(r.Deleted), Pods: claimPods[r.Name]})
	}
}
