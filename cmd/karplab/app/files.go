package app

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/karplab/karplab/labs/evidence"
)

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func writeHTMLFile(path string, ev *evidence.Evidence) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := ev.WriteHTML(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
