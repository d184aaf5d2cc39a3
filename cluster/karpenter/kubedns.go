package karpenter

import (
	"context"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// EnsureKubeDNS creates the kube-system/kube-dns Service an EKS cluster has (CoreDNS's
// ports, ClusterIP clusterIP), unless one exists: karpenter-provider-aws reads its
// ClusterIP at start for the nodes' kubelet clusterDNS. No pod backs it (nodes are
// simulated). An empty clusterIP lets the API server pick one in its Service CIDR. It
// returns the IP of the Service it created ("" when one existed).
func EnsureKubeDNS(ctx context.Context, cfg *rest.Config, clusterIP string) (string, error) {
	if clusterIP != "" && net.ParseIP(clusterIP) == nil {
		return "", fmt.Errorf("kube-dns cluster IP %q is not an IP address", clusterIP)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("building a Kubernetes client: %w", err)
	}
	services := kube.CoreV1().Services(metav1.NamespaceSystem)
	if _, err := services.Get(ctx, "kube-dns", metav1.GetOptions{}); err == nil {
		return "", nil
	} else if !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("reading the kube-dns Service: %w", err)
	}
	labels := map[string]string{
		"k8s-app":                       "kube-dns",
		"kubernetes.io/name":            "CoreDNS",
		"kubernetes.io/cluster-service": "true",
		"eks.amazonaws.com/component":   "kube-dns",
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: metav1.NamespaceSystem, Labels: labels,
			Annotations: map[string]string{"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: clusterIP,
			Selector:  map[string]string{"k8s-app": "kube-dns"},
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9153)},
			},
		},
	}
	created, err := services.Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return "", nil
		}
		return "", fmt.Errorf("creating the kube-dns Service (%s): %w", clusterIP, err)
	}
	return created.Spec.ClusterIP, nil
}

// EnsureNamespace creates namespace name unless it exists.
func EnsureNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building a Kubernetes client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
