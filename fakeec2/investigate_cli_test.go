package fakeec2_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/karplab/karplab/cmd/karplab/karplabtest"
)

// TestInvestigateCLI drives the EBS and stop actions with both aws CLIs (side by side) and
// their waiters, against a server on the real clock with short delays (a fake clock would
// leave the waiters polling forever).
func TestInvestigateCLI(t *testing.T) {
	for _, cli := range karplabtest.AWSCLIs(t) {
		t.Run(cli.Name, func(t *testing.T) {
			t.Parallel() // each CLI on an account of its own: its finding commands count what it made
			url := newEnv(t, karplabtest.OnRealClock).url
			run := func(args ...string) map[string]any {
				t.Helper()
				out, stderr, err := cli.Run(t, url, "AKIAINVESTIGATOR", args...)
				if err != nil {
					t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				m := map[string]any{}
				if strings.TrimSpace(out) != "" {
					if err := json.Unmarshal([]byte(out), &m); err != nil {
						t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
					}
				}
				return m
			}
			fails := func(code string, args ...string) {
				t.Helper()
				_, stderr, err := cli.Run(t, url, "AKIAINVESTIGATOR", args...)
				if err == nil || !strings.Contains(stderr, "("+code+")") {
					t.Errorf("aws %s: want %s, got %v\n%s", strings.Join(args, " "), code, err, stderr)
				}
			}
			str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
			imgs := run("ec2", "describe-images", "--owners", "amazon", "--query", "{Images: Images[?Architecture=='x86_64'].ImageId}")
			ami := imgs["Images"].([]any)[0].(string)
			ri := run("ec2", "run-instances", "--image-id", ami, "--instance-type", "m6i.large", "--placement", "AvailabilityZone=eu-west-2a")
			iid := str(ri["Instances"].([]any)[0].(map[string]any), "InstanceId")
			run("ec2", "wait", "instance-running", "--instance-ids", iid)

			vol := run("ec2", "create-volume", "--availability-zone", "eu-west-2a", "--size", "20", "--volume-type", "gp3",
				"--tag-specifications", "ResourceType=volume,Tags=[{Key=Name,Value=cli},{Key=kubernetes.io/cluster/karplab,Value=owned}]")
			vid := str(vol, "VolumeId")
			if str(vol, "State") != "creating" {
				t.Errorf("create-volume: %v", vol)
			}
			run("ec2", "wait", "volume-available", "--volume-ids", vid)
			fails("InvalidParameterValue", "ec2", "create-volume", "--availability-zone", "eu-west-2a", "--size", "20000", "--volume-type", "gp2")
			att := run("ec2", "attach-volume", "--volume-id", vid, "--instance-id", iid, "--device", "/dev/sdf")
			if str(att, "State") != "attaching" {
				t.Errorf("attach-volume: %v", att)
			}
			run("ec2", "wait", "volume-in-use", "--volume-ids", vid)
			fails("VolumeInUse", "ec2", "delete-volume", "--volume-id", vid)
			snap := run("ec2", "create-snapshot", "--volume-id", vid, "--description", "cli",
				"--tag-specifications", "ResourceType=snapshot,Tags=[{Key=kubernetes.io/cluster/karplab,Value=owned}]")
			run("ec2", "wait", "snapshot-completed", "--snapshot-ids", str(snap, "SnapshotId"))
			ds := run("ec2", "describe-snapshots", "--owner-ids", "self")
			if n := len(ds["Snapshots"].([]any)); n < 1 {
				t.Errorf("describe-snapshots --owner-ids self: %v", ds)
			}
			run("ec2", "detach-volume", "--volume-id", vid)
			run("ec2", "wait", "volume-available", "--volume-ids", vid)
			// The orphaned-storage lab's finding commands.
			owned := "Name=tag:kubernetes.io/cluster/karplab,Values=owned"
			found := func(key, field, want string, args ...string) {
				t.Helper()
				var ids []string
				for _, item := range run(args...)[key].([]any) {
					ids = append(ids, str(item.(map[string]any), field))
				}
				if len(ids) != 1 || ids[0] != want {
					t.Errorf("aws %s: found %v, want [%s]", strings.Join(args, " "), ids, want)
				}
			}
			found("Volumes", "VolumeId", vid, "ec2", "describe-volumes", "--filters", owned, "Name=status,Values=available")
			found("Snapshots", "SnapshotId", str(snap, "SnapshotId"), "ec2", "describe-snapshots", "--owner-ids", "self", "--filters", owned)
			run("ec2", "delete-volume", "--volume-id", vid)
			run("ec2", "wait", "volume-deleted", "--volume-ids", vid)
			run("ec2", "delete-snapshot", "--snapshot-id", str(snap, "SnapshotId"))

			run("ec2", "stop-instances", "--instance-ids", iid)
			run("ec2", "wait", "instance-stopped", "--instance-ids", iid)
			run("ec2", "start-instances", "--instance-ids", iid)
			run("ec2", "wait", "instance-running", "--instance-ids", iid)
			co := run("ec2", "get-console-output", "--instance-id", iid, "--latest")
			if !strings.Contains(str(co, "Output"), "Linux version") {
				t.Errorf("get-console-output (the CLI decodes base64): %.200v", co)
			}
			for _, args := range [][]string{
				{"ec2", "describe-regions"}, {"ec2", "describe-account-attributes"}, {"ec2", "describe-key-pairs"},
				{"ec2", "describe-addresses"}, {"ec2", "describe-route-tables"}, {"ec2", "describe-fleets"},
				{"ec2", "describe-volumes-modifications"},
				{"ec2", "modify-instance-metadata-options", "--instance-id", iid, "--http-tokens", "required", "--http-put-response-hop-limit", "2"},
			} {
				run(args...)
			}
			eni := run("ec2", "create-network-interface", "--subnet-id", str(ri["Instances"].([]any)[0].(map[string]any), "SubnetId"))
			eid := str(eni["NetworkInterface"].(map[string]any), "NetworkInterfaceId")
			an := run("ec2", "attach-network-interface", "--network-interface-id", eid, "--instance-id", iid, "--device-index", "1")
			fails("InvalidNetworkInterface.InUse", "ec2", "delete-network-interface", "--network-interface-id", eid)
			run("ec2", "detach-network-interface", "--attachment-id", str(an, "AttachmentId"))
			run("ec2", "wait", "network-interface-available", "--network-interface-ids", eid)
			run("ec2", "create-tags", "--resources", eid, "--tags", "Key=cluster.k8s.amazonaws.com/name,Value=karplab")
			found("NetworkInterfaces", "NetworkInterfaceId", eid, "ec2", "describe-network-interfaces",
				"--filters", "Name=tag:cluster.k8s.amazonaws.com/name,Values=karplab", "Name=status,Values=available")
			run("ec2", "delete-network-interface", "--network-interface-id", eid)
			fails("InvalidInstanceType", "ec2", "describe-instance-types", "--instance-types", "m6i.large", "m9z.huge")
			run("ec2", "terminate-instances", "--instance-ids", iid)
		})
	}
}
