// Package metrics is the lab's metrics-server: it simulates what the pods on the simulated
// kubelets really use, records each pod's current and peak usage, and serves it as
// metrics.k8s.io/v1beta1 (PodMetrics, NodeMetrics), so `kubectl top pods` and
// `kubectl top nodes` print their usual tables and the lab's graders can compare a pod's
// observed peak with its requests and limits.
//
// # How usage is declared
//
// With kwok's own objects (sigs.k8s.io/kwok v0.8, group kwok.x-k8s.io/v1alpha1), which the
// Server installs: a ResourceUsage named like the pod, in its namespace, or a
// ClusterResourceUsage that selects pods by namespace and name. Each gives per container a
// fixed value or a CEL expression, evaluated by kwok's own CEL environment
// (sigs.k8s.io/kwok/pkg/kwok/metrics) with the pod, its node and the container as
// variables: Quantity("4Gi"), pod.SinceSecond() (the pod's age), Now(), Rand(). So a ramp
// to a peak is
//
//	apiVersion: kwok.x-k8s.io/v1alpha1
//	kind: ClusterResourceUsage
//	metadata:
//	  name: ziba-render
//	spec:
//	  selector:
//	    matchNamespaces: [ziba]
//	  usages:
//	  - containers: [render]
//	    usage:
//	      cpu:
//	        value: 900m
//	      memory:
//	        expression: |
//	          pod.SinceSecond() < 120.0
//	          ? Quantity("1Gi") + Quantity("3Gi") * (pod.SinceSecond() / 120.0)
//	          : Quantity("4Gi")
//
// kwok's default ClusterResourceUsage "usage-from-annotation" is installed as well, so a pod
// can also just say `kwok.x-k8s.io/usage-memory: 4Gi` and `kwok.x-k8s.io/usage-cpu: 500m`
// (others use 1m and 1Mi). These CRDs rather than an annotation of the lab's own because
// they are what kwok users already write, time-dependent profiles come with them, and kwok
// ships their definitions and its evaluator as Go packages, so nothing is copied. kwok
// itself evaluates them only inside its kubelet HTTP server, for a metrics-server to scrape;
// the lab runs no metrics-server container, so this package evaluates them, with kwok's
// selection rules (see profiles), every Options.Resolution.
//
// # How it is served
//
// As an aggregated API, like metrics-server: an APIService v1beta1.metrics.k8s.io whose
// backend is an HTTPS server on a 127.0.0.1 port of the daemon. EndpointSlices may not hold
// loopback addresses, so the APIService names an ExternalName Service kube-system/
// metrics-server whose externalName is 127.0.0.1 (the embedded kube-apiserver's
// ClusterIP routing resolves such a Service to that name and the APIService's port); its
// caBundle holds the per-run self-signed serving certificate. Requests are authenticated
// as the kube-apiserver's front proxy (its request-header client certificate, from
// kube-system/extension-apiserver-authentication) and authorized by SubjectAccessReview,
// with k8s.io/apiserver's request-header authenticator and delegating authorizer. The
// wire is metrics-server's: discovery, list and get of pods (namespaced and across
// namespaces, label and metadata field selectors) and nodes, JSON or protobuf, Tables for
// kubectl get, CPU in nanocores and memory in bytes. Node usage is the sum of its running
// pods' plus Options.NodeOverhead. A pod's usage never exceeds its limits. This works on
// the embedded backend only: a kind API server cannot reach the daemon's loopback.
//
// Only the backend listens, on 127.0.0.1.
//
// # Records and consequences
//
// Every pod that ran has a record (current, peak and when, per container and in total,
// requests and limits, the profile it came from), kept after the pod ends until Reset:
// Report and Pod return them. With Options.Enforce the lab's kubelet acts on usage as a
// real one does: OOM kills above a memory limit, evictions when the pods on a node use
// more memory than its allocatable (pressure.go says exactly what is written).
//
// It imports client-go, k8s.io/apiserver, k8s.io/kube-aggregator, k8s.io/metrics and kwok;
// it must not import the rest of karplab (tests may use cluster/controlplane and
// cluster/kubelet).
package metrics
