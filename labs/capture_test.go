package labs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/labs/replay"
)

// karplab capture against a cluster the lab drives (its happy path solved): read-only, a
// bundle in kwok's export format that the replay side reads back, nothing a capture must not
// take, and each Karpenter kind with its status. A user who may not list is refused in one
// line naming the resource, and nothing is written.
func TestIntegrationCaptureALab(t *testing.T) {
	e := freshLab(t)
	l, _ := Get("happy-path")
	if err := l.Run(t.Context(), e, testOut(t), StageOptions{Solution: true, Wait: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "incident")
	said, err := runShell(t, "/usr/bin", `karplab capture --aws "$2"`, dir)
	if err != nil {
		t.Fatalf("karplab capture: %v\n%s", err, said)
	}
	if !strings.Contains(said, "objects, redacted") {
		t.Errorf("capture's summary:\n%s", said)
	}
	b, err := replay.Open(dir, "", replay.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range b.Objects {
		kinds[o.GetKind()]++
		if o.GetManagedFields() != nil || o.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"] != "" {
			t.Errorf("%s %s kept managedFields or last-applied", o.GetKind(), o.GetName())
		}
		if o.GetResourceVersion() != "" {
			t.Errorf("%s %s kept its resourceVersion", o.GetKind(), o.GetName())
		}
	}
	for kind, atLeast := range map[string]int{"NodePool": 1, "NodeClaim": 1, "EC2NodeClass": 1, "Node": 1, "Pod": renderReplicas, "Deployment": 1, "ReplicaSet": 1, "Namespace": 1} {
		if kinds[kind] < atLeast {
			t.Errorf("the bundle holds %d %s, want at least %d (all: %v)", kinds[kind], kind, atLeast, kinds)
		}
	}
	for _, kind := range []string{"Secret", "ConfigMap"} {
		if kinds[kind] > 0 {
			t.Errorf("the bundle holds %d %s", kinds[kind], kind)
		}
	}
	for _, o := range b.Objects {
		if o.GetKind() == "NodeClaim" {
			if st, _, _ := unstructured.NestedString(o.Object, "status", "providerID"); !strings.HasPrefix(st, "aws:///") {
				t.Errorf("NodeClaim %s lost its status (providerID %q)", o.GetName(), st)
			}
		}
	}

	// The AWS side, as the aws CLI prints it, through the lab's endpoint: Karpenter's
	// instances, what they run in, and the account's ID pseudonymised.
	var instances struct{ Reservations []ec2types.Reservation }
	raw, err := os.ReadFile(filepath.Join(dir, replay.AWSDir, replay.InstancesFile))
	if err == nil {
		err = json.Unmarshal(raw, &instances)
	}
	if err != nil || len(instances.Reservations) == 0 {
		t.Errorf("aws/instances.json: %v, %d reservations", err, len(instances.Reservations))
	}
	if strings.Contains(string(raw), fakeec2.DefaultAccountID) {
		t.Errorf("aws/instances.json holds the account ID %s", fakeec2.DefaultAccountID)
	}
	for _, f := range []string{replay.SubnetsFile, replay.SecurityGroupsFile, replay.ImagesFile, replay.OfferingsFile, replay.SpotPricesFile, replay.EKSClusterFile} {
		if _, err := os.Stat(filepath.Join(dir, replay.AWSDir, f)); err != nil {
			t.Errorf("the bundle has no aws/%s: %v", f, err)
		}
	}

	// What a replay would bring into a fresh account, from the bundle alone: every node's
	// instance, with the lab's real IDs, imported whole.
	imp, err := replay.AccountImport(b, "karplab")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := fakeec2.New(fakeec2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Import(imp); err != nil {
		t.Errorf("importing the bundle's account into a fresh one: %v", err)
	}
	if len(imp.Instances) < kinds["NodeClaim"] {
		t.Errorf("the import holds %d instances for %d NodeClaims", len(imp.Instances), kinds["NodeClaim"])
	}

	// A user who may not list: refused before anything is written.
	cfg, err := clientcmd.BuildConfigFromFlags("", labOf(t).home.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	nobody := rest.CopyConfig(cfg)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "karplab-test-nobody"}
	denied := filepath.Join(t.TempDir(), "denied")
	_, err = replay.Capture(t.Context(), replay.CaptureOptions{Config: nobody, Dir: denied}, replay.NewRedactor())
	if !errors.Is(err, replay.ErrForbidden) || !strings.Contains(err.Error(), "may not list namespaces") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a capture the user may not make: %v", err)
	}
	if _, err := os.Stat(denied); !os.IsNotExist(err) {
		t.Errorf("a refused capture wrote %s (%v)", denied, err)
	}
}
