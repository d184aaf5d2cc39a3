// Package controlplane runs a whole Kubernetes control plane inside the calling process:
// embedded etcd (go.etcd.io/etcd/server/v3/embed), kube-apiserver, kube-scheduler and
// kube-controller-manager from k8s.io/kubernetes, on loopback ports, with private CAs,
// mutual TLS everywhere, a service-account signing key and Node,RBAC authorization.
// Nothing is downloaded and no container runtime is needed. A cold Start takes about 3s
// on a 2-core machine; a restart on the same data about 2.5s.
//
// Everything it keeps lives in Config.DataDir, so a later Start on the same directory (in
// this process or another, also after a crash) comes back with the same CA, certificates,
// port and etcd data. With DataDir = $KARPLAB_HOME the etcd and pki directories are the
// ones cluster.Home names.
//
//	DataDir/controlplane.lock   flock held while a control plane runs (holds its pid)
//	DataDir/controlplane.json   the API server port, persisted so restarts reuse it
//	DataDir/etcd/               etcd data
//	DataDir/pki/                CAs (ca, etcd-ca, front-proxy-ca), serving and client
//	                            certificates, sa.key/sa.pub, the scheduler's and
//	                            controller manager's kubeconfigs, kube-scheduler.yaml
//
// Only the API server listens on Config.BindAddress; etcd, the scheduler and the
// controller manager listen on 127.0.0.1 ports chosen at each Start (Components lists
// them).
//
// The components share the process, so one ControlPlane runs per process at a time
// (ErrAlreadyRunning), and Start adjusts process-wide state:
//   - klog and grpclog output of the whole process goes to Config.Logger;
//   - the feature gate ControllerManagerReleaseLeaderElectionLockOnExit is enabled in the
//     default feature gate (without it the controller manager exits the process when it
//     is stopped);
//   - the scheduler registers SIGUSR2 (cache dump) and never unregisters it. SIGINT and
//     SIGTERM are left to the caller.
//
// The API server's etcd client logs warnings as JSON to stderr through a logger the
// apiserver creates at package init; that cannot be rerouted, so a daemon should point
// its stderr at its log file.
//
// It imports k8s.io/kubernetes, etcd and client-go only; it must not import the rest of
// karplab (cluster, fakeec2, labs, cmd).
package controlplane
