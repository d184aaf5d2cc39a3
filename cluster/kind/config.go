package kind

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// clusterConfig is the cluster's kind configuration: one node, its API server published on
// 127.0.0.1:port only, and what this host needs of the node (cgroup v1, oom_score_adj). The
// lab's own node image has no kindnetd: it brings a static CNI configuration instead.
func clusterConfig(port int, ownImage bool) *v1alpha4.Cluster {
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Networking: v1alpha4.Networking{
			APIServerAddress:  "127.0.0.1",
			APIServerPort:     int32(port),
			DisableDefaultCNI: ownImage,
		},
	}
	if cgroupV1() {
		// kubelet 1.37 refuses cgroup v1 unless told not to.
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, "kind: KubeletConfiguration\nfailCgroupV1: false\n")
	}
	if !canLowerOOMScoreAdj() {
		// containerd asks for -998 for every pod sandbox; without CAP_SYS_RESOURCE runc then
		// fails every pod. kind sets the same for rootless nodes.
		cfg.ContainerdConfigPatches = append(cfg.ContainerdConfigPatches, "[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = true\n")
	}
	return cfg
}

// cgroupV1 says whether the host mounts cgroup v1 (kind's node sees the same hierarchy).
func cgroupV1() bool {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return false
	}
	return st.Type != unix.CGROUP2_SUPER_MAGIC
}

// canLowerOOMScoreAdj says whether this host lets a process lower its oom_score_adj (it
// needs CAP_SYS_RESOURCE, which a privileged container has only when the host grants it). It
// tries once on this process and puts the value back (raising it is always allowed).
func canLowerOOMScoreAdj() bool {
	const path = "/proc/self/oom_score_adj"
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v <= -1000 {
		return err == nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(v-1)), 0); err != nil {
		return false
	}
	os.WriteFile(path, []byte(strconv.Itoa(v)), 0) //nolint:errcheck // raising is always allowed
	return true
}

// statusLogger shows kind's user-facing lines (its steps, warnings and errors) on status.
type statusLogger struct{ w io.Writer }

func (l statusLogger) Warn(m string)                        { fmt.Fprintln(l.w, "kind: WARNING:", strings.TrimSpace(m)) }
func (l statusLogger) Warnf(f string, a ...any)             { l.Warn(fmt.Sprintf(f, a...)) }
func (l statusLogger) Error(m string)                       { fmt.Fprintln(l.w, "kind: ERROR:", strings.TrimSpace(m)) }
func (l statusLogger) Errorf(f string, a ...any)            { l.Error(fmt.Sprintf(f, a...)) }
func (l statusLogger) V(v kindlog.Level) kindlog.InfoLogger { return infoLogger{w: l.w, on: v == 0} }

type infoLogger struct {
	w  io.Writer
	on bool
}

func (l infoLogger) Info(m string) {
	if l.on {
		fmt.Fprintln(l.w, "kind:", strings.TrimSpace(m))
	}
}
func (l infoLogger) Infof(f string, a ...any) { l.Info(fmt.Sprintf(f, a...)) }
func (l infoLogger) Enabled() bool            { return l.on }
