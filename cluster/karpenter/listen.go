package karpenter

import (
	"net"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// loopbackHost is where every listener of the Karpenter process binds: nothing in the lab
// listens beyond loopback.
const loopbackHost = "127.0.0.1"

// bindLoopback makes the manager Karpenter's operator builds listen on loopback only.
// Core builds its manager options in place (metrics on ":PORT", health probes on
// ":PORT") and offers no bind-address flag, but it calls controller-runtime's
// ctrl.NewManager, a variable: bindLoopback wraps it to rewrite those addresses (and
// gives the never-started webhook server a loopback host too). The returned function
// restores the original.
func bindLoopback() (restore func()) {
	orig := ctrl.NewManager
	ctrl.NewManager = func(cfg *rest.Config, o manager.Options) (manager.Manager, error) {
		o.Metrics.BindAddress = onLoopback(o.Metrics.BindAddress)
		o.HealthProbeBindAddress = onLoopback(o.HealthProbeBindAddress)
		o.PprofBindAddress = onLoopback(o.PprofBindAddress)
		if o.WebhookServer == nil {
			o.WebhookServer = webhook.NewServer(webhook.Options{Host: loopbackHost})
		}
		return orig(cfg, o)
	}
	return func() { ctrl.NewManager = orig }
}

// onLoopback moves a listen address on all interfaces (":8080", "0.0.0.0:8080") onto
// loopback; "" and "0" (listener disabled) and addresses naming a host are kept.
func onLoopback(addr string) string {
	if addr == "" || addr == "0" {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "" && (ip == nil || !ip.IsUnspecified())) {
		return addr
	}
	return net.JoinHostPort(loopbackHost, port)
}
