package cluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/karplab/karplab/cluster/backend"
	"github.com/karplab/karplab/cluster/controlplane"
	"github.com/karplab/karplab/fakeec2"
	"github.com/karplab/karplab/fakeec2/eks"
)

const (
	// kindServiceCIDR is kind's default Service subnet (its kube-dns is 10.96.0.10 in it).
	kindServiceCIDR = "10.96.0.0/16"
	// eksClusterRole is the name of the cluster's EKS service role.
	eksClusterRole = "karplab-eks-cluster-role"
)

// eksCluster is EKSCluster for the backend's cluster.
func eksCluster(be backend.Backend, acct Account) (eks.Cluster, error) {
	cidr := controlplane.ServiceCIDR
	if be.Name() != "embedded" {
		cidr = serviceCIDR(be.RESTConfig())
	}
	return EKSCluster(be.RESTConfig(), cidr, acct.ClusterName)
}

// EKSCluster is the truth about the lab's cluster that the emulator's EKS DescribeCluster
// answers, as EKS would for a real one: the URL and CA of the API server cfg reaches, the
// Kubernetes minor and the Service CIDR (karpenter-provider-aws derives the nodes' cluster
// DNS and IP family from them).
func EKSCluster(cfg *rest.Config, serviceIPv4CIDR, name string) (eks.Cluster, error) {
	ca, err := caPEM(cfg)
	if err != nil {
		return eks.Cluster{}, err
	}
	return eks.Cluster{
		Name:                     name,
		Endpoint:                 cfg.Host,
		CertificateAuthorityData: base64.StdEncoding.EncodeToString(ca),
		Version:                  fakeec2.DefaultKubernetesVersion,
		ServiceIPv4CIDR:          serviceIPv4CIDR,
		IPFamily:                 "ipv4",
		// EKS requires the cluster's service role; nothing in the lab assumes it.
		RoleARN: "arn:aws:iam::" + fakeec2.DefaultAccountID + ":role/" + eksClusterRole,
	}, nil
}

// serviceCIDR reads another cluster's Service CIDR from its default ServiceCIDR object
// (networking.k8s.io/v1 since Kubernetes 1.33); older clusters get kind's default.
func serviceCIDR(cfg *rest.Config) string {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return kindServiceCIDR
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sc, err := kube.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || len(sc.Spec.CIDRs) == 0 {
		return kindServiceCIDR
	}
	return sc.Spec.CIDRs[0]
}

func caPEM(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile == "" {
		return nil, fmt.Errorf("the API server's client configuration names no CA")
	}
	b, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's CA: %w", err)
	}
	return b, nil
}
