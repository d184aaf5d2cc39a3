package main_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestIntegrationExistingBackendRefuses: `start --backend existing` on a cluster the lab
// cannot use says why in one line, exits 2, starts nothing and installs nothing. The
// cluster is another lab's embedded one: it already runs Karpenter, and a ServiceAccount
// with the view role is the kubeconfig without rights.
func TestIntegrationExistingBackendRefuses(t *testing.T) {
	theirs := newLab(t)
	theirs.start()
	theirKubeconfig := filepath.Join(theirs.home, "kubeconfig")
	theirs.mustRun("kubectl", "create", "serviceaccount", "viewer", "-n", "default")
	theirs.mustRun("kubectl", "create", "clusterrolebinding", "viewer", "--clusterrole=view", "--serviceaccount=default:viewer")
	token := strings.TrimSpace(theirs.mustRun("kubectl", "create", "token", "viewer", "-n", "default").stdout)
	objects := func() string {
		return theirs.mustRun("kubectl", "get", "namespaces,customresourcedefinitions,apiservices,clusterroles,services,configmaps", "-A", "-o", "name").stdout
	}
	before := objects()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + ln.Addr().String()
	ln.Close()

	tests := []struct {
		name       string
		kubeconfig string
		want       string
	}{
		{name: "cluster runs Karpenter", kubeconfig: theirKubeconfig, want: "the cluster already has Karpenter's CRD nodepools.karpenter.sh, not installed by this lab"},
		{name: "kubeconfig without rights", kubeconfig: rewrite(t, theirKubeconfig, func(c *clientcmdapi.Config) {
			for _, u := range c.AuthInfos {
				*u = clientcmdapi.AuthInfo{Token: token}
			}
		}), want: "the kubeconfig's user may not create customresourcedefinitions.apiextensions.k8s.io (Karpenter's CRDs)"},
		{name: "unreachable cluster", kubeconfig: rewrite(t, theirKubeconfig, func(c *clientcmdapi.Config) {
			for _, cl := range c.Clusters {
				cl.Server = closed
			}
		}), want: "cannot reach the cluster at " + closed},
	}
	other := newLab(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := other.run("start", "--backend", "existing", "--kubeconfig", tt.kubeconfig, "--ec2-addr", other.ec2Addr)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and one line containing %q", r.code, r.stderr, tt.want)
			}
			if other.pid() != 0 {
				t.Error("a daemon was started")
			}
			if _, err := os.Stat(filepath.Join(other.home, "installed.jsonl")); !os.IsNotExist(err) {
				t.Errorf("the lab recorded installs: %v", err)
			}
		})
	}
	if after := objects(); after != before {
		t.Errorf("their cluster changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	r := other.run("start", "--kubeconfig", theirKubeconfig)
	if r.code != 2 || !strings.Contains(r.stderr, "add --backend existing") {
		t.Errorf("--kubeconfig without --backend existing: exit %d, %s", r.code, r.stderr)
	}
	theirs.mustRun("stop")
}

// rewrite writes a copy of the kubeconfig at path changed by edit.
func rewrite(t *testing.T, path string, edit func(*clientcmdapi.Config)) string {
	t.Helper()
	c, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(c)
	out := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, out); err != nil {
		t.Fatal(err)
	}
	return out
}
