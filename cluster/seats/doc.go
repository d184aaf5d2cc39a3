// Package seats holds a workshop's seats: one lab each, in a box of its own (a container on
// this host's engine now; a Pod on a cluster later), behind the small Provider interface,
// sized like kind's provider: each method's contract is in its comment.
//
// Subpackages: container (the Provider over this host's container engine's CLI) and
// seatimage (the seat's image, built offline from Debian's packages).
//
// It imports nothing of the lab's (a seat runs its own karplab inside); its subpackages
// import it, cluster/kind/engine and cluster/rootfs, never the daemon, labs or cmd.
package seats
