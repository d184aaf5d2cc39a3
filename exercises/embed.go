// Package exercises holds what a learner starts from, one directory per lab: README.md (the
// task) and manifests with deliberate gaps. `karplab lab run NAME` applies the workload;
// the learner completes and applies the rest. Embedded so the binary carries them.
package exercises

import "embed"

// FS holds every lab's exercise files, as exercises/NAME/FILE.
//
//go:embed */*
var FS embed.FS
