package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"golang.org/x/sys/unix"
)

// systemConfs are the containers.conf files rootful podman reads when CONTAINERS_CONF is
// unset, in order, each overriding the ones before (containers.conf(5)). CONTAINERS_CONF
// replaces them all, so the lab's file starts from their merged settings.
var systemConfs = []string{"/usr/share/containers/containers.conf", "/etc/containers/containers.conf", "/etc/containers/containers.conf.d/*.conf"}

// podmanDefaultLimit is what rootful podman sets nofile and nproc to without default_ulimits.
const podmanDefaultLimit = 1048576

// WriteContainersConf writes the system's containers.conf settings to path, with
// default_ulimits at the host's hard limits, and returns those limits as written.
func WriteContainersConf(path string) (string, error) {
	merged := map[string]any{}
	for _, pattern := range systemConfs {
		files, _ := filepath.Glob(pattern)
		slices.Sort(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("reading %s: %w", f, err)
			}
			var m map[string]any
			if err := toml.Unmarshal(b, &m); err != nil {
				return "", fmt.Errorf("reading %s: %w", f, err)
			}
			mergeTables(merged, m)
		}
	}
	nofile, nproc, err := hardLimits()
	if err != nil {
		return "", err
	}
	limits := []string{fmt.Sprintf("nofile=%d:%d", nofile, nofile), fmt.Sprintf("nproc=%d:%d", nproc, nproc)}
	containers, _ := merged["containers"].(map[string]any)
	if containers == nil {
		containers = map[string]any{}
		merged["containers"] = containers
	}
	containers["default_ulimits"] = limits
	b, err := toml.Marshal(merged)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	head := "# Written by karplab for the kind backend (CONTAINERS_CONF): the system's containers.conf\n" +
		"# settings, with default_ulimits within this host's hard limits. Safe to delete.\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, append([]byte(head), b...), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return strings.Join(limits, ","), nil
}

// mergeTables sets every key of src in dst, table by table.
func mergeTables(dst, src map[string]any) {
	for k, v := range src {
		sub, isTable := v.(map[string]any)
		have, haveTable := dst[k].(map[string]any)
		if isTable && haveTable {
			mergeTables(have, sub)
			continue
		}
		dst[k] = v
	}
}

// hardLimits are the most open files and processes a container's runtime here may allow:
// this process's hard limits (podman, conmon and runc inherit them), capped at podman's own
// default, and for processes also at the kernel's pid_max. That last cap was measured: with
// kernel.pid_max 32768 and a hard nproc limit of 96367, runc refused nproc=32769.
func hardLimits() (nofile, nproc uint64, err error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("reading the open files limit: %w", err)
	}
	nofile = min(rl.Max, podmanDefaultLimit)
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &rl); err != nil {
		return 0, 0, fmt.Errorf("reading the process limit: %w", err)
	}
	nproc = min(rl.Max, podmanDefaultLimit)
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if pidMax, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			nproc = min(nproc, pidMax)
		}
	}
	return nofile, nproc, nil
}
