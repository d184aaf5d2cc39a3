// Package solutions holds the reference manifests (and commands) that pass `karplab check
// NAME`, one directory per lab. Embedded so tests and `karplab lab run NAME --solution` can
// apply them.
package solutions

import "embed"

// FS holds every lab's solution files, as solutions/NAME/FILE.
//
//go:embed */*
var FS embed.FS
