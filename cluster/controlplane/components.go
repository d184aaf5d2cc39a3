package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Components reports etcd, kube-apiserver, kube-scheduler and kube-controller-manager, in
// that order. Each is probed (etcd in-process, the others on /readyz or /healthz over
// TLS verified against the cluster CA); the scheduler and controller manager details name
// their lease holder and its last renewal. ctx bounds the probes (at most 3s each).
func (cp *ControlPlane) Components(ctx context.Context) []Component {
	out := []Component{
		{Name: "etcd", Address: cp.etcdURL},
		{Name: "kube-apiserver", Address: cp.apiURL},
		{Name: "kube-scheduler", Address: cp.schedURL},
		{Name: "kube-controller-manager", Address: cp.kcmURL},
	}
	if err := cp.Err(); err != nil {
		for i := range out {
			out[i].Detail = err.Error()
		}
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { out[0].Healthy, out[0].Detail = cp.etcdHealth() })
	wg.Go(func() { out[1].Healthy, out[1].Detail = cp.probe(ctx, cp.apiURL+"/readyz") })
	cp.mu.Lock()
	held := cp.held != nil
	cp.mu.Unlock()
	if held {
		out[2].Detail, out[3].Detail = "held (HoldControllers) until released", "held (HoldControllers) until released"
	} else {
		wg.Go(func() { out[2].Healthy, out[2].Detail = cp.controllerHealth(ctx, cp.schedURL, schedulerLease) })
		wg.Go(func() { out[3].Healthy, out[3].Detail = cp.controllerHealth(ctx, cp.kcmURL, controllerManagerLease) })
	}
	wg.Wait()
	return out
}

func (cp *ControlPlane) etcdHealth() (bool, string) {
	s := cp.etcd.Server
	if alarms := s.Alarms(); len(alarms) > 0 {
		return false, fmt.Sprintf("alarm %v", alarms[0].Alarm)
	}
	if s.Leader() == 0 {
		return false, "no leader"
	}
	return true, fmt.Sprintf("revision %d, db %.1f MiB", s.KV().Rev(), float64(s.Backend().Size())/(1<<20))
}

func (cp *ControlPlane) controllerHealth(ctx context.Context, url, lease string) (bool, string) {
	ok, detail := cp.probe(ctx, url+"/healthz")
	if !ok {
		return false, detail
	}
	l, err := cp.client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("reading lease %s: %v", lease, err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return false, fmt.Sprintf("lease %s not held", lease)
	}
	age := time.Since(l.Spec.RenewTime.Time).Round(time.Second)
	if l.Spec.LeaseDurationSeconds != nil && age > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
		return false, fmt.Sprintf("lease %s held by %s expired (renewed %s ago)", lease, *l.Spec.HolderIdentity, age)
	}
	return true, fmt.Sprintf("leader %s, lease renewed %s ago", *l.Spec.HolderIdentity, age)
}

// probe GETs url and reports whether it answered 200, with the body or the failure.
func (cp *ControlPlane) probe(ctx context.Context, url string) (bool, string) {
	code, body, err := cp.get(ctx, url)
	if err != nil {
		return false, err.Error()
	}
	if code != http.StatusOK {
		return false, fmt.Sprintf("status %d: %s", code, lastLines(body, 5))
	}
	return true, strings.TrimSpace(body)
}

// get GETs url with the admin certificate, trusting only the cluster CA.
func (cp *ControlPlane) get(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := cp.httpClient().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body), err
}

func (cp *ControlPlane) httpClient() *http.Client {
	cp.httpOnce.Do(func() {
		pool := x509.NewCertPool()
		pool.AddCert(cp.pki.ca.cert)
		cert := tls.Certificate{Certificate: [][]byte{cp.pki.admin.cert.Raw}, PrivateKey: cp.pki.admin.key, Leaf: cp.pki.admin.cert}
		cp.http = &http.Client{Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
			DisableKeepAlives: true, // probes are rare; hold no connections open
		}}
	})
	return cp.http
}

// lastLines keeps the tail of a health report, where the failing checks are listed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var failed []string
	for _, l := range lines {
		if strings.Contains(l, "[-]") {
			failed = append(failed, l)
		}
	}
	if len(failed) > 0 {
		lines = failed
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
