package controlplane

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// clusterName names the cluster, user and context in every kubeconfig written here.
const clusterName = "karplab"

// restConfig is a client configuration for server, trusting the CA and authenticating with kp.
func restConfig(server string, ca, kp *keyPair) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   ca.certPEM,
			CertData: kp.certPEM,
			KeyData:  kp.keyPEM,
		},
		// A local lab: the default 5 QPS would make bulk setup (CRDs, manifests) crawl.
		QPS:   100,
		Burst: 200,
	}
}

// kubeconfig renders a self-contained kubeconfig (certificates embedded) for user.
func kubeconfig(server string, ca, kp *keyPair, user string) ([]byte, error) {
	cfg := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{
			clusterName: {Server: server, CertificateAuthorityData: ca.certPEM},
		},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{
			user: {ClientCertificateData: kp.certPEM, ClientKeyData: kp.keyPEM},
		},
		Contexts: map[string]*clientcmdapi.Context{
			clusterName: {Cluster: clusterName, AuthInfo: user},
		},
		CurrentContext: clusterName,
	}
	data, err := clientcmd.Write(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding kubeconfig for %s: %w", user, err)
	}
	return data, nil
}

func writeKubeconfig(path, server string, ca, kp *keyPair, user string) error {
	data, err := kubeconfig(server, ca, kp, user)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o600)
}
