package karplabtest

import (
	"os"
	"path/filepath"
	"testing"
)

// A pyenv shim is replaced by the program pyenv says it runs; anything else is kept.
func TestUnshim(t *testing.T) {
	dir := t.TempDir()
	pyenv := filepath.Join(dir, "libexec", "pyenv")
	real := filepath.Join(dir, "versions", "3.11.7", "bin", "aws")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(pyenv, "#!/bin/sh\n[ \"$1 $2\" = 'which aws' ] && echo "+real+"\n")
	shim := filepath.Join(dir, "shims", "aws")
	write(shim, "#!/usr/bin/env bash\nset -e\nexec \""+pyenv+"\" exec \"$program\" \"$@\"\n")
	plain := filepath.Join(dir, "bin", "aws")
	write(plain, "#!/usr/bin/python3\nimport awscli\n")
	if got := unshim(shim); got != real {
		t.Errorf("unshim(shim) = %q, want %q", got, real)
	}
	if got := unshim(plain); got != plain {
		t.Errorf("unshim(plain) = %q, want it kept", got)
	}
}
