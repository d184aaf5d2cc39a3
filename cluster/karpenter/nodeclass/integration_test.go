package nodeclass_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/karplab/karplab/cluster/controlplane"
	apisv1 "github.com/karplab/karplab/cluster/karpenter/apis/v1"
	"github.com/karplab/karplab/cluster/karpenter/nodeclass"
)

// The control plane is heavy: started once, on first use, and stopped in TestMain.
var (
	cpMu  sync.Mutex
	cp    *controlplane.ControlPlane
	cpDir string
	cpErr error
)

func TestMain(m *testing.M) {
	// controller-runtime prints a stack trace if no logger is ever set.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	cpMu.Lock()
	if cp != nil {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping control plane:", err)
			code = 1
		}
	}
	if cpDir != "" {
		if code == 0 {
			os.RemoveAll(cpDir)
		} else {
			fmt.Fprintln(os.Stderr, "kept control plane data dir for inspection:", cpDir)
		}
	}
	cpMu.Unlock()
	os.Exit(code)
}

// apiServer returns an admin config for the shared control plane with the EC2NodeClass
// CRD installed and established.
func apiServer(t *testing.T) *rest.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	cpMu.Lock()
	defer cpMu.Unlock()
	if cp == nil && cpErr == nil {
		cpErr = startControlPlane(t)
	}
	if cpErr != nil {
		t.Fatalf("control plane: %v", cpErr)
	}
	return cp.RESTConfig()
}

func startControlPlane(t *testing.T) error {
	var err error
	if cpDir, err = os.MkdirTemp("", "nodeclass-test-"); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(cpDir, "controlplane.log"))
	if err != nil {
		return err
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err = controlplane.Start(ctx, controlplane.Config{DataDir: filepath.Join(cpDir, "cp"), Logger: slog.New(slog.NewTextHandler(logFile, nil))})
	if err != nil {
		return err
	}
	t.Logf("control plane started in %s", time.Since(began).Round(time.Millisecond))

	// Install the CRD as the daemon does: create, then wait for Established.
	ext, err := apiextensionsclient.NewForConfig(cp.RESTConfig())
	if err != nil {
		return err
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, apisv1.CRD(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating CRD: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, apisv1.CRD().Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

var gvr = apisv1.GroupVersion.WithResource("ec2nodeclasses")

// apply server-side-applies a manifest as written (YAML), as `kubectl apply
// --server-side` would.
func apply(ctx context.Context, cfg *rest.Config, name string, manifest []byte) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = dyn.Resource(gvr).Patch(ctx, name, types.ApplyPatchType, manifest, metav1.PatchOptions{FieldManager: "karplab-test"})
	return err
}

// create creates the object of a YAML manifest with strict field validation, as
// `kubectl create` or a first client-side `kubectl apply` does.
func create(ctx context.Context, cfg *rest.Config, manifest []byte) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(manifest, &obj.Object); err != nil {
		return err
	}
	_, err = dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{FieldManager: "karplab-test", FieldValidation: "Strict"})
	return err
}

func getTable(t *testing.T, cfg *rest.Config, path string) *metav1.Table {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	table := &metav1.Table{}
	if err := json.NewDecoder(resp.Body).Decode(table); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as Table: %s %v", path, resp.Status, err)
	}
	return table
}

func kubeClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := apisv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIntegrationSeedApplies applies the course's EC2NodeClass verbatim to a real API
// server, and broken variants of it, which must fail naming the field.
func TestIntegrationSeedApplies(t *testing.T) {
	cfg := apiServer(t)
	ctx := t.Context()
	manifest, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(ctx, cfg, "ziba-general", manifest); err != nil {
		t.Fatalf("applying the seed EC2NodeClass: %v", err)
	}
	t.Cleanup(func() {
		_ = kubeClient(t, cfg).Delete(context.Background(), &apisv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "ziba-general"}})
	})
	got := &apisv1.EC2NodeClass{}
	if err := kubeClient(t, cfg).Get(ctx, client.ObjectKey{Name: "ziba-general"}, got); err != nil {
		t.Fatal(err)
	}
	want := seed(t)
	if diff := cmp.Diff(want.Spec, got.Spec, quantityEqual); diff != "" {
		t.Errorf("stored spec (-seed +stored):\n%s", diff)
	}

	// What `kubectl get ec2nodeclasses` prints: the CRD's printer columns, served as a Table.
	var cols []string
	for _, c := range getTable(t, cfg, "/apis/karpenter.k8s.aws/v1/ec2nodeclasses").ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Ready", "Age", "Role"}, cols); diff != "" {
		t.Errorf("table columns (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name, old, new string
		want           []string // substrings of the API error
	}{
		{
			name: "bad volumeType", old: "volumeType: gp3", new: "volumeType: gp9",
			want: []string{`spec.blockDeviceMappings[0].ebs.volumeType: Unsupported value: "gp9"`},
		},
		{
			name: "role and instanceProfile", old: "  role: KarpenterNodeRole-ziba-production\n",
			new:  "  role: KarpenterNodeRole-ziba-production\n  instanceProfile: KarpenterNodeInstanceProfile\n",
			want: []string{"spec: Invalid value", "must specify exactly one of ['role', 'instanceProfile']"},
		},
		{
			name: "bad httpTokens", old: "httpTokens: required", new: "httpTokens: sometimes",
			want: []string{`spec.metadataOptions.httpTokens: Unsupported value: "sometimes"`},
		},
		{
			name: "alias not family@version", old: "alias: al2023@latest", new: "alias: al2023-latest",
			want: []string{"spec.amiSelectorTerms[0].alias", "'alias' is improperly formatted"},
		},
		{
			name: "unknown field", old: "    httpTokens: required\n", new: "    httpTokens: required\n    httpToken: required\n",
			want: []string{`strict decoding error: unknown field "spec.metadataOptions.httpToken"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(string(manifest), tc.old, tc.new, 1)
			bad = strings.Replace(bad, "name: ziba-general", "name: ziba-broken", 1)
			if bad == string(manifest) {
				t.Fatal("the mutation did not apply")
			}
			err := create(ctx, cfg, []byte(bad))
			if err == nil {
				t.Fatal("applied without error")
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("error is not Invalid/BadRequest: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestIntegrationController runs the controller in a controller-runtime manager against
// the API server and the emulator: the seed becomes Ready with its resolved status and
// hash, and a selector that stops matching turns it not Ready with the provider's message.
func TestIntegrationController(t *testing.T) {
	cfg := apiServer(t)
	ctx := t.Context()
	_, ec2Client := emulator(t)

	s := runtime.NewScheme()
	if err := apisv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 s,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctrlr := nodeclass.NewController(mgr.GetClient(), resolver(ec2Client, ""), nodeclass.ControllerOptions{})
	if err := ctrlr.Register(ctx, mgr); err != nil {
		t.Fatalf("Register: %v", err)
	}
	mgrCtx, stop := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-mgrDone; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	manifest, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	manifest = []byte(strings.Replace(string(manifest), "name: ziba-general", "name: ziba-controller", 1))
	if err := apply(ctx, cfg, "ziba-controller", manifest); err != nil {
		t.Fatal(err)
	}
	kube := kubeClient(t, cfg)
	t.Cleanup(func() {
		_ = kube.Delete(context.Background(), &apisv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "ziba-controller"}})
	})

	began := time.Now()
	nc := waitFor(t, kube, "ziba-controller", func(nc *apisv1.EC2NodeClass) bool {
		return nc.StatusConditions().Root().IsTrue()
	})
	t.Logf("Ready %s after apply", time.Since(began).Round(time.Millisecond))
	if len(nc.Status.Subnets) != 3 || len(nc.Status.SecurityGroups) != 1 || len(nc.Status.AMIs) != 2 || nc.Status.InstanceProfile == "" {
		t.Errorf("status = %+v", nc.Status)
	}
	if got, want := nc.Annotations[apisv1.AnnotationEC2NodeClassHash], nc.Hash(); got != want {
		t.Errorf("hash annotation = %q, want %q", got, want)
	}
	if got := nc.Annotations[apisv1.AnnotationEC2NodeClassHashVersion]; got != apisv1.EC2NodeClassHashVersion {
		t.Errorf("hash version annotation = %q", got)
	}
	if len(nc.Finalizers) != 0 {
		t.Errorf("finalizers = %v, want none", nc.Finalizers)
	}

	// A spec change is picked up at once (not at the next resync).
	patch := []byte(`{"spec":{"subnetSelectorTerms":[{"tags":{"karpenter.sh/discovery":"nobody"}}]}}`)
	if err := kube.Patch(ctx, nc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	nc = waitFor(t, kube, "ziba-controller", func(nc *apisv1.EC2NodeClass) bool {
		c := nc.StatusConditions().Get(apisv1.ConditionTypeSubnetsReady)
		return c.IsFalse() && c.ObservedGeneration == nc.Generation
	})
	c := nc.StatusConditions().Get(apisv1.ConditionTypeSubnetsReady)
	if c.Reason != "SubnetsNotFound" || c.Message != "SubnetSelector did not match any Subnets" {
		t.Errorf("SubnetsReady = %+v", c)
	}
	if nc.StatusConditions().Root().IsTrue() || len(nc.Status.Subnets) != 0 {
		t.Errorf("still Ready with subnets %v", nc.Status.Subnets)
	}
}

func waitFor(t *testing.T, kube client.Client, name string, ok func(*apisv1.EC2NodeClass) bool) *apisv1.EC2NodeClass {
	t.Helper()
	nc := &apisv1.EC2NodeClass{}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(nc), nil
	})
	if err != nil {
		t.Fatalf("waiting for EC2NodeClass %s: %v; last seen annotations %v status %+v", name, err, nc.Annotations, nc.Status)
	}
	return nc
}
