// Package controlplane runs a whole Kubernetes control plane inside the calling process:
// embedded etcd (go.etcd.io/etcd/server/v3/embed), kube-apiserver, kube-scheduler and
// kube-controller-manager from k8s.io/kubernetes, on loopback ports, with a private CA,
// mutual TLS everywhere, a service-account signing key and Node,RBAC authorization.
// Nothing is downloaded and no container runtime is needed.
//
// Everything it keeps lives in Config.DataDir, so a later Start on the same directory (in
// this process or another) comes back with the same CA, certificates, port and etcd data:
//
//	DataDir/controlplane.lock   flock held while a control plane runs on the directory
//	DataDir/controlplane.json   the API server port, persisted so restarts reuse it
//	DataDir/etcd/               etcd data
//	DataDir/pki/                CAs, serving and client certificates, sa.key/sa.pub,
//	                            kubeconfigs and the scheduler configuration
//
// The components share the process, so Start adjusts process-wide state: klog and grpclog
// output is routed to Config.Logger, and the kube-controller-manager feature gate
// ControllerManagerReleaseLeaderElectionLockOnExit is enabled (without it the controller
// manager exits the process when it is stopped).
//
// It imports k8s.io/kubernetes, etcd and client-go only; it must not import the rest of
// karplab (cluster, fakeec2, labs, cmd).
package controlplane
