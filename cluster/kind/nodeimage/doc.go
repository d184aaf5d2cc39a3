// Package nodeimage builds a kind node image offline, for hosts that reach no registry, the
// way kind's own `build node-image` does but from parts made here:
//   - a Debian root file system from Debian's packages (debootstrap), with kind's base-image
//     files from the kind module;
//   - kubelet, kubeadm and kubectl built from the k8s.io/kubernetes version of karplab's own
//     go.mod (embedded in the binary, package karplab);
//   - the control-plane images kubeadm lists (kube-apiserver, kube-controller-manager,
//     kube-scheduler, kube-proxy, etcd, CoreDNS, pause) built FROM scratch and preloaded
//     into the node's containerd, so kubeadm pulls nothing.
//
// The image is tagged by a hash of its inputs, so a second build is a no-op. What depends on
// the host (failCgroupV1, restrict_oom_score_adj) is not baked in: the kind backend sets it
// through kind's config patches.
//
// It imports package karplab (the module's go.mod), cluster/kind/engine, cluster/rootfs
// (debootstrap and the steps, shared with the workshop's seat image) and
// go-containerregistry; nothing of the lab's.
package nodeimage
