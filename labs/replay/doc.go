// Package replay brings a real cluster's Karpenter incident into the lab: capture writes a
// bundle of existing formats from a cluster and its AWS account, read-only, redacted at the
// source; Open reads a bundle, which comes from somebody else and is treated as untrusted;
// Validate lists what the lab cannot represent.
//
// A bundle is a directory, or a .tar.gz of one:
//
//	cluster.yaml[.gz]      the Kubernetes objects, in kwok's export format (kwokctl snapshot
//	                       export: multi-document YAML, times as offsets from the capture),
//	                       or a `kubectl get ... -o yaml` List
//	captured-at            when it was captured (RFC 3339); the base of the offsets
//	karpenter.yaml         Karpenter's Deployment (its settings), when found
//	aws/*.json             the aws CLI's JSON: instances, subnets, security groups, images,
//	                       instance-type offerings, spot prices, the EKS cluster
//
// It must not import the cluster package (the daemon, which imports this one) or cmd: it
// reads and writes bundles, the lab loads them.
package replay
