package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// kubeCommands are built from k8s.io/kubernetes (go.mod's tool directives name them).
var kubeCommands = []string{"kubelet", "kubeadm", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}

// goEnv is the Go build's environment: static binaries (the control-plane images hold
// nothing else), at the project's toolchain.
var goEnv = []string{"CGO_ENABLED=0"}

// versionFlags stamp the version kubeadm and the components report, as Kubernetes' own
// build does (hack/lib/version.sh); without them kubeadm sees v0.0.0 and its image tags break.
func versionFlags(v string) string {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	major, minor := parts[0], ""
	if len(parts) > 1 {
		minor = parts[1]
	}
	flags := []string{"-s", "-w"}
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags, "-X", pkg+".gitVersion="+v, "-X", pkg+".gitMajor="+major, "-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean", "-X", pkg+".buildDate="+time.Unix(0, 0).UTC().Format(time.RFC3339))
	}
	return strings.Join(flags, " ")
}

// buildKube builds the Kubernetes commands and etcd's main in karplab's module, then asks the
// kubeadm just built which images it will run.
func (b *builder) buildKube(ctx context.Context) error {
	bin := filepath.Join(b.work, "bin")
	args := []string{"build", "-trimpath", "-ldflags", versionFlags(b.kube), "-o", bin + "/"}
	for _, c := range kubeCommands {
		args = append(args, "k8s.io/kubernetes/cmd/"+c)
	}
	if _, err := run(ctx, filepath.Join(b.work, "src"), goEnv, "go", args...); err != nil {
		return err
	}
	out, err := run(ctx, b.work, nil, filepath.Join(bin, "kubeadm"), "config", "images", "list", "--kubernetes-version", b.kube)
	if err != nil {
		return err
	}
	b.images = nil
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "/") && strings.Contains(l, ":") && !strings.Contains(l, " ") {
			b.images = append(b.images, l)
		}
	}
	sandbox, err := sandboxImage(b.kind)
	if err != nil {
		return err
	}
	b.images = append(b.images, sandbox)
	if len(b.images) < 5 {
		return fmt.Errorf("kubeadm config images list named %d images: %q", len(b.images), out)
	}
	return nil
}

// sandboxImage is the pause image kind's containerd configuration names (the CRI runs it, not
// kubeadm's).
func sandboxImage(kindDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(kindDir, baseFiles, "etc/containerd/config.toml"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^\s*sandbox_image\s*=\s*"([^"]+)"`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("kind's containerd config.toml names no sandbox_image")
	}
	return string(m[1]), nil
}

// image finds the image of component (its repository's last element) in kubeadm's list.
func (b *builder) image(component string) (string, error) {
	for _, img := range b.images {
		repo, _, _ := strings.Cut(img[strings.LastIndex(img, "/")+1:], ":")
		if repo == component {
			return img, nil
		}
	}
	return "", fmt.Errorf("kubeadm lists no %s image (it lists %s)", component, strings.Join(b.images, ", "))
}

func imageVersion(img string) string { return img[strings.LastIndex(img, ":")+1:] }

// buildAddons builds etcd (the server module karplab's go.mod pins, which must be the
// version kubeadm names), CoreDNS (its own module at kubeadm's version) and pause
// (Kubernetes' own pause.c).
func (b *builder) buildAddons(ctx context.Context) error {
	bin := filepath.Join(b.work, "bin")
	etcd, err := b.image("etcd")
	if err != nil {
		return err
	}
	out, err := run(ctx, filepath.Join(b.work, "src"), nil, "go", "list", "-m", "-f", "{{.Version}}", "go.etcd.io/etcd/server/v3")
	if err != nil {
		return err
	}
	if have := strings.TrimSpace(out); !strings.HasPrefix(imageVersion(etcd), strings.TrimPrefix(have, "v")+"-") {
		return fmt.Errorf("kubeadm %s runs %s, but karplab's go.mod pins etcd %s", b.kube, etcd, have)
	}
	if _, err := run(ctx, filepath.Join(b.work, "src"), goEnv, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(bin, "etcd"), "./etcd"); err != nil {
		return err
	}
	coredns, err := b.image("coredns")
	if err != nil {
		return err
	}
	if _, err := run(ctx, b.work, append([]string{"GOBIN=" + bin}, goEnv...), "go", "install", "-trimpath", "-ldflags", "-s -w", "github.com/coredns/coredns@"+imageVersion(coredns)); err != nil {
		return err
	}
	pause := filepath.Join(b.k8s, "build/pause/linux/pause.c")
	_, err = run(ctx, b.work, nil, "gcc", "-Os", "-static", "-DVERSION="+b.kube+"-karplab", "-o", filepath.Join(bin, "pause"), pause)
	return err
}
