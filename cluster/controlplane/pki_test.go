package controlplane

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadOrCreatePKIReusesAndReissues(t *testing.T) {
	dir := t.TempDir()
	first, err := loadOrCreatePKI(dir, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadOrCreatePKI(dir, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(first.apiServer.certPEM), string(again.apiServer.certPEM)); diff != "" {
		t.Error("second load reissued the API server certificate")
	}
	// A new bind address needs a new SAN: the serving cert is reissued, CA and clients kept.
	moved, err := loadOrCreatePKI(dir, []net.IP{net.ParseIP("192.0.2.10")})
	if err != nil {
		t.Fatal(err)
	}
	if string(moved.apiServer.certPEM) == string(first.apiServer.certPEM) {
		t.Error("API server certificate not reissued for a new bind address")
	}
	if err := moved.apiServer.cert.VerifyHostname("192.0.2.10"); err != nil {
		t.Errorf("reissued certificate: %v", err)
	}
	if string(moved.ca.certPEM) != string(first.ca.certPEM) || string(moved.admin.certPEM) != string(first.admin.certPEM) {
		t.Error("CA or admin certificate changed when only the bind address did")
	}

	tests := []struct {
		name   string
		kp     *keyPair
		ca     *keyPair
		usage  x509.ExtKeyUsage
		host   string
		cn     string
		groups []string
	}{
		{name: "apiserver serving", kp: moved.apiServer, ca: moved.ca, usage: x509.ExtKeyUsageServerAuth, host: "kubernetes.default.svc", cn: "kube-apiserver"},
		{name: "apiserver service IP", kp: moved.apiServer, ca: moved.ca, usage: x509.ExtKeyUsageServerAuth, host: kubernetesServiceIP, cn: "kube-apiserver"},
		{name: "admin client", kp: moved.admin, ca: moved.ca, usage: x509.ExtKeyUsageClientAuth, cn: "kubernetes-admin", groups: []string{"system:masters"}},
		{name: "scheduler client", kp: moved.scheduler, ca: moved.ca, usage: x509.ExtKeyUsageClientAuth, cn: "system:kube-scheduler"},
		{name: "scheduler serving", kp: moved.scheduler, ca: moved.ca, usage: x509.ExtKeyUsageServerAuth, host: "127.0.0.1", cn: "system:kube-scheduler"},
		{name: "controller manager client", kp: moved.controllerMgr, ca: moved.ca, usage: x509.ExtKeyUsageClientAuth, cn: "system:kube-controller-manager"},
		{name: "etcd serving", kp: moved.etcdServer, ca: moved.etcdCA, usage: x509.ExtKeyUsageServerAuth, host: "127.0.0.1", cn: "etcd"},
		{name: "etcd client", kp: moved.etcdClient, ca: moved.etcdCA, usage: x509.ExtKeyUsageClientAuth, cn: "kube-apiserver-etcd-client"},
		{name: "front proxy client", kp: moved.frontProxy, ca: moved.frontProxyCA, usage: x509.ExtKeyUsageClientAuth, cn: frontProxyClientCN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			roots := x509.NewCertPool()
			roots.AddCert(tt.ca.cert)
			if _, err := tt.kp.cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: tt.host, KeyUsages: []x509.ExtKeyUsage{tt.usage}}); err != nil {
				t.Errorf("verify: %v", err)
			}
			if diff := cmp.Diff(tt.cn, tt.kp.cert.Subject.CommonName); diff != "" {
				t.Errorf("CN (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.groups, tt.kp.cert.Subject.Organization); diff != "" {
				t.Errorf("O (-want +got):\n%s", diff)
			}
		})
	}
	// The etcd CA is separate: the admin certificate must not be an etcd client.
	etcdRoots := x509.NewCertPool()
	etcdRoots.AddCert(moved.etcdCA.cert)
	if _, err := moved.admin.cert.Verify(x509.VerifyOptions{Roots: etcdRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("admin certificate is trusted by etcd")
	}
}

func TestLoadOrCreatePKIFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	if _, err := loadOrCreatePKI(dir, nil); err != nil {
		t.Fatal(err)
	}
	keys, _ := filepath.Glob(filepath.Join(dir, "*.key"))
	if len(keys) < 10 {
		t.Fatalf("found %d keys, want at least 10", len(keys))
	}
	for _, k := range keys {
		fi, err := os.Stat(k)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", filepath.Base(k), fi.Mode().Perm())
		}
	}
}

func TestLoadOrCreatePKIRejectsCorruptCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := loadOrCreatePKI(dir, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreatePKI(dir, nil); err == nil {
		t.Error("loading a corrupt CA succeeded; it must not be silently replaced")
	}
}
