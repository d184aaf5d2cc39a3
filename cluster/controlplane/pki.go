package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/keyutil"
)

const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 365 * 24 * time.Hour
	// A leaf closer than this to its expiry is reissued at Start.
	leafRenewBefore = 30 * 24 * time.Hour

	// serviceClusterIPRange is the Service CIDR; its first address is kubernetes.default.
	serviceClusterIPRange = ServiceCIDR
	kubernetesServiceIP   = "10.96.0.1"

	frontProxyClientCN = "front-proxy-client"
)

// ServiceCIDR is the Service CIDR of the embedded control plane (kubeadm's default), and
// KubeDNSIP the kube-dns Service's ClusterIP in it (its tenth address, as kubeadm and EKS
// place it).
const (
	ServiceCIDR = "10.96.0.0/12"
	KubeDNSIP   = "10.96.0.10"
)

// keyPair is a certificate and its key, kept as files in the pki directory.
type keyPair struct {
	cert     *x509.Certificate
	key      crypto.Signer
	certPEM  []byte
	keyPEM   []byte
	certFile string
	keyFile  string
}

// pki holds every credential of the control plane. ECDSA P-256 throughout: generating it
// takes microseconds where RSA-2048 takes a noticeable share of a cold start.
type pki struct {
	dir string

	ca     *keyPair // signs API serving and client certificates; clients trust it
	etcdCA *keyPair // signs etcd's serving cert and its only client (the API server)
	// frontProxyCA signs the API server's client certificate for aggregated API servers;
	// delegating components (scheduler, controller manager) trust it for request headers.
	frontProxyCA *keyPair

	apiServer     *keyPair // serving: 127.0.0.1, localhost, kubernetes.default...
	etcdServer    *keyPair
	etcdClient    *keyPair // kube-apiserver -> etcd
	admin         *keyPair // O=system:masters
	scheduler     *keyPair // CN=system:kube-scheduler, client and serving
	controllerMgr *keyPair // CN=system:kube-controller-manager, client and serving
	frontProxy    *keyPair // kube-apiserver -> aggregated API servers

	saKeyFile string // service-account token signing key (private)
	saPubFile string
}

type leafSpec struct {
	name   string // file base name
	cn     string
	orgs   []string
	server bool
	client bool
	dns    []string
	ips    []net.IP
}

// loadOrCreatePKI loads the credentials in dir, creating what is missing. CAs are never
// replaced (that would invalidate every kubeconfig handed out); a leaf is reissued when it
// is missing, unreadable, not signed by the current CA, close to expiry or lacks a SAN
// required now (e.g. after BindAddress changed).
func loadOrCreatePKI(dir string, apiIPs []net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating pki directory: %w", err)
	}
	p := &pki{dir: dir}
	var err error
	if p.ca, err = p.loadOrCreateCA("ca", "karplab-ca"); err != nil {
		return nil, err
	}
	if p.etcdCA, err = p.loadOrCreateCA("etcd-ca", "karplab-etcd-ca"); err != nil {
		return nil, err
	}
	if p.frontProxyCA, err = p.loadOrCreateCA("front-proxy-ca", "karplab-front-proxy-ca"); err != nil {
		return nil, err
	}
	loopback := []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}
	apiSANs := append(append([]net.IP{}, loopback...), net.ParseIP(kubernetesServiceIP).To4())
	for _, ip := range apiIPs {
		if !ip.IsUnspecified() && !containsIP(apiSANs, ip) {
			apiSANs = append(apiSANs, ip)
		}
	}
	leaves := []struct {
		dst  **keyPair
		ca   *keyPair
		spec leafSpec
	}{
		{&p.apiServer, p.ca, leafSpec{name: "apiserver", cn: "kube-apiserver", server: true, ips: apiSANs,
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}}},
		{&p.admin, p.ca, leafSpec{name: "admin", cn: "kubernetes-admin", orgs: []string{"system:masters"}, client: true}},
		{&p.scheduler, p.ca, leafSpec{name: "kube-scheduler", cn: "system:kube-scheduler", client: true, server: true,
			dns: []string{"localhost"}, ips: loopback}},
		{&p.controllerMgr, p.ca, leafSpec{name: "kube-controller-manager", cn: "system:kube-controller-manager", client: true, server: true,
			dns: []string{"localhost"}, ips: loopback}},
		{&p.etcdServer, p.etcdCA, leafSpec{name: "etcd-server", cn: "etcd", server: true, client: true,
			dns: []string{"localhost"}, ips: loopback}},
		{&p.etcdClient, p.etcdCA, leafSpec{name: "apiserver-etcd-client", cn: "kube-apiserver-etcd-client", client: true}},
		{&p.frontProxy, p.frontProxyCA, leafSpec{name: "front-proxy-client", cn: frontProxyClientCN, client: true}},
	}
	for _, l := range leaves {
		if *l.dst, err = p.loadOrCreateLeaf(l.ca, l.spec); err != nil {
			return nil, err
		}
	}
	if err := p.loadOrCreateSAKey(); err != nil {
		return nil, err
	}
	return p, nil
}

func containsIP(ips []net.IP, ip net.IP) bool {
	for _, i := range ips {
		if i.Equal(ip) {
			return true
		}
	}
	return false
}

func (p *pki) paths(name string) (string, string) {
	return filepath.Join(p.dir, name+".crt"), filepath.Join(p.dir, name+".key")
}

func (p *pki) loadOrCreateCA(name, cn string) (*keyPair, error) {
	certFile, keyFile := p.paths(name)
	kp, err := readKeyPair(certFile, keyFile)
	if err == nil {
		if !kp.cert.IsCA {
			return nil, fmt.Errorf("%s is not a CA certificate", certFile)
		}
		return kp, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("loading %s (delete the pki directory to start over): %w", name, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating %s key: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return writeKeyPair(tmpl, tmpl, key, key, certFile, keyFile)
}

func (p *pki) loadOrCreateLeaf(ca *keyPair, s leafSpec) (*keyPair, error) {
	certFile, keyFile := p.paths(s.name)
	if kp, err := readKeyPair(certFile, keyFile); err == nil && leafUsable(kp.cert, ca.cert, s) {
		return kp, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating %s key: %w", s.name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: s.cn, Organization: s.orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafValidity),
		KeyUsage:     x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		DNSNames:     s.dns,
		IPAddresses:  s.ips,
	}
	if s.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if s.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	return writeKeyPair(tmpl, ca.cert, key, ca.key, certFile, keyFile)
}

// leafUsable reports whether an existing certificate still fits spec.
func leafUsable(c, ca *x509.Certificate, s leafSpec) bool {
	if c.CheckSignatureFrom(ca) != nil || time.Until(c.NotAfter) < leafRenewBefore {
		return false
	}
	for _, ip := range s.ips {
		if c.VerifyHostname(ip.String()) != nil {
			return false
		}
	}
	for _, d := range s.dns {
		if c.VerifyHostname(d) != nil {
			return false
		}
	}
	return c.Subject.CommonName == s.cn
}

func (p *pki) loadOrCreateSAKey() error {
	p.saKeyFile, p.saPubFile = filepath.Join(p.dir, "sa.key"), filepath.Join(p.dir, "sa.pub")
	keyPEM, _, err := keyutil.LoadOrGenerateKeyFile(p.saKeyFile)
	if err != nil {
		return fmt.Errorf("loading service-account key: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", p.saKeyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return fmt.Errorf("%s does not hold a signing key", p.saKeyFile)
	}
	der, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil {
		return fmt.Errorf("encoding service-account public key: %w", err)
	}
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return writeFileAtomic(p.saPubFile, pub, 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n.Add(n, big.NewInt(1))
}

func writeKeyPair(tmpl, parent *x509.Certificate, key crypto.Signer, parentKey crypto.Signer, certFile, keyFile string) (*keyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", filepath.Base(certFile), err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Base(certFile), err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", filepath.Base(keyFile), err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	// Key first: a crash in between leaves a certificate-less key, which is regenerated.
	if err := writeFileAtomic(keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(certFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, certPEM: certPEM, keyPEM: keyPEM, certFile: certFile, keyFile: keyFile}, nil
}

func readKeyPair(certFile, keyFile string) (*keyPair, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM certificate", certFile)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: not a signing key", keyFile)
	}
	return &keyPair{cert: cert, key: signer, certPEM: certPEM, keyPEM: keyPEM, certFile: certFile, keyFile: keyFile}, nil
}

// writeFileAtomic replaces path with data so readers never see a partial file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
