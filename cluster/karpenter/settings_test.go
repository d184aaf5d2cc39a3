package karpenter

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The settings the lab takes are exactly those Karpenter v1.15.0's core and provider read:
// every quoted upper-case name their options read from the environment, in the module cache.
func TestSettingsAreKarpentersOwn(t *testing.T) {
	var found []string
	env := regexp.MustCompile(`(?:WithDefault\w*|VarWithEnv)\([^)]*?"([A-Z][A-Z0-9_]+)"`)
	for _, mod := range []string{"sigs.k8s.io/karpenter", "github.com/aws/karpenter-provider-aws"} {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
		if err != nil {
			t.Fatalf("go list -m %s: %v", mod, err)
		}
		files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "pkg", "operator", "options", "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range env.FindAllStringSubmatch(string(b), -1) {
				found = append(found, m[1])
			}
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	if !slices.Equal(found, Settings) {
		t.Errorf("Karpenter's options read %v\nthe lab lists %v", found, Settings)
	}
}

func TestCheckSetting(t *testing.T) {
	tests := []struct{ kv, wantErr string }{
		{kv: "FEATURE_GATES=SpotToSpotConsolidation=true"},
		{kv: "BATCH_MAX_DURATION=20s"},
		{kv: "FEATURE_GATE=SpotToSpotConsolidation=true", wantErr: "Karpenter v1.15.0 reads no such setting"},
		{kv: "CLUSTER_NAME=prod", wantErr: "the lab sets it (the account's cluster: karplab start --cluster-name"},
		{kv: "LOG_LEVEL", wantErr: "write NAME=VALUE"},
		{kv: "LOG_LEVEL=", wantErr: "no value"},
		{kv: "LOG_LEVEL=verbose", wantErr: "debug, info or error"},
		{kv: "BATCH_IDLE_DURATION=2", wantErr: "not a duration"},
	}
	for _, tt := range tests {
		err := CheckSetting(tt.kv)
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("CheckSetting(%q) = %v, want %q", tt.kv, err, tt.wantErr)
		}
	}
}
