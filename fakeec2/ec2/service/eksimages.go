package service

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/karplab/karplab/fakeec2/ec2"
	"github.com/karplab/karplab/fakeec2/ssm"
)

// EKSImageOwner is the account that owns the EKS-optimized AMIs (alias "amazon").
const EKSImageOwner = ec2.EKSImageOwner

// DefaultKubernetesVersion is the Kubernetes minor the seeded EKS-optimized images are
// built for (and the one before it): the lab's embedded control plane's.
const DefaultKubernetesVersion = "1.37"

// eksImage is what an EKS-optimized AMI's name says of it. AL2023:
// amazon-eks-node-al2023-ARCH-VARIANT-K8S-vRELEASE; Bottlerocket:
// bottlerocket-aws-k8s-K8S[-nvidia]-ARCH-vRELEASE-COMMIT. (EKS publishes no AL2 images
// after Kubernetes 1.32, so a 1.36/1.37 account has none.)
type eksImage struct {
	Family  string // "al2023", "bottlerocket"
	Arch    string // "x86_64", "arm64"
	Variant string // "standard", "nvidia"
	K8s     string // "1.37"
	Release string // AL2023 "20261101"; Bottlerocket "1.50.0"
}

func (e eksImage) name() string {
	if e.Family == "bottlerocket" {
		v := ""
		if e.Variant == "nvidia" {
			v = "-nvidia"
		}
		return fmt.Sprintf("bottlerocket-aws-k8s-%s%s-%s-v%s-%s", e.K8s, v, e.Arch, e.Release, bottlerocketCommit(e.Release))
	}
	return fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-v%s", e.Arch, e.Variant, e.K8s, e.Release)
}

func (e eksImage) description() string {
	if e.Family == "bottlerocket" {
		return fmt.Sprintf("Bottlerocket OS for Kubernetes %s (%s, %s)", e.K8s, e.Variant, e.Arch)
	}
	accel := ""
	if e.Variant == "nvidia" {
		accel = " with NVIDIA drivers"
	}
	return fmt.Sprintf("EKS-optimized Kubernetes node based on Amazon Linux 2023%s, (k8s: %s, containerd: 2.1.*)", accel, e.K8s)
}

// bottlerocketCommit stands in for the build commit Bottlerocket names carry.
func bottlerocketCommit(release string) string {
	return fmt.Sprintf("%08x", len(release)*0x1f3a9b+int(release[len(release)-1]))
}

// parseEKSImage reads an EKS-optimized image name.
func parseEKSImage(name string) (eksImage, bool) {
	if rest, ok := strings.CutPrefix(name, "amazon-eks-node-al2023-"); ok {
		parts := strings.SplitN(rest, "-", 4) // ARCH, VARIANT, K8S, vRELEASE
		if len(parts) != 4 || !strings.HasPrefix(parts[3], "v") {
			return eksImage{}, false
		}
		return eksImage{Family: "al2023", Arch: parts[0], Variant: parts[1], K8s: parts[2], Release: parts[3][1:]}, true
	}
	if rest, ok := strings.CutPrefix(name, "bottlerocket-aws-k8s-"); ok {
		parts := strings.Split(rest, "-") // K8S, [nvidia], ARCH, vRELEASE, COMMIT
		e := eksImage{Family: "bottlerocket", Variant: "standard"}
		if len(parts) == 5 && parts[1] == "nvidia" {
			e.Variant, parts = "nvidia", append(parts[:1], parts[2:]...)
		}
		if len(parts) != 4 || !strings.HasPrefix(parts[2], "v") {
			return eksImage{}, false
		}
		e.K8s, e.Arch, e.Release = parts[0], parts[1], parts[2][1:]
		return e, true
	}
	return eksImage{}, false
}

// previousMinor turns "1.37" into "1.36".
func previousMinor(v string) string {
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil || minor == 0 {
		return v
	}
	return fmt.Sprintf("%d.%d", major, minor-1)
}

// seedImages registers EKS-optimized AMIs for the account's Kubernetes minor and the one
// before: AL2023 and Bottlerocket, standard and NVIDIA, x86_64 and arm64, three releases
// each, so that "latest" has something older to be newer than. Callers hold s.mu.
func (s *Service) seedImages() {
	al2023 := []string{"20260901", "20261001", "20261101"}
	bottlerocket := []string{"1.48.0", "1.49.0", "1.50.0"}
	for _, k8s := range []string{previousMinor(s.k8sVersion), s.k8sVersion} {
		for i := range al2023 {
			created, _ := time.Parse("20060102", al2023[i])
			for _, family := range []string{"al2023", "bottlerocket"} {
				rel := al2023[i]
				if family == "bottlerocket" {
					rel = bottlerocket[i]
				}
				for _, variant := range []string{"standard", "nvidia"} {
					for _, arch := range []string{"x86_64", "arm64"} {
						e := eksImage{Family: family, Arch: arch, Variant: variant, K8s: k8s, Release: rel}
						s.addEKSImage(e, created.Add(9*time.Hour).UTC(), false)
					}
				}
			}
		}
	}
}

// addEKSImage registers one EKS-optimized image. Callers hold s.mu.
func (s *Service) addEKSImage(e eksImage, created time.Time, published bool) *ec2.Image {
	root := "/dev/xvda"
	if e.Family == "bottlerocket" {
		root = "/dev/xvda" // Bottlerocket's OS volume; its data volume is /dev/xvdb
	}
	im := &ec2.Image{
		Seq: s.nextSeq(), ID: s.newID("ami"), Name: e.name(), Architecture: e.Arch,
		Description: e.description(), OwnerID: EKSImageOwner, OwnerAlias: "amazon", CreationDate: created,
		RootDeviceName: root, RootSnapshotID: s.newID("snap"), RootSizeGiB: 20, Published: published,
	}
	s.model.Images[im.ID] = im
	s.save(bucketImages, im.ID, im)
	return im
}

// PublishedImage is one image a release published.
type PublishedImage struct {
	ID                string    `json:"id"`
	Name              string    `json:"name"`
	Architecture      string    `json:"architecture"`
	KubernetesVersion string    `json:"kubernetesVersion"`
	CreationDate      time.Time `json:"creationDate"`
}

// PublishRelease publishes a new release of the EKS-optimized AL2023 AMIs, as AWS does every
// few weeks: for every Kubernetes version the account's images cover, one image per
// architecture and variant named amazon-eks-node-al2023-ARCH-VARIANT-K8S-vRELEASE, owned by
// amazon and created now (at least an hour after the newest existing image, so that it is
// the newest). release is "20261201"-shaped; "" means today's date, or the day after the
// newest release if that is not later. Publishing a release that exists is an error. Reset
// removes published releases again (the seeded ones stay).
func (s *Service) PublishRelease(release string) ([]PublishedImage, error) {
	now := s.acct.Now().UTC()
	s.mu.Lock()
	out, err := s.publishLocked(release, now)
	wait := s.flushLocked()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := <-wait; err != nil {
		return nil, fmt.Errorf("persisting the release: %w", err)
	}
	if err := s.PublishImageParameters(); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) publishLocked(release string, now time.Time) ([]PublishedImage, error) {
	var newest time.Time
	newestRelease := ""
	kinds := map[eksImage]bool{} // release-less: what to publish a release of
	for _, im := range s.model.Images {
		if im.OwnerID != EKSImageOwner {
			continue
		}
		if e, ok := parseEKSImage(im.Name); ok && e.Family == "al2023" {
			newestRelease = max(newestRelease, e.Release)
			if e.Release == release {
				return nil, fmt.Errorf("release v%s is already published (%s)", release, im.ID)
			}
			e.Release = ""
			kinds[e] = true
		}
		if im.CreationDate.After(newest) {
			newest = im.CreationDate
		}
	}
	created := now
	if !created.After(newest.Add(time.Hour)) {
		created = newest.Add(time.Hour)
	}
	if release == "" {
		release = created.Format("20060102")
		if last, err := time.Parse("20060102", newestRelease); err == nil && release <= newestRelease {
			release = last.AddDate(0, 0, 1).Format("20060102")
		}
	}
	if _, err := time.Parse("20060102", release); err != nil {
		return nil, fmt.Errorf("release %q: want a date like 20261201", release)
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("no EKS-optimized AL2023 images to publish a release of")
	}
	list := make([]eksImage, 0, len(kinds))
	for e := range kinds {
		e.Release = release
		list = append(list, e)
	}
	// Kubernetes minor, then standard before nvidia, then x86_64 before arm64.
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.K8s != b.K8s {
			return a.K8s < b.K8s
		}
		if a.Variant != b.Variant {
			return a.Variant > b.Variant
		}
		return a.Arch > b.Arch
	})
	var out []PublishedImage
	for _, e := range list {
		im := s.addEKSImage(e, created, true)
		out = append(out, PublishedImage{ID: im.ID, Name: im.Name, Architecture: e.Arch, KubernetesVersion: e.K8s, CreationDate: created})
	}
	s.saveMeta()
	return out, nil
}

// PublishImageParameters makes SSM's public EKS AMI parameters name the account's
// EKS-optimized images: at start, after a reset and whenever AWS publishes a release.
func (s *Service) PublishImageParameters() error {
	s.mu.RLock()
	var list []ssm.EKSImage
	for _, im := range s.model.Images {
		if im.OwnerID != EKSImageOwner {
			continue
		}
		if e, ok := parseEKSImage(im.Name); ok {
			list = append(list, ssm.EKSImage{Family: e.Family, Arch: e.Arch, Variant: e.Variant,
				KubernetesMinor: e.K8s, Release: e.Release, ImageID: im.ID})
		}
	}
	s.mu.RUnlock()
	if err := s.acct.PublishImages(list); err != nil {
		return fmt.Errorf("publishing the EKS AMI parameters: %w", err)
	}
	return nil
}
