// Package container is seats.Provider over this host's container engine: Docker where it
// runs a seat, else podman (cluster/kind/engine's candidates, proved with the seat's own
// flags: no privileges, a memory cap, no network). It runs the engine's CLI, as the kind
// backend does, never an SDK.
//
// It imports cluster/seats and cluster/kind/engine only.
package container
