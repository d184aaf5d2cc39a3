// Package seatimage builds a workshop seat's image offline, as the kind node image is
// built: a Debian root file system from Debian's packages (debootstrap: bash, vim-tiny and
// nano, less, ca-certificates, tini, and Debian's aws CLI v2), a learner's account whose
// shells point at the seat's own lab, and on top the karplab binary and every lab's
// exercise files in the learner's home. Each of the two layers is tagged by a hash of its
// inputs, so a second build is a no-op and a new binary rebuilds only the top one.
//
// It imports cluster/kind/engine, cluster/rootfs and package exercises; nothing else of
// the lab's.
package seatimage
