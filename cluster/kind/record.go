package kind

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// record is what the lab remembers of its kind cluster, in the lab home (kind.json).
type record struct {
	Engine  string `json:"engine"`
	Node    string `json:"node,omitempty"` // the node container's id while the cluster exists
	APIPort int    `json:"apiPort"`
	Image   string `json:"image,omitempty"`
}

func recordPath(home string) string { return filepath.Join(home, "kind.json") }

// readRecord returns the record, or an empty one when there is none.
func readRecord(home string) (record, error) {
	var r record
	b, err := os.ReadFile(recordPath(home))
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("reading %s: %w (delete it: the lab makes a new one)", recordPath(home), err)
	}
	return r, nil
}

func writeRecord(home string, r record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(recordPath(home), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", recordPath(home), err)
	}
	return nil
}

// trimID is a container id as the engine printed it.
func trimID(s string) string { return strings.TrimSpace(s) }
