package controlplane

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// apiServerFlags are the kube-apiserver command-line flags, kubeadm-style. They are parsed
// into a private flag set, never from os.Args.
func apiServerFlags(p *pki, etcdURL string, advertise net.IP) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--etcd-cafile=" + p.etcdCA.certFile,
		"--etcd-certfile=" + p.etcdClient.certFile,
		"--etcd-keyfile=" + p.etcdClient.keyFile,
		"--tls-cert-file=" + p.apiServer.certFile,
		"--tls-private-key-file=" + p.apiServer.keyFile,
		"--client-ca-file=" + p.ca.certFile,
		// Aggregation and delegated authentication (kubeadm's settings). Without them the
		// scheduler and controller manager find no request-header CA and complain forever.
		"--requestheader-client-ca-file=" + p.frontProxyCA.certFile,
		"--requestheader-allowed-names=" + frontProxyClientCN,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.frontProxy.certFile,
		"--proxy-client-key-file=" + p.frontProxy.keyFile,
		"--service-account-key-file=" + p.saPubFile,
		"--service-account-signing-key-file=" + p.saKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--advertise-address=" + advertise.String(),
		// Endpoints may not hold loopback addresses, so the kubernetes Service keeps no
		// endpoints here (the in-process test server does the same).
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--event-ttl=1h",
	}
}

// newAPIServer builds a kube-apiserver serving on ln and returns its run function, which
// blocks until ctx is cancelled and the server has shut down.
func newAPIServer(ctx context.Context, p *pki, etcdURL string, ln net.Listener) (func(context.Context) error, error) {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if err := fs.Parse(apiServerFlags(p, etcdURL, advertiseIP(addr.IP))); err != nil {
		return nil, fmt.Errorf("parsing kube-apiserver flags: %w", err)
	}
	// What the command's PersistentPreRunE does. The registry is process-global and shared
	// with the scheduler and controller manager; Set is idempotent without version flags.
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, fmt.Errorf("setting component globals: %w", err)
	}
	s.SecureServing.Listener = ln
	s.SecureServing.BindAddress = addr.IP
	s.SecureServing.BindPort = addr.Port

	completed, err := s.Complete(ctx)
	if err != nil {
		return nil, fmt.Errorf("completing kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return nil, fmt.Errorf("validating kube-apiserver options: %w", utilerrors.NewAggregate(errs))
	}
	config, err := app.NewConfig(completed)
	if err != nil {
		return nil, fmt.Errorf("configuring kube-apiserver: %w", err)
	}
	cc, err := config.Complete()
	if err != nil {
		return nil, fmt.Errorf("completing kube-apiserver config: %w", err)
	}
	server, err := app.CreateServerChain(cc)
	if err != nil {
		return nil, fmt.Errorf("creating kube-apiserver: %w", err)
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return nil, fmt.Errorf("preparing kube-apiserver: %w", err)
	}
	return prepared.Run, nil
}

// advertiseIP is the address the API server publishes for itself: its bind address, or
// loopback when bound to all interfaces.
func advertiseIP(bind net.IP) net.IP {
	if bind.IsUnspecified() {
		return net.IPv4(127, 0, 0, 1)
	}
	return bind
}

func hostPort(ip net.IP, port int) string {
	return net.JoinHostPort(ip.String(), strconv.Itoa(port))
}
