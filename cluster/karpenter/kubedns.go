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
// simulated); it reports whether it created the Service.
func EnsureKubeDNS(ctx context.Context, cfg *rest.Config, clusterIP string) (bool, error) {
	if net.ParseIP(clusterIP) == nil {
		return false, fmt.Errorf("kube-dns cluster IP %q is not an IP address", clusterIP)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("building a Kubernetes client: %w", err)
	}
	services := kube.CoreV1().Services(metav1.NamespaceSystem)
	if _, err := services.Get(ctx, "kube-dns", metav1.GetOptions{}); err == nil {
		return false, nil
	} else if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading the kube-dns Service: %w", err)
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
	if _, err := services.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating the kube-dns Service (%s): %w", clusterIP, err)
	}
	return true, nil
}
