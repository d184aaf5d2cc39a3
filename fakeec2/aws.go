package fakeec2

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// What AWS itself does to an account, outside any caller's API request: reclaiming spot
// capacity and publishing new EKS-optimized AMIs. The admin API triggers them (a lab stages
// them); they change state exactly as the real events would, and the audit trail records
// them the way CloudTrail does (a service identity, not an access key).

// AWSServiceCaller is the audit trail's caller of events EC2 causes itself (CloudTrail's
// AWSService identity, invoked by ec2.amazonaws.com).
const AWSServiceCaller = "ec2.amazonaws.com"

// Spot interruption, as DescribeInstances states its reason and CloudTrail names its event.
const (
	StateReasonSpotTermination = "Server.SpotInstanceTermination"
	ActionBidEvicted           = "BidEvictedEvent"
)

// InterruptSpot reclaims spot instances as EC2 does when it needs the capacity back: each
// goes shutting-down at once with state reason Server.SpotInstanceTermination, its billing
// stops, its DeleteOnTermination volumes and primary ENI go when it terminates, and the audit
// trail records one BidEvictedEvent by ec2.amazonaws.com per instance. The two-minute warning
// EC2 sends through EventBridge is not modelled (the lab has no EventBridge): the instance is
// simply gone. An instance that is unknown, not spot, or not pending or running is an error,
// and then nothing changes.
func (s *Server) InterruptSpot(ids []string) ([]AuditEvent, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("no instance to interrupt")
	}
	now := s.clock.Now()
	s.mu.Lock()
	s.advanceLocked(now)
	for _, id := range ids {
		in := s.instances[id]
		switch {
		case in == nil:
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s does not exist", id)
		case in.CapacityType != "spot":
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is %s: only spot instances are interrupted", id, in.CapacityType)
		case in.State != statePending && in.State != stateRunning:
			s.mu.Unlock()
			return nil, fmt.Errorf("instance %s is %s, not pending or running", id, in.State)
		}
	}
	var events []*AuditEvent
	for _, id := range ids {
		in := s.instances[id]
		in.State = stateShuttingDown
		in.TerminateRequestedAt = now
		in.TerminatedAt = now.Add(s.shutdownDelay)
		in.TransitionReason = fmt.Sprintf("Service initiated (%s)", now.UTC().Format("2006-01-02 15:04:05 GMT"))
		in.StateReasonCode = StateReasonSpotTermination
		in.StateReason = StateReasonSpotTermination + ": Spot instance termination"
		s.stopLedger(in.ID, now)
		s.save(bucketInstances, in.ID, in)
		s.scheduleDeadline(in)
		events = append(events, &AuditEvent{
			Time: now, Action: ActionBidEvicted, Caller: AWSServiceCaller, RequestID: s.ids.NewID(""),
			Parameters: map[string]string{"InstanceId.1": id, "SpotInstanceRequestId": in.SpotRequestID},
			Terminated: []string{id},
		})
	}
	s.advanceLocked(now) // a zero shutdown delay terminates at once
	wait := s.flushLocked()
	s.mu.Unlock()
	err := <-wait
	out := make([]AuditEvent, 0, len(events))
	for _, e := range events {
		if aerr := <-s.recordAudit(e); err == nil {
			err = aerr
		}
		out = append(out, *e)
	}
	if err != nil {
		return nil, fmt.Errorf("persisting the interruption: %w", err)
	}
	return out, nil
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
// few weeks: for every Kubernetes version the account's images cover, one x86_64 and one
// arm64 image named amazon-eks-node-al2023-ARCH-standard-K8S-vRELEASE, owned by amazon and
// created now (at least an hour after the newest existing image, so that it is the newest).
// release is "20261201"-shaped; "" means today's date, or the day after the newest release
// if that is not later. Publishing a release that exists is an error. Reset removes
// published releases again (the seeded ones stay).
func (s *Server) PublishRelease(release string) ([]PublishedImage, error) {
	now := s.clock.Now().UTC()
	s.mu.Lock()
	var newest time.Time
	newestRelease := ""
	versions := map[string]bool{}
	for _, im := range s.images {
		if im.OwnerID != EKSImageOwner {
			continue
		}
		if k8s, rel, ok := parseEKSName(im.Name); ok {
			versions[k8s] = true
			newestRelease = max(newestRelease, rel)
			if rel == release {
				s.mu.Unlock()
				return nil, fmt.Errorf("release v%s is already published (%s)", release, im.ID)
			}
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
		s.mu.Unlock()
		return nil, fmt.Errorf("release %q: want a date like 20261201", release)
	}
	k8sVersions := make([]string, 0, len(versions))
	for v := range versions {
		k8sVersions = append(k8sVersions, v)
	}
	sort.Strings(k8sVersions)
	var out []PublishedImage
	for _, k8s := range k8sVersions {
		for _, arch := range []string{"x86_64", "arm64"} {
			name := fmt.Sprintf("amazon-eks-node-al2023-%s-standard-%s-v%s", arch, k8s, release)
			for _, im := range s.images {
				if im.Name == name {
					s.mu.Unlock()
					return nil, fmt.Errorf("release v%s is already published (%s)", release, im.ID)
				}
			}
			im := &image{
				Seq: s.nextSeq(), ID: s.newID("ami"), Name: name, Architecture: arch,
				Description: fmt.Sprintf("EKS-optimized Kubernetes node based on Amazon Linux 2023, (k8s: %s, containerd: 2.1.*)", k8s),
				OwnerID:     EKSImageOwner, OwnerAlias: "amazon", CreationDate: created,
				RootDeviceName: "/dev/xvda", RootSnapshotID: s.newID("snap"), RootSizeGiB: 20, Published: true,
			}
			s.images[im.ID] = im
			s.save(bucketImages, im.ID, im)
			out = append(out, PublishedImage{ID: im.ID, Name: name, Architecture: arch, KubernetesVersion: k8s, CreationDate: created})
		}
	}
	if len(out) == 0 {
		s.mu.Unlock()
		return nil, fmt.Errorf("no EKS-optimized AL2023 images to publish a release of")
	}
	s.saveMeta()
	wait := s.flushLocked()
	s.mu.Unlock()
	if err := <-wait; err != nil {
		return nil, fmt.Errorf("persisting the release: %w", err)
	}
	return out, nil
}

// parseEKSName reads amazon-eks-node-al2023-ARCH-standard-K8S-vRELEASE.
func parseEKSName(name string) (k8s, release string, ok bool) {
	rest, found := strings.CutPrefix(name, "amazon-eks-node-al2023-")
	if !found {
		return "", "", false
	}
	_, rest, found = strings.Cut(rest, "-standard-")
	if !found {
		return "", "", false
	}
	k8s, release, found = strings.Cut(rest, "-v")
	return k8s, release, found
}

// removePublished drops the images PublishRelease added. Callers hold s.mu.
func (s *Server) removePublished() {
	for id, im := range s.images {
		if im.Published {
			delete(s.images, id)
			s.remove(bucketImages, id)
		}
	}
}

func (in *instance) stateReasonCode() string {
	if in.StateReasonCode != "" {
		return in.StateReasonCode
	}
	return "Client.UserInitiatedShutdown"
}

// shuttingDownReason is the state reason message while the instance shuts down.
func (in *instance) shuttingDownReason() string {
	if in.StateReasonCode != "" {
		return in.StateReason
	}
	return "Client.UserInitiatedShutdown: User initiated shutdown"
}
