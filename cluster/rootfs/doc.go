// Package rootfs builds container images offline from Debian's packages, as the kind node
// image and the workshop's seat image both are: a root file system by debootstrap, streamed
// into the container engine as an image, by steps that print their progress.
//
// It imports cluster/kind/engine only; nothing of the lab's.
package rootfs
