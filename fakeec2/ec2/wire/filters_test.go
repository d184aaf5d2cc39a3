package wire

import "testing"

func TestWildMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"ziba-*", "ziba-general", true}, {"ziba-*", "batch", false}, {"*", "", true}, {"?7g.*", "c7g.large", true},
		{"?7g.*", "c7i.large", false}, {"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false}, {"exact", "exact", true},
		{"amazon-eks-node-al2023-x86_64-standard-1.37-*", "amazon-eks-node-al2023-x86_64-standard-1.37-v20261101", true},
	}
	for _, tt := range tests {
		if got := WildMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("wildMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}
