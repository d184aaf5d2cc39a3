package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestIntegrationNamespaceFinalizerEndsANamespaceAtOnce: a deleted namespace with content is
// gone, content and all, once the reset's finalizer has run on it, without the 5 s the
// namespace controller waits before it starts.
func TestIntegrationNamespaceFinalizerEndsANamespaceAtOnce(t *testing.T) {
	h := needLab(t)
	ctx := t.Context()
	cfg, err := clientcmd.BuildConfigFromFlags("", h.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200 // as the daemon's own clients: the finalizer asks about every kind
	kube := kubernetes.NewForConfigOrDie(cfg)
	const ns = "reset-finalize"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "left"}, Data: map[string]string{"a": "b"}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var status strings.Builder
	r, err := newResetter(cfg, &status)
	if err != nil {
		t.Fatal(err)
	}
	r.namespaceFinalizer(ctx)(ns)
	if _, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after the finalizer: %v, want it gone", ns, err)
	}
	if cms, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil || len(cms.Items) != 0 {
		var names []string
		for _, c := range cms.Items {
			names = append(names, c.Name)
		}
		t.Errorf("ConfigMaps left in %s: %v (%v)", ns, names, err)
	}
	if status.String() != "" {
		t.Errorf("the finalizer said %q; it had the rights to end the namespace", status.String())
	}
}
