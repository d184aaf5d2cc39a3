package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// karplab replay refuses what it cannot bring in, exit 2, naming each problem, and starts
// nothing: a bundle of Karpenter v1beta1 objects in a region the lab has no data for, a
// corrupt bundle, a home that holds a lab already.
func TestReplayRefusesWhatItCannotBringIn(t *testing.T) {
	bundle := func(t *testing.T, yaml string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const v1beta1 = `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: default}
---
apiVersion: v1
kind: Node
metadata:
  name: ip-10-1-2-3.ec2.internal
  labels: {topology.kubernetes.io/region: mars-east-1}
spec: {providerID: "aws:///mars-east-1a/i-0123456789abcdef0"}
`
	for _, tc := range []struct {
		name      string
		bundle    string
		labInHome bool
		want      []string
	}{
		{name: "v1beta1 in a region the lab lacks", bundle: v1beta1, want: []string{"nothing started (3 problems)", "NodePool default is karpenter.sh/v1beta1",
			"region mars-east-1: the lab has no data for it", "name it with --cluster-name"}},
		{name: "no region anywhere", bundle: "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {providerID: \"aws:///us-east-1a/i-0123456789abcdef0\"}\n",
			want: []string{"nothing started (2 problems)", "no region anywhere", "name it with --region", "--cluster-name"}},
		{name: "corrupt", bundle: "kind: [unclosed\n", want: []string{"cluster.yaml"}},
		{name: "a home with a lab", bundle: "", labInHome: true, want: []string{"holds a lab already", "KARPLAB_HOME"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			t.Setenv("KARPLAB_HOME", home)
			if tc.labInHome {
				if err := os.MkdirAll(filepath.Join(home, "ec2"), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, stderr strings.Builder
			code := Run([]string{"karplab", "replay", bundle(t, tc.bundle)}, strings.NewReader(""), &stdout, &stderr)
			if code != ExitError {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitError, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			entries, _ := os.ReadDir(home)
			if !tc.labInHome && len(entries) > 0 || tc.labInHome && len(entries) != 1 {
				t.Errorf("the home after a refused replay holds %v", entries)
			}
		})
	}
}
