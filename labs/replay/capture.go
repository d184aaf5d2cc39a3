package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kwok/pkg/kwokctl/recording"
	"sigs.k8s.io/kwok/pkg/utils/file"
	kwokyaml "sigs.k8s.io/kwok/pkg/utils/yaml"
)

// Bundle file names.
const (
	ClusterFile    = "cluster.yaml.gz"
	CapturedAtFile = "captured-at"
	KarpenterFile  = "karpenter.yaml"
	AWSDir         = "aws"
)

// CaptureOptions say what to capture and where.
type CaptureOptions struct {
	// Config reaches the cluster; a capture only gets and lists.
	Config *rest.Config
	// Dir is the bundle's directory; it must not exist or be empty.
	Dir string
	// Progress gets a line per step.
	Progress io.Writer
	// Now is the capture's time (the base of the export's offsets); zero is the clock's.
	Now time.Time
	// AWS, when set, reaches the account: its read-only Describe calls go under aws/.
	AWS *aws.Config
}

// Summary counts what a capture wrote.
type Summary struct {
	Objects   map[string]int // by resource
	Skipped   []string       // resources the cluster does not serve
	Karpenter string         // namespace/name of Karpenter's Deployment, "" when not found
}

// ErrForbidden is a capture the user may not make: the error names the resource.
var ErrForbidden = errors.New("forbidden")

// Capture lists Resources from the cluster, redacts them (Redactor.Object) and writes them
// to the bundle in kwok's export format, with the capture's time and Karpenter's Deployment.
// It fails, writing nothing, when the user may not list one of them.
func Capture(ctx context.Context, o CaptureOptions, red *Redactor) (*Summary, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if err := checkEmpty(o.Dir); err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(o.Config)
	if err != nil {
		return nil, fmt.Errorf("reaching the cluster: %w", err)
	}
	sum := &Summary{Objects: map[string]int{}}
	var objs []*unstructured.Unstructured
	var karpenter *unstructured.Unstructured
	for _, gvr := range Resources {
		list, err := listAll(ctx, client, gvr)
		switch {
		case apierrors.IsNotFound(err):
			if gvr.Group == "karpenter.sh" || gvr.Group == "karpenter.k8s.aws" {
				return nil, fmt.Errorf("%s: the cluster serves no %s/v1: is Karpenter 1.0 or later installed? (v1beta1 objects cannot be replayed)", resourceName(gvr), gvr.Group)
			}
			sum.Skipped = append(sum.Skipped, resourceName(gvr))
			fmt.Fprintf(o.Progress, " %s: not served by this cluster, skipped\n", resourceName(gvr))
			continue
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			return nil, fmt.Errorf("%w: the user may not list %s; a capture needs get and list on every resource it reads (a read-only ClusterRole; never Secrets or ConfigMaps): %s",
				ErrForbidden, resourceName(gvr), strings.Join(resourceNames(), ", "))
		case err != nil:
			return nil, fmt.Errorf("listing %s: %w", resourceName(gvr), err)
		}
		for i := range list {
			if gvr.Resource == "deployments" && isKarpenter(&list[i]) && karpenter == nil {
				karpenter = list[i].DeepCopy()
				sum.Karpenter = karpenter.GetNamespace() + "/" + karpenter.GetName()
			}
			red.Object(list[i].Object)
			objs = append(objs, &list[i])
		}
		sum.Objects[resourceName(gvr)] = len(list)
		fmt.Fprintf(o.Progress, " %s: %d\n", resourceName(gvr), len(list))
	}
	var awsFiles map[string]any
	if o.AWS != nil {
		fmt.Fprintf(o.Progress, " the AWS side (region %s): instances, subnets, security groups, images, offerings, spot prices, the EKS cluster\n", o.AWS.Region)
		if awsFiles, err = readAWS(ctx, *o.AWS, objs, o.Now); err != nil {
			return nil, err
		}
	}
	// Everything was read: only now is anything written.
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	if karpenter != nil {
		if err := writeKarpenter(o.Dir, karpenter, red); err != nil {
			return nil, err
		}
	}
	if err := writeObjects(filepath.Join(o.Dir, ClusterFile), o.Now, objs); err != nil {
		return nil, err
	}
	if awsFiles != nil {
		if err := writeAWS(o.Dir, awsFiles, red); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(o.Dir, CapturedAtFile), []byte(o.Now.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		return nil, err
	}
	return sum, nil
}

// listAll lists every object of a resource, a page at a time.
func listAll(ctx context.Context, c dynamic.Interface, gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := c.Resource(gvr).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		kind := strings.TrimSuffix(page.GetKind(), "List")
		for _, item := range page.Items {
			// A list's items carry no apiVersion and kind of their own on every server.
			item.SetAPIVersion(gvr.GroupVersion().String())
			if item.GetKind() == "" {
				item.SetKind(kind)
			}
			item.SetResourceVersion("")
			out = append(out, item)
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// writeObjects writes objects as kwok's export does: YAML documents, gzipped, every time an
// offset from now.
func writeObjects(path string, now time.Time, objs []*unstructured.Unstructured) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	z := file.Compress(path, f)
	enc := kwokyaml.NewEncoder(recording.NewWriteHook(z, func(b []byte) []byte {
		return recording.ReplaceTimeToRelative(now, b)
	}))
	for _, obj := range objs {
		if err := enc.Encode(obj.Object); err != nil {
			return fmt.Errorf("writing %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	return f.Close()
}

// karpenterSettings are the env names of Karpenter's settings a replay carries over; every
// other value in its Deployment is redacted like any container's.
var karpenterSettings = map[string]bool{
	"CLUSTER_NAME": true, "FEATURE_GATES": true, "BATCH_MAX_DURATION": true, "BATCH_IDLE_DURATION": true,
	"VM_MEMORY_OVERHEAD_PERCENT": true, "RESERVED_ENIS": true, "ISOLATED_VPC": true, "INTERRUPTION_QUEUE": true,
	"EKS_CONTROL_PLANE": true, "MIN_VALUES_POLICY": true, "PREFERENCE_POLICY": true, "AWS_REGION": true,
	"LOG_LEVEL": true, "CPU_REQUESTS": true,
}

// isKarpenter recognises Karpenter's Deployment as its Helm chart labels it.
func isKarpenter(d *unstructured.Unstructured) bool {
	return d.GetLabels()["app.kubernetes.io/name"] == "karpenter" || d.GetName() == "karpenter"
}

// writeKarpenter keeps Karpenter's Deployment with its settings' values; the rest of its
// env is redacted.
func writeKarpenter(dir string, d *unstructured.Unstructured, red *Redactor) error {
	keep := d.DeepCopy()
	settings := map[string]string{}
	containers, _, _ := unstructured.NestedSlice(keep.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		env, _ := c.(map[string]any)["env"].([]any)
		for _, e := range env {
			if e, ok := e.(map[string]any); ok && karpenterSettings[fmt.Sprint(e["name"])] && e["value"] != nil {
				settings[fmt.Sprint(e["name"])] = fmt.Sprint(e["value"])
			}
		}
	}
	red.Object(keep.Object)
	containers, _, _ = unstructured.NestedSlice(keep.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		env, _ := c.(map[string]any)["env"].([]any)
		for _, e := range env {
			if e, ok := e.(map[string]any); ok {
				if v, ok := settings[fmt.Sprint(e["name"])]; ok {
					e["value"] = red.String(v)
				}
			}
		}
	}
	_ = unstructured.SetNestedSlice(keep.Object, containers, "spec", "template", "spec", "containers")
	b, err := kwokyaml.Marshal(keep.Object)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, KarpenterFile), b, 0o644)
}

// checkEmpty accepts a directory that does not exist yet or is empty: a capture or an
// unpacked bundle never overwrites.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty: name a new directory", dir)
	}
	return nil
}

func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

func resourceNames() []string {
	var out []string
	for _, gvr := range Resources {
		out = append(out, resourceName(gvr))
	}
	return out
}
