package ec2_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/fakeec2/ec2"
)

// A subnet hands out its addresses after the four AWS reserves, in turn: a freed address
// comes back only once the others have been handed out, and the last is never given.
func TestAllocIP(t *testing.T) {
	var st ec2.State
	st.Clear(true)
	sn := &ec2.Subnet{ID: "subnet-1", CIDR: "10.0.0.0/29"} // 8 addresses: .4, .5, .6 usable
	st.Subnets[sn.ID] = sn
	var got []string
	for range 3 {
		ip, _ := st.AllocIP(sn)
		got = append(got, ip)
	}
	if _, ok := st.AllocIP(sn); ok {
		t.Errorf("AllocIP on a full subnet: ok")
	}
	st.FreeIP(sn.ID, "10.0.0.5")
	if n := st.FreeIPCount(sn); n != 1 {
		t.Errorf("FreeIPCount = %d, want 1", n)
	}
	ip, _ := st.AllocIP(sn)
	got = append(got, ip)
	if diff := cmp.Diff([]string{"10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.5"}, got); diff != "" {
		t.Errorf("AllocIP (-want +got):\n%s", diff)
	}
}
