// Package engine finds the container engine kind would use on this host (Docker, podman or
// nerdctl, or the one KIND_EXPERIMENTAL_PROVIDER names, as kind's own CLI reads it), proves
// it can start a privileged container (every kind node is one) and makes podman able to
// where its default rlimits exceed the host's hard limits, with a containers.conf of the
// lab's own. ChooseFor proves another kind of container instead (cluster/seats: an
// unprivileged one with a memory cap and no network). It runs the engine's CLI; it never edits the host's configuration.
//
// It imports the kind library's cluster package only (for the provider option).
package engine
