package fakeec2_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// python3WithBoto3 is a python3 that imports boto3 (the pyenv Python carries it).
func python3WithBoto3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err == nil && exec.Command(p, "-c", "import boto3").Run() == nil {
		return p
	}
	karplabtest.RequireClient(t, "python3 with boto3 (python3 -m pip install boto3)")
	return ""
}

// boto3Env is the environment a boto3 script runs in against the emulator at url (EC2_URL):
// the machine's own, less its AWS_ settings, with an empty home, so no profile or endpoint of
// the machine's leaks in.
func boto3Env(home, url string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, "EC2_URL="+url, "HOME="+home,
		"AWS_CONFIG_FILE="+filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"))
}

// TestBoto3OrphanSweep runs the orphaned-storage lab's sweep through boto3, on the real
// clock with short delays: its waiters, paginators and ClientError codes are boto3's own.
func TestBoto3OrphanSweep(t *testing.T) {
	py := python3WithBoto3(t)
	url := newEnv(t, karplabtest.OnRealClock).url

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "testdata/boto3_orphans.py")
	cmd.Env = boto3Env(t.TempDir(), url)
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("boto3 sweep: %v\n%s", err, stderr)
	}
	var got struct {
		DeleteInUse     string   `json:"delete_in_use"`
		AttachOtherZone string   `json:"attach_other_zone"`
		DeleteENIInUse  string   `json:"delete_eni_in_use"`
		InUse           []string `json:"in_use"`
		Snapshots       []string `json:"snapshots"`
		Available       []string `json:"available"`
		ENIs            []string `json:"enis"`
		ENIID           string   `json:"eni_id"`
		VolumeID        string   `json:"volume_id"`
		SnapshotID      string   `json:"snapshot_id"`
		VolumeGone      string   `json:"volume_gone"`
		SnapshotGone    string   `json:"snapshot_gone"`
		UnknownType     string   `json:"unknown_type"`
		Regions         int      `json:"regions"`
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	codes := map[string]string{"delete_volume in use": got.DeleteInUse, "attach across zones": got.AttachOtherZone,
		"delete_network_interface in use": got.DeleteENIInUse, "describe_volumes deleted": got.VolumeGone,
		"describe_snapshots deleted": got.SnapshotGone, "describe_instance_types unknown": got.UnknownType}
	want := map[string]string{"delete_volume in use": "VolumeInUse", "attach across zones": "InvalidVolume.ZoneMismatch",
		"delete_network_interface in use": "InvalidNetworkInterface.InUse", "describe_volumes deleted": "InvalidVolume.NotFound",
		"describe_snapshots deleted": "InvalidSnapshot.NotFound", "describe_instance_types unknown": "InvalidInstanceType"}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("error codes (-want +got):\n%s", diff)
	}
	// The root volume (tagged by the launch) and the data volume are in use; once detached,
	// only the data volume is available; the snapshot and the detached interface are found.
	if len(got.InUse) != 2 || !slices.Contains(got.InUse, got.VolumeID) {
		t.Errorf("in-use volumes %v, want the root volume and %s", got.InUse, got.VolumeID)
	}
	if !cmp.Equal(got.Available, []string{got.VolumeID}) || !cmp.Equal(got.Snapshots, []string{got.SnapshotID}) || !cmp.Equal(got.ENIs, []string{got.ENIID}) {
		t.Errorf("found available %v, snapshots %v, interfaces %v; want [%s] [%s] [%s]", got.Available, got.Snapshots, got.ENIs, got.VolumeID, got.SnapshotID, got.ENIID)
	}
	if got.Regions == 0 {
		t.Error("describe_regions listed no region")
	}
}
